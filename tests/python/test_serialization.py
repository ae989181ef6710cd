"""rt.save / rt.load: safetensors files that other readers understand, state dicts as-is, nested
checkpoints restored with their structure, and clear errors."""
import json
import struct

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn  # noqa: F401  (until rustytorch/__init__ imports them)
import rustytorch.optim  # noqa: F401
from rustytorch.serialization import load, save

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path):
    """An independent reader written from the format spec: u64 LE header length, JSON header, data."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return out, meta


def test_state_dict_is_stored_under_its_own_keys(tmp_path):
    model = rt.nn.Sequential(rt.nn.Linear(4, 3), rt.nn.BatchNorm1d(3))
    path = tmp_path / "model.safetensors"
    save(model.state_dict(), path)
    tensors, meta = read_safetensors(path)
    assert sorted(tensors) == sorted(model.state_dict().keys())
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(tensors[key], value.numpy())
    assert all(isinstance(v, str) for v in meta.values())
    loaded = load(str(path))
    assert list(loaded.keys()) == list(model.state_dict().keys())
    fresh = rt.nn.Sequential(rt.nn.Linear(4, 3), rt.nn.BatchNorm1d(3))
    fresh.load_state_dict(loaded)
    np.testing.assert_array_equal(fresh[0].weight.detach().numpy(), model[0].weight.detach().numpy())


def test_nested_checkpoint_round_trips(tmp_path):
    model = rt.nn.Linear(3, 2)
    opt = rt.optim.Adam(model.parameters(), lr=1e-3)
    model(rt.randn(5, 3)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3, "best": float("inf"),
            "history": [0.5, 0.25], "note": "run-1", "flags": (True, None), 7: "int key"}
    path = tmp_path / "ckpt.safetensors"
    save(ckpt, path)
    back = load(path)
    assert back["epoch"] == 3 and back["best"] == float("inf") and back["history"] == [0.5, 0.25]
    assert back["note"] == "run-1" and back["flags"] == (True, None) and back[7] == "int key"
    assert back["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert back["optim"]["param_groups"][0]["params"] == [0, 1]
    assert sorted(back["optim"]["state"].keys()) == [0, 1]
    np.testing.assert_array_equal(back["optim"]["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())
    tensors, _ = read_safetensors(path)
    assert "optim.state.0.exp_avg" in tensors and "model.weight" in tensors
    opt2 = rt.optim.Adam(rt.nn.Linear(3, 2).parameters())
    opt2.load_state_dict(back["optim"])
    assert opt2.param_groups[0]["lr"] == 1e-3


def test_shared_tensors_and_parameters_are_restored(tmp_path):
    t = rt.ones(2)
    p = rt.nn.Parameter(rt.zeros(3))
    save({"a": [t, t], "p": p, "frozen": rt.nn.Parameter(rt.zeros(1), requires_grad=False)}, tmp_path / "x")
    back = load(tmp_path / "x")
    assert back["a"][0] is back["a"][1]
    assert isinstance(back["p"], rt.nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], rt.nn.Parameter) and not back["frozen"].requires_grad
    assert len(read_safetensors(tmp_path / "x")[0]) == 3


def test_unsupported_objects_and_paths_give_clear_errors(tmp_path):
    with pytest.raises(TypeError, match=r"cannot store an object of type object \(at 'cfg.x'\); supported"):
        save({"cfg": {"x": object()}}, tmp_path / "bad")
    with pytest.raises(TypeError, match="dict key"):
        save({(1, 2): 3}, tmp_path / "bad")
    with pytest.raises(TypeError, match="file path or a binary file object"):
        save({}, 42)
    with open(tmp_path / "f", "wb") as f:   # file objects get PyTorch's format (tests/python/test_torch_checkpoint.py)
        save({"n": 1}, f)
    assert load(tmp_path / "f") == {"n": 1}
    with pytest.raises(FileNotFoundError, match="no such file"):
        load(tmp_path / "missing.safetensors")
    (tmp_path / "junk").write_bytes(b"abc")
    with pytest.raises(Exception):
        load(tmp_path / "junk")


def test_foreign_safetensors_file_loads_as_flat_dict(tmp_path):
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    header += b" " * (-len(header) % 8)
    path = tmp_path / "foreign.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + np.array([1.5, 2.5], np.float32).tobytes())
    back = load(path)
    assert list(back) == ["w"] and back["w"].tolist() == [1.5, 2.5]
