"""PyTorch's checkpoint files (issue 23): files written by Debian's torch 1.13 load in rustytorch (zip and legacy
formats, state dicts, full training checkpoints, tied weights, strided views, every dtype) and give the same
values and model outputs; files rt.save writes load in torch; paths, open files and BytesIO; map_location;
the weights_only unpickler refuses hostile pickles by name and never runs them; corrupt files give clear errors."""
import collections
import io
import os
import pickle
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn  # noqa: F401
import rustytorch.optim  # noqa: F401
from conftest import to_numpy

torch = pytest.importorskip("torch")

PYTHONPATH = os.path.dirname(os.path.dirname(rt.__file__))


def assert_same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


# [Section] models: the same small CNN in both libraries

def torch_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.BatchNorm2d(4),
                               torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(4 * 3 * 3, 5))


def rt_cnn():
    return rt.nn.Sequential(rt.nn.Conv2d(1, 4, 3), rt.nn.ReLU(), rt.nn.BatchNorm2d(4), rt.nn.MaxPool2d(2),
                            rt.nn.Flatten(), rt.nn.Linear(4 * 3 * 3, 5))


def images(seed=1):
    return np.random.default_rng(seed).standard_normal((3, 1, 8, 8)).astype(np.float32)


def trained_torch_cnn():
    model = torch_cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        model(torch.from_numpy(images())).square().mean().backward()
        opt.step()
    return model, opt


# [Section] files written by torch load in rustytorch

@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_torch_cnn_state_dict_loads_and_gives_the_same_outputs(tmp_path, legacy):
    model, _ = trained_torch_cnn()
    model.eval()
    path = tmp_path / "cnn.pt"
    torch.save(model.state_dict(), path, _use_new_zipfile_serialization=not legacy)
    sd = rt.load(path)
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(model.state_dict())
    for key, value in model.state_dict().items():
        assert_same(sd[key], value)
    assert sd._metadata[""]["version"] == 1   # the state dict's metadata comes along, as in torch
    ours = rt_cnn()
    ours.load_state_dict(sd)
    ours.eval()
    x = images(seed=2)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(rt.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_torch_training_checkpoint_resumes_like_torch(tmp_path):
    model, opt = trained_torch_cnn()
    path = tmp_path / "ckpt.pth"
    torch.save({"epoch": 7, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "loss": torch.tensor(0.25), "best": 0.125, "tags": ("a", None, True)}, path)
    ckpt = rt.load(path, map_location="cpu")
    assert ckpt["epoch"] == 7 and ckpt["best"] == 0.125 and ckpt["tags"] == ("a", None, True)
    assert ckpt["loss"].item() == 0.25
    ours = rt_cnn()
    ours.load_state_dict(ckpt["model_state_dict"])
    ours_opt = rt.optim.Adam(ours.parameters(), lr=0.5)
    ours_opt.load_state_dict(ckpt["optimizer_state_dict"])
    assert ours_opt.param_groups[0]["lr"] == 1e-2 and ours_opt.param_groups[0]["betas"] == (0.9, 0.999)
    for _ in range(2):   # both continue from the checkpoint and stay together
        opt.zero_grad()
        model(torch.from_numpy(images(3))).square().mean().backward()
        opt.step()
        ours_opt.zero_grad()
        ours(rt.from_numpy(images(3))).square().mean().backward()
        ours_opt.step()
    for (name, p), q in zip(model.named_parameters(), ours.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_tied_weights_and_views_share_memory_after_loading(tmp_path, legacy):
    emb = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    base = torch.arange(24.0).reshape(4, 6)
    obj = {"emb.weight": emb.weight.detach(), "head.weight": head.weight.detach(), "base": base,
           "t": base.t(), "row": base[2], "every_other": base[:, ::2], "corner": base[1:3, 4:],
           "expanded": torch.tensor([1.0, 2.0]).expand(3, 2), "scalar": base[3, 5], "empty": base[:0]}
    path = tmp_path / "shared.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    back = rt.load(path)
    for key, value in obj.items():
        assert_same(back[key], value)
        assert back[key].stride() == value.stride(), key
    back["emb.weight"][0, 0] = 42.0
    assert back["head.weight"][0, 0].item() == 42.0
    back["base"][2, 4] = -1.0
    assert back["t"][4, 2].item() == -1.0 and back["row"][4].item() == -1.0
    assert back["every_other"][2, 2].item() == -1.0 and back["corner"][1, 0].item() == -1.0


def test_legacy_storage_views_load(tmp_path):
    """Pre-1.0 files could hold storage views: (view_key, offset, size) in the persistent id."""
    pickled = pickle_with_storages({"w": RawTensor(Storage("v", numel=8, view=("v1", 2, 4)), 1, (2,), (1,))},
                                   legacy=True)
    data = legacy_file(pickled, {"v": np.arange(8, dtype=np.float32)})
    assert rt.load(io.BytesIO(data))["w"].tolist() == [3.0, 4.0]


DTYPES = ["float32", "float64", "float16", "bfloat16", "bool", "uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", DTYPES)
def test_each_dtype_written_by_torch(tmp_path, name):
    dtype = getattr(torch, name)
    values = torch.tensor([[0, 1, -2], [3, 100, -128]]).to(dtype) if name != "bool" else torch.tensor([True, False])
    path = tmp_path / "t.pt"
    torch.save({"x": values, "x_t": values.t() if values.dim() == 2 else values}, path)
    if getattr(rt, name, None) is None:   # the engine lacks int8/int16: refused, naming the dtype
        with pytest.raises(pickle.UnpicklingError, match=f"torch.{name}.*rustytorch does not support"):
            rt.load(path)
        return
    back = rt.load(path)
    assert_same(back["x"], values)
    assert_same(back["x_t"], values.t() if values.dim() == 2 else values)


def test_unsupported_dtypes_are_refused_by_name(tmp_path):
    torch.save({"z": torch.zeros(2, dtype=torch.complex64)}, tmp_path / "c.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"ComplexFloatStorage \(complex64\).*supported dtypes"):
        rt.load(tmp_path / "c.pt")
    torch.save({"q": torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)}, tmp_path / "q.pt")
    with pytest.raises(pickle.UnpicklingError, match="rustytorch does not support"):
        rt.load(tmp_path / "q.pt")


def test_parameters_dtypes_sizes_devices_and_attributes(tmp_path):
    t = torch.ones(2, requires_grad=True)
    obj = {"p": torch.nn.Parameter(torch.ones(2)), "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False),
           "leaf": t, "dtype": torch.float16, "size": torch.Size([2, 3]), "device": torch.device("cpu"),
           "set": {1, 2}, "bytes": b"\x00\xff", "od": collections.OrderedDict(a=1)}
    torch.save(obj, tmp_path / "misc.pt")
    back = rt.load(tmp_path / "misc.pt")
    assert isinstance(back["p"], rt.nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], rt.nn.Parameter) and not back["frozen"].requires_grad
    assert back["leaf"].requires_grad and not isinstance(back["leaf"], rt.nn.Parameter)
    assert back["dtype"] is rt.float16 and back["size"] == rt.Size([2, 3]) and isinstance(back["size"], rt.Size)
    assert back["device"] == rt.device("cpu")
    assert back["set"] == {1, 2} and back["bytes"] == b"\x00\xff" and back["od"] == {"a": 1}


def test_rt_load_does_not_import_torch(tmp_path):
    model, opt = trained_torch_cnn()
    torch.save({"m": model.state_dict(), "o": opt.state_dict()}, tmp_path / "a.pt")
    torch.save(model.state_dict(), tmp_path / "b.pt", _use_new_zipfile_serialization=False)
    code = ("import sys, rustytorch as rt\n"
            f"a = rt.load({str(tmp_path / 'a.pt')!r}); b = rt.load({str(tmp_path / 'b.pt')!r})\n"
            "assert 'torch' not in sys.modules, 'rt.load imported torch'\n"
            "print(len(a['m']), len(b))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": PYTHONPATH})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(model.state_dict()))] * 2


# [Section] files rustytorch writes load in torch

def rt_trained_cnn():
    rt.manual_seed(0)
    model = rt_cnn()
    opt = rt.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        model(rt.from_numpy(images())).square().mean().backward()
        opt.step()
    return model, opt


@pytest.mark.parametrize("suffix,legacy", [(".pt", None), (".pth", None), (".ckpt", None), (".bin", False)])
def test_our_state_dict_loads_in_torch_with_the_same_outputs(tmp_path, suffix, legacy):
    model, _ = rt_trained_cnn()
    model.eval()
    path = tmp_path / ("cnn" + suffix)
    rt.save(model.state_dict(), path, _use_new_zipfile_serialization=legacy)
    assert zipfile.is_zipfile(path) == (legacy is None)
    sd = torch.load(path, weights_only=True)
    assert list(sd) == list(model.state_dict())
    for key, value in model.state_dict().items():
        assert_same(value, sd[key])
    theirs = torch_cnn()
    theirs.load_state_dict(sd)
    theirs.eval()
    x = images(seed=5)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(rt.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert rt.load(path).keys() == model.state_dict().keys()


def test_our_training_checkpoint_resumes_in_torch(tmp_path):
    model, opt = rt_trained_cnn()
    path = tmp_path / "ckpt.pt"
    rt.save({"epoch": 3, "model": model.state_dict(), "optim": opt.state_dict(), "loss": 0.5}, path)
    ckpt = torch.load(path)   # torch 1.13's weights_only reader has no BINFLOAT opcode, so no floats there
    assert ckpt["epoch"] == 3 and ckpt["loss"] == 0.5
    theirs = torch_cnn()
    theirs.load_state_dict(ckpt["model"])
    their_opt = torch.optim.Adam(theirs.parameters())
    their_opt.load_state_dict(ckpt["optim"])
    for _ in range(2):
        opt.zero_grad()
        model(rt.from_numpy(images(3))).square().mean().backward()
        opt.step()
        their_opt.zero_grad()
        theirs(torch.from_numpy(images(3))).square().mean().backward()
        their_opt.step()
    for (name, p), q in zip(theirs.named_parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("legacy", [None, False], ids=["zip", "legacy"])
def test_our_dtypes_parameters_and_shared_views_load_in_torch(tmp_path, legacy):
    base = rt.arange(12.0).reshape(3, 4)
    weight = rt.nn.Parameter(rt.randn(3, 2))
    obj = {"base": base, "t": base.t(), "row": base[1], "col": base[:, 2], "weight": weight, "tied": weight,
           "grad_leaf": rt.ones(2).requires_grad_(), "frozen": rt.nn.Parameter(rt.ones(1), requires_grad=False),
           "dtype": rt.bfloat16, "size": rt.Size([4]), "device": rt.device("cpu"), "scalar": rt.tensor(2.5),
           "empty": rt.zeros(0, 3), "nested": [(1, "a"), {"k": None}]}
    for name in DTYPES:
        if getattr(rt, name, None) is not None:
            obj[name] = rt.tensor([[0, 1, 2], [3, 4, 5]]).to(getattr(rt, name))
    path = tmp_path / "all.pt"
    rt.save(obj, path, _use_new_zipfile_serialization=legacy)
    theirs = torch.load(path)
    for key, value in obj.items():
        if isinstance(value, rt.Tensor):
            assert_same(value, theirs[key])
            assert theirs[key].stride() == value.stride(), key
    assert isinstance(theirs["weight"], torch.nn.Parameter) and theirs["weight"] is theirs["tied"]
    assert not theirs["frozen"].requires_grad and theirs["grad_leaf"].requires_grad
    assert theirs["dtype"] is torch.bfloat16 and theirs["size"] == torch.Size([4])
    assert theirs["device"] == torch.device("cpu") and theirs["nested"] == [(1, "a"), {"k": None}]
    theirs["base"][1, 2] = 100.0   # views of one tensor are written as views of one storage
    assert theirs["t"][2, 1].item() == 100.0 and theirs["row"][2].item() == 100.0 and theirs["col"][1] == 100.0


def test_a_pytorch_file_round_trips_through_rustytorch_keeping_shared_storages(tmp_path):
    emb = torch.nn.Embedding(4, 2)
    torch.save({"a": emb.weight.detach(), "b": emb.weight.detach()[1:]}, tmp_path / "in.pt")
    rt.save(rt.load(tmp_path / "in.pt"), tmp_path / "out.pt")
    back = torch.load(tmp_path / "out.pt")
    assert_same(rt.load(tmp_path / "out.pt")["b"], emb.weight.detach()[1:])
    assert back["b"].storage().data_ptr() == back["a"].storage().data_ptr() and back["b"].storage_offset() == 2


def test_zip_records_are_stored_and_64_byte_aligned(tmp_path):
    rt.save({"a": rt.ones(3), "b": rt.zeros(5, dtype=rt.float64)}, tmp_path / "x.pt")
    raw = (tmp_path / "x.pt").read_bytes()
    with zipfile.ZipFile(tmp_path / "x.pt") as zf:
        names = zf.namelist()
        assert names[0] == "archive/data.pkl" and "archive/version" in names and "archive/data/1" in names
        assert zf.read("archive/version") == b"3\n" and zf.read("archive/byteorder") == b"little"
        for info in zf.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


# [Section] paths, file objects and the format rule

def test_file_objects_and_bytesio(tmp_path):
    sd = {"w": rt.arange(6.0).reshape(2, 3), "b": rt.ones(2)}
    buffer = io.BytesIO()
    rt.save(sd, buffer)
    buffer.seek(0)
    assert torch.load(buffer)["w"].tolist() == sd["w"].tolist()
    buffer.seek(0)
    assert rt.load(buffer)["w"].tolist() == sd["w"].tolist()
    with open(tmp_path / "f.weights", "wb") as f:
        rt.save(sd, f)
    with open(tmp_path / "f.weights", "rb") as f:
        assert rt.load(f)["b"].tolist() == [1.0, 1.0]

    class WriteOnly:   # e.g. a pipe or a socket: no seek
        def __init__(self):
            self.chunks = []

        def write(self, data):
            self.chunks.append(bytes(data))

    sink = WriteOnly()
    rt.save(sd, sink)
    assert torch.load(io.BytesIO(b"".join(sink.chunks)))["b"].tolist() == [1.0, 1.0]
    legacy = io.BytesIO()
    rt.save(sd, legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    assert torch.load(legacy)["w"].tolist() == sd["w"].tolist()
    theirs = io.BytesIO()
    torch.save({"x": torch.ones(2)}, theirs)
    theirs.seek(0)
    assert rt.load(theirs)["x"].tolist() == [1.0, 1.0]
    with open(tmp_path / "f.weights", "r") as text:
        with pytest.raises(TypeError, match="binary mode"):
            rt.load(text)


def test_format_follows_the_suffix_and_the_explicit_option(tmp_path):
    sd = {"w": rt.ones(2)}
    for name in ("a.pt", "a.pth", "a.ckpt", "a.pth.tar"):
        rt.save(sd, tmp_path / name)
        assert zipfile.is_zipfile(tmp_path / name), name
    for name in ("a.safetensors", "plain"):
        rt.save(sd, tmp_path / name)
        assert (tmp_path / name).read_bytes()[8:9] == b"{", name   # safetensors, as before
        assert rt.load(tmp_path / name)["w"].tolist() == [1.0, 1.0]
    rt.save(sd, tmp_path / "forced.safetensors", _use_new_zipfile_serialization=True)
    assert zipfile.is_zipfile(tmp_path / "forced.safetensors")
    rt.save(sd, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    assert (tmp_path / "legacy.pt").read_bytes()[:3] == b"\x80\x02\x8a"
    rt.save({"cfg": object.__new__(Config)}, tmp_path / "any.pt")   # PyTorch's format stores any picklable
    (tmp_path / "keep.pt").write_bytes(b"previous checkpoint")
    with pytest.raises((pickle.PicklingError, AttributeError)):
        rt.save({"w": rt.ones(1), "fn": lambda x: x}, tmp_path / "keep.pt")
    assert (tmp_path / "keep.pt").read_bytes() == b"previous checkpoint"   # a failed save leaves the file alone
    with open(tmp_path / "a.safetensors", "rb") as f:
        assert rt.load(f, map_location="cpu")["w"].tolist() == [1.0, 1.0]   # safetensors from a file object
    with pytest.raises(ValueError, match="pickle_protocol applies to PyTorch's format"):
        rt.save(sd, tmp_path / "x.safetensors", pickle_protocol=4)
    rt.save(sd, tmp_path / "p4.pt", pickle_protocol=4)
    assert torch.load(tmp_path / "p4.pt")["w"].tolist() == [1.0, 1.0] and rt.load(tmp_path / "p4.pt")["w"].sum() == 2
    with pytest.raises(ValueError, match="pickle_protocol must be an int from 2"):
        rt.save(sd, tmp_path / "x.pt", pickle_protocol=1)
    import json
    with pytest.raises(NotImplementedError, match="pickle_module=json"):
        rt.save(sd, tmp_path / "x.pt", pickle_module=json)
    with pytest.raises(NotImplementedError, match="mmap=True"):
        rt.load(tmp_path / "a.pt", mmap=True)


# [Section] map_location

def test_map_location_forms(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "cpu.pt")
    for loc in ("cpu", rt.device("cpu"), {"cpu": "cpu"}, None):
        assert rt.load(tmp_path / "cpu.pt", map_location=loc)["w"].device == rt.device("cpu")
    seen = []
    w = rt.load(tmp_path / "cpu.pt", map_location=lambda storage, loc: seen.append((storage.tolist(), loc)))["w"]
    assert seen == [([1.0, 1.0], "cpu")] and w.tolist() == [1.0, 1.0]
    assert rt.load(tmp_path / "cpu.pt", map_location=lambda s, loc: s)["w"].device.type == "cpu"
    with pytest.raises(TypeError, match="map_location callable returned int"):
        rt.load(tmp_path / "cpu.pt", map_location=lambda s, loc: 3)
    with pytest.raises(ValueError, match="'meta' is not a device"):
        rt.load(tmp_path / "cpu.pt", map_location="meta")
    rt.save({"w": rt.ones(2)}, tmp_path / "ours.safetensors")   # safetensors files take map_location too
    assert rt.load(tmp_path / "ours.safetensors", map_location={"cpu": "cpu"})["w"].device.type == "cpu"


def test_cuda_tensors_map_to_cpu_or_fail_clearly():
    pickled = pickle_with_storages({"w": RawTensor(Storage("0", numel=2, location="cuda:0"), 0, (2,), (1,))})
    data = zip_file(pickled, {"0": np.array([1.5, 2.5], np.float32)})
    for loc in ("cpu", {"cuda:0": "cpu"}, lambda storage, location: storage):
        w = rt.load(io.BytesIO(data), map_location=loc)["w"]
        assert w.device.type == "cpu" and w.tolist() == [1.5, 2.5]
    if rt.cuda.is_available():
        assert rt.load(io.BytesIO(data))["w"].device.type == "cuda"
    else:
        with pytest.raises(RuntimeError, match="'cuda:0', but CUDA is not available.*map_location='cpu'"):
            rt.load(io.BytesIO(data))


def test_big_endian_records_are_swapped():
    pickled = pickle_with_storages({"w": RawTensor(Storage("0", numel=2), 0, (2,), (1,))})
    data = zip_file(pickled, {"0": np.array([1.5, -2.0], ">f4")}, byteorder=b"big")
    assert rt.load(io.BytesIO(data))["w"].tolist() == [1.5, -2.0]


# [Section] weights_only: hostile pickles are refused by name and never run

class Config:
    """A user class in a checkpoint: refused by default, allowed with add_safe_globals."""

    def __init__(self, lr=0.1):
        self.lr = lr


class SystemCall:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"echo ran >> {self.marker}",))


class EvalCall(SystemCall):
    def __reduce__(self):
        return (eval, (f"__import__('os').system('echo ran >> {self.marker}')",))


def hostile_pickles(marker):
    code = f"__import__('os').system('echo ran >> {marker}')"
    yield "os.system via __reduce__", pickle.dumps({"w": SystemCall(marker)}, protocol=2), "posix.system"
    yield "eval via __reduce__", pickle.dumps({"w": EvalCall(marker)}, protocol=2), "builtins.eval"
    yield "eval via STACK_GLOBAL", pickle.dumps(EvalCall(marker), protocol=4), "builtins.eval"
    yield "GLOBAL builtins.eval", b"cbuiltins\neval\n(V" + code.encode() + b"\ntR.", "builtins.eval"
    yield "INST builtins.eval", b"(V" + code.encode() + b"\nibuiltins\neval\n.", "builtins.eval"
    yield "GLOBAL __builtin__.eval", b"c__builtin__\neval\n(V" + code.encode() + b"\ntR.", "builtins.eval"


@pytest.mark.parametrize("where", ["zip", "legacy", "legacy-header"])
def test_hostile_pickles_are_refused_and_never_run(tmp_path, where):
    marker = tmp_path / "marker"
    for what, payload, name in hostile_pickles(marker):
        if where == "zip":
            data = zip_file(payload, {})
        elif where == "legacy":
            data = legacy_file(payload, {})
        else:   # the payload in place of the protocol version pickle
            magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
            data = magic + payload + legacy_file(pickle.dumps([], protocol=2), {})[len(magic) + 3:]
        with pytest.raises(pickle.UnpicklingError, match=rf"refused global '{name}'.*weights_only=False only for "
                                                         r"files you trust.*add_safe_globals"):
            rt.load(io.BytesIO(data))
        assert not marker.exists(), what


def test_extension_codes_go_through_the_allowlist(tmp_path):
    import copyreg
    marker = tmp_path / "marker"
    copyreg.add_extension("posix", "system", 240)
    try:
        payload = b"\x80\x02\x82\xf0X" + struct.pack("<I", len(f"touch {marker}")) + f"touch {marker}".encode()
        with pytest.raises(pickle.UnpicklingError, match="refused global 'posix.system'"):
            rt.load(io.BytesIO(zip_file(payload + b"\x85R.", {})))
    finally:
        copyreg.remove_extension("posix", "system", 240)
    assert not marker.exists()


def test_torch_saved_hostile_object_is_refused_and_weights_only_false_runs_it_once(tmp_path):
    marker = tmp_path / "marker"
    torch.save({"w": torch.ones(2), "evil": SystemCall(marker)}, tmp_path / "evil.pt")
    torch.save({"w": torch.ones(2), "evil": SystemCall(marker)}, tmp_path / "evil_legacy.pt",
               _use_new_zipfile_serialization=False)
    for name in ("evil.pt", "evil_legacy.pt"):
        with pytest.raises(pickle.UnpicklingError, match="refused global 'posix.system'"):
            rt.load(tmp_path / name)
        assert not marker.exists()
    # the control: the same files do run the payload when the user opts out, and exactly once (the legacy
    # reader's first pass over the pickle runs nothing)
    for name in ("evil.pt", "evil_legacy.pt"):
        assert rt.load(tmp_path / name, weights_only=False)["evil"] == 0
    assert marker.read_text().splitlines() == ["ran", "ran"]


def test_add_safe_globals_allows_named_classes(tmp_path):
    torch.save({"cfg": Config(0.5), "w": torch.ones(1)}, tmp_path / "cfg.pt")
    with pytest.raises(pickle.UnpicklingError, match=rf"refused global '{__name__}.Config'"):
        rt.load(tmp_path / "cfg.pt")
    with rt.serialization.safe_globals([Config]):
        assert rt.load(tmp_path / "cfg.pt")["cfg"].lr == 0.5
    assert rt.serialization.get_safe_globals() == []
    rt.serialization.add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert rt.serialization.get_safe_globals() == [Config]
        assert rt.load(tmp_path / "cfg.pt")["cfg"].lr == 0.5
    finally:
        rt.serialization.clear_safe_globals()
    assert rt.load(tmp_path / "cfg.pt", weights_only=False)["cfg"].lr == 0.5
    with pytest.raises(TypeError, match="list of globals"):
        rt.serialization.add_safe_globals(Config)


def test_whole_pytorch_modules_are_refused_even_when_trusted(tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "model.pt")
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError, match=r"PyTorch object 'torch.nn.modules.linear.Linear'.*"
                                                         r"state_dict"):
            rt.load(tmp_path / "model.pt", weights_only=weights_only)


def test_codecs_encode_only_serves_bytes():
    payload = b"\x80\x02c_codecs\nencode\nX\x03\x00\x00\x00abcX\x06\x00\x00\x00rot_13\x86R."
    with pytest.raises(pickle.UnpicklingError, match="only the latin1 form"):
        rt.load(io.BytesIO(zip_file(payload, {})))


# [Section] corrupt files

def torch_zip_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def rezip(data, drop=(), replace=None):
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            if not name.endswith(drop or ("\0",)):
                dst.writestr(name, (replace or {}).get(name.split("/", 1)[1], src.read(name)))
    return out.getvalue()


def test_corrupt_files_give_clear_errors(tmp_path):
    good = torch_zip_bytes({"w": torch.arange(4.0)})
    top = zipfile.ZipFile(io.BytesIO(good)).namelist()[0].split("/")[0]
    cases = [
        (good[:len(good) // 2], RuntimeError, "not a complete zip archive"),
        (rezip(good, drop=("data/0",)), RuntimeError, f"no '{top}/data/0' record"),
        (rezip(good, replace={"data/0": b"\0" * 12}), ValueError, "has 12 bytes, but the file says it holds 4"),
        (rezip(good, replace={"data.pkl": b"\x80\x02\xff."}), pickle.UnpicklingError, "pickle is damaged"),
        (rezip(good, replace={"data.pkl": good[:0] + b"\x80\x02}q\x00(X"}), pickle.UnpicklingError,
         "damaged"),
        (rezip(good, drop=("version",)), RuntimeError, "no '.*version' record"),
        (zip_file(b"\x80\x02N.", {}, name="other.txt"), RuntimeError, "without a '<folder>/data.pkl'"),
        (b"", RuntimeError, "is empty"),
        (b"hello, world", RuntimeError, "not a checkpoint rustytorch knows"),
    ]
    flipped = bytearray(good)   # a flipped byte in a stored record: its CRC no longer matches
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        info = zf.getinfo(f"{top}/data/0")
    name_len, extra_len = struct.unpack("<HH", good[info.header_offset + 26:info.header_offset + 30])
    flipped[info.header_offset + 30 + name_len + extra_len + 1] ^= 0xFF
    cases.append((bytes(flipped), RuntimeError, "is damaged"))
    for data, error, message in cases:
        with pytest.raises(error, match=message):
            rt.load(io.BytesIO(data))
    (tmp_path / "cut.pt").write_bytes(good[:100])
    with pytest.raises(RuntimeError, match="'.*cut.pt' is not a complete zip archive"):
        rt.load(tmp_path / "cut.pt")


@pytest.mark.parametrize("offset,size,stride,message", [
    (0, (5,), (1,), "needs 5 elements but its storage holds 4"),
    (3, (2,), (1,), "needs 5 elements"),
    (0, (2, 2), (3, 1), "needs 5 elements"),
    (0, (2,), (-1,), "negative size or stride"),
    (0, (2, 2), (1,), "differ in length"),
    (-1, (1,), (1,), "storage offset -1"),
    (0, "ab", (1,), "not a tuple of ints"),
    (0, (1,), (1 << 70,), "too large to address"),
])
def test_views_outside_their_storage_are_refused(offset, size, stride, message):
    pickled = pickle_with_storages({"w": RawTensor(Storage("0", numel=4), offset, size, stride)})
    with pytest.raises(ValueError, match=message):
        rt.load(io.BytesIO(zip_file(pickled, {"0": np.arange(4, dtype=np.float32)})))


def test_corrupt_legacy_files_give_clear_errors(tmp_path):
    buffer = io.BytesIO()
    torch.save({"w": torch.arange(4.0)}, buffer, _use_new_zipfile_serialization=False)
    good = buffer.getvalue()
    assert rt.load(io.BytesIO(good))["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="ends before storage|truncated"):
        rt.load(io.BytesIO(good[:-16 - 8]))
    with pytest.raises(ValueError, match="has 12 bytes"):
        rt.load(io.BytesIO(good[:-4]))
    magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
    with pytest.raises(RuntimeError, match="not PyTorch's magic number"):
        rt.load(io.BytesIO(pickle.dumps(0x1950a86a20f9469cfc6d, protocol=2) + good[len(magic):]))
    with pytest.raises(pickle.UnpicklingError, match="damaged"):
        rt.load(io.BytesIO(good[:len(magic) + 5]))
    pickled = pickle_with_storages({"w": RawTensor(Storage("0", numel=4), 0, (4,), (1,))}, legacy=True)
    with pytest.raises(RuntimeError, match=r"uses storages \['0'\] that the file does not hold"):
        rt.load(io.BytesIO(legacy_file(pickled, {})))


def test_torchscript_and_tar_archives_are_named():
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buffer)
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        rt.load(io.BytesIO(buffer.getvalue()))
    tar = bytearray(1024)
    tar[257:262] = b"ustar"
    with pytest.raises(RuntimeError, match="pre-1.0 tar checkpoint format"):
        rt.load(io.BytesIO(bytes(tar)))


def test_backward_hooks_in_old_files_are_registered():
    hooks = collections.OrderedDict([(0, double_grad)])
    pickled = pickle_with_storages({"w": RawTensor(Storage("0", numel=2), 0, (2,), (1,), True, hooks)})
    w = rt.load(io.BytesIO(zip_file(pickled, {"0": np.ones(2, np.float32)})), weights_only=False)["w"]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]


def double_grad(grad):
    return grad * 2


def test_torch_2_rebuild_forms():
    """Newer torch writes tensors with Python attributes through _rebuild_from_type_v2 and Parameters with
    state through _rebuild_parameter_with_state (absent from 1.13: its name is patched into the pickle)."""
    tagged = FromType(RawTensor(Storage("0", numel=2), 0, (2,), (1,)).args, torch.Tensor, {"note": "kept"})
    param = FromType(RawTensor(Storage("0", numel=2), 0, (2,), (1,)).args, torch.nn.Parameter, None)
    with_state = WithState(RawTensor(Storage("0", numel=2), 0, (2,), (1,)), {"tag": 7})
    pickled = pickle_with_storages({"tagged": tagged, "param": param, "with_state": with_state})
    pickled = pickled.replace(b"_rebuild_parameter\n", b"_rebuild_parameter_with_state\n")
    back = rt.load(io.BytesIO(zip_file(pickled, {"0": np.array([1.0, 2.0], np.float32)})))
    assert back["tagged"].note == "kept" and back["tagged"].tolist() == [1.0, 2.0]
    assert isinstance(back["param"], rt.nn.Parameter)
    assert isinstance(back["with_state"], rt.nn.Parameter) and back["with_state"].tag == 7
    back["tagged"][0] = 5.0
    assert back["param"][0].item() == 5.0


# [Section] hand-made files (built with pickle and zipfile, as torch lays them out)

class Storage:
    def __init__(self, key, numel, location="cpu", storage_type=None, view=None):
        self.key, self.numel, self.location, self.view = key, numel, location, view
        self.storage_type = storage_type or torch.FloatStorage


class RawTensor:
    def __init__(self, storage, offset, size, stride, requires_grad=False, hooks=None):
        self.args = (storage, offset, size, stride, requires_grad, hooks or collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class FromType:
    def __init__(self, args, cls, state):
        self.args, self.cls, self.state = args, cls, state

    def __reduce__(self):
        return (torch._tensor._rebuild_from_type_v2, (torch._utils._rebuild_tensor_v2, self.cls, self.args, self.state))


class WithState:
    def __init__(self, tensor, state):
        self.tensor, self.state = tensor, state

    def __reduce__(self):
        return (torch._utils._rebuild_parameter, (self.tensor, True, collections.OrderedDict(), self.state))


def pickle_with_storages(obj, legacy=False):
    class Pickler(pickle.Pickler):
        def persistent_id(self, o):
            if not isinstance(o, Storage):
                return None
            pid = ("storage", o.storage_type, o.key, o.location, o.numel)
            return pid + (o.view,) if legacy else pid

    buffer = io.BytesIO()
    Pickler(buffer, protocol=2).dump(obj)
    return buffer.getvalue()


def zip_file(pickled, records, name="data.pkl", byteorder=None):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(f"archive/{name}", pickled)
        if byteorder is not None:
            zf.writestr("archive/byteorder", byteorder)
        for key, array in records.items():
            zf.writestr(f"archive/data/{key}", array.tobytes())
        zf.writestr("archive/version", b"3\n")
    return out.getvalue()


def legacy_file(pickled, records):
    out = io.BytesIO()
    for header in (0x1950a86a20f9469cfc6c, 1001, {"protocol_version": 1001, "little_endian": True}):
        pickle.dump(header, out, protocol=2)
    out.write(pickled)
    pickle.dump(list(records), out, protocol=2)
    for array in records.values():
        out.write(struct.pack("<q", array.size) + array.tobytes())
    return out.getvalue()
