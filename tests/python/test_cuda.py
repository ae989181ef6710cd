"""rt.cuda, rt.backends.cuda, Tensor.to/cuda/cpu and Module.to/cuda/cpu.

Without a usable GPU (this machine): what is reported, and that everything needing a device fails
with RuntimeError naming why and leaves tensors and modules unchanged. With one (scripts/gpu-check.sh
on an H200, or the CUDA emulator's build-cuda-emulated/ in scripts/test.sh) the tests marked
`needs_gpu` run: round trips, ops against the CPU, memory counters, events and a training step.

[SECTION] index (search for "# ---- <name>"):
  queries          is_built/is_available/device_count and the reasons given without a GPU
  tensors          .to/.cuda/.cpu of tensors without a GPU
  modules          Module.to/cuda/cpu without a GPU
  with a GPU       round trips, ops against the CPU, memory counters, events, a training step
  mixed precision  autocast op dtypes, float16 training with GradScaler, a custom Function with custom_fwd/bwd
  indexing         x[idx], x[mask], x[idx] = v, gather/scatter_add/index_select
  reductions       losses and pooling composed of kernels
  streams          pools, current stream per thread, side streams, events
  pinned memory    pin_memory, non_blocking copies, DataLoader(pin_memory=True)"""
import gc
import re

import numpy as np
import pytest

import rustytorch as rt
from rustytorch import nn

HAS_GPU = rt.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason=rt.cuda.unavailable_reason() or "a CUDA device is usable")
without_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour when no CUDA device is usable")
REASON = re.escape(rt.cuda.unavailable_reason())


def engine_links_cublas():
    """Whether cuBLAS, or the CUDA emulator that stands in for it (RT_CUDA=EMULATED), is loaded in
    this process: only the CUDA backend of rt_engine links them (the profiler's CUPTI collector
    loads the CUDA runtime, so libcudart says nothing)."""
    with open("/proc/self/maps") as maps:
        loaded = maps.read()
    return "libcublas" in loaded or "librt_cuda_emulator" in loaded


# ---- queries -------------------------------------------------------------------------------
def test_is_built_reflects_the_build():
    assert rt.cuda.is_built() is engine_links_cublas()
    assert rt.backends.cuda.is_built() is rt.cuda.is_built()
    version = rt.cuda._cuda.version_string()
    if rt.cuda.is_built():
        assert re.match(r"CUDA \d+\.\d+ \(runtime\), (driver \d+\.\d+|no driver)$", version), version
    else:
        assert version == "not built"


@without_gpu
def test_nothing_is_available_and_the_reason_says_why():
    assert rt.cuda.is_available() is False and rt.cuda.device_count() == 0
    reason = rt.cuda.unavailable_reason()
    if rt.cuda.is_built():
        assert "cudaGetDeviceCount" in reason and "nvidia-smi" in reason
    else:
        assert "not built" in reason and "-DRT_CUDA=ON" in reason


@without_gpu
def test_memory_counters_read_zero():
    for counter in (rt.cuda.memory_allocated, rt.cuda.max_memory_allocated, rt.cuda.memory_reserved,
                    rt.cuda.max_memory_reserved):
        assert counter() == 0 and counter(0) == 0 and counter("cuda:0") == 0
    rt.cuda.reset_peak_memory_stats()
    rt.cuda.empty_cache()
    stats = rt.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == 0 and stats["num_ooms"] == 0 and len(stats) == 9
    summary = rt.cuda.memory_summary()
    assert "Allocated memory" in summary and "0 B" in summary and "Out-of-memory errors" in summary
    with rt.cuda.device(None):  # no index: changes nothing, needs no device
        pass


@without_gpu
@pytest.mark.parametrize("call", [
    rt.cuda.current_device, rt.cuda.synchronize, rt.cuda.get_device_name, rt.cuda.get_device_properties,
    rt.cuda.get_device_capability, lambda: rt.cuda.set_device(0), lambda: rt.cuda.Event(enable_timing=True),
    rt.cuda.mem_get_info, rt.cuda.current_stream, lambda: rt.cuda.device(0).__enter__(),
    rt.cuda.Stream, lambda: rt.cuda.Stream(priority=-1), rt.cuda.default_stream,
], ids=["current_device", "synchronize", "get_device_name", "get_device_properties", "get_device_capability",
        "set_device", "Event", "mem_get_info", "current_stream", "device context", "Stream", "Stream high priority",
        "default_stream"])
def test_calls_that_need_a_device_raise_the_reason(call):
    with pytest.raises(RuntimeError, match=REASON):
        call()


def test_is_pinned_asks_the_engine():
    assert "pinned memory" in rt.Tensor.is_pinned.__doc__  # the binding, not a stand-in returning False
    assert "page-locked" in rt.Tensor.pin_memory.__doc__


@without_gpu
def test_pinned_memory_needs_a_device():
    x = rt.ones(2)
    assert not x.is_pinned()
    with pytest.raises(RuntimeError, match=REASON):
        x.pin_memory()
    with pytest.raises(RuntimeError, match=REASON):
        rt.zeros(2, pin_memory=True)
    with pytest.raises(RuntimeError, match="for CPU tensors"):
        rt.zeros(2, device="cuda", pin_memory=True)


def test_stream_context_and_set_stream_with_none_change_nothing():
    with rt.cuda.stream(None) as s:  # torch's idiom for "no stream": needs no device
        assert s is None
    rt.cuda.set_stream(None)


def test_device_arguments_are_checked():
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        rt.cuda.memory_allocated("cpu")
    with pytest.raises(ValueError, match="invalid device string"):
        rt.cuda.synchronize("gpu:0")
    with pytest.raises(TypeError, match="device must be an int"):
        rt.cuda.get_device_properties(True)


def test_seeding_cuda_seeds_the_one_generator():
    for seed_cuda in (rt.cuda.manual_seed, rt.cuda.manual_seed_all):
        seed_cuda(1234)
        a = rt.rand(5)
        rt.manual_seed(1234)
        assert rt.equal(a, rt.rand(5))
        assert rt.initial_seed() == 1234


def test_tf32_switch():
    matmul = rt.backends.cuda.matmul
    assert matmul.allow_tf32 is False  # torch's default
    try:
        matmul.allow_tf32 = True
        assert matmul.allow_tf32 is rt.cuda.is_built()  # a build without CUDA has no switch to turn on
        rt.cuda.set_allow_tf32(False)
        assert matmul.allow_tf32 is False
    finally:
        matmul.allow_tf32 = False
    with pytest.raises(AttributeError):
        matmul.allow_fp16 = True


# ---- tensors -------------------------------------------------------------------------------
def test_to_cpu_is_a_no_op():
    x = rt.randn(3, 4, requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(rt.device("cpu")) is x and x.to(device="cpu") is x
    y = x.to("cpu", copy=True)
    assert y is not x and rt.equal(y, x) and not y._shares_storage(x)
    z = x.to("cpu", rt.float64)
    assert z.dtype is rt.float64 and z.grad_fn is not None
    assert x.to("cpu", non_blocking=True) is x


@without_gpu
@pytest.mark.parametrize("move", [
    lambda x: x.cuda(), lambda x: x.cuda(0), lambda x: x.to("cuda"), lambda x: x.to("cuda:0", rt.float64),
    lambda x: x.to(0), lambda x: x.to(device=rt.device("cuda", 0), non_blocking=True),
    lambda x: rt.zeros(2, device="cuda"), lambda x: rt.randn(2, 3, device="cuda:0"),
    lambda x: rt.full((2,), 1.5, device="cuda"),
], ids=["cuda()", "cuda(0)", "to(cuda)", "to(cuda:0,float64)", "to(0)", "to(device=)", "zeros", "randn", "full"])
def test_moving_to_cuda_raises_the_reason(move):
    x = rt.arange(6.0).view(2, 3)
    with pytest.raises(RuntimeError, match=REASON):
        move(x)
    assert x.device.type == "cpu" and x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_cuda_refuses_a_cpu_device():
    with pytest.raises(ValueError, match="expected a CUDA device"):
        rt.ones(2).cuda("cpu")


# ---- modules -------------------------------------------------------------------------------
def small_mlp():
    rt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    model(rt.randn(5, 4)).sum().backward()  # gradients and running statistics to move too
    return model


@without_gpu
def test_module_cuda_raises_and_leaves_the_module_on_the_cpu():
    model = small_mlp()
    params = list(model.parameters())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    grads = [p.grad.clone() for p in params]
    with pytest.raises(RuntimeError, match=REASON):
        model.cuda()
    with pytest.raises(RuntimeError, match=REASON):
        model.to("cuda:0")
    assert list(model.parameters()) == params  # the same Parameter objects
    for p, g in zip(params, grads):
        assert p.device.type == "cpu" and p.is_leaf and p.requires_grad and rt.equal(p.grad, g)
    for k, v in model.state_dict().items():
        assert v.device.type == "cpu" and rt.equal(v, before[k]), k


def test_module_to_cpu_and_dtype_keep_parameter_objects():
    model = small_mlp()
    params = list(model.parameters())
    opt = rt.optim.SGD(model.parameters(), lr=0.1)
    assert model.to("cpu") is model and model.cpu() is model
    assert all(a is b for a, b in zip(model.parameters(), params))
    model.double()
    for p in model.parameters():
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad
        assert p.dtype is rt.float64 and p.grad.dtype is rt.float64
    assert all(a is b for a, b in zip(model.parameters(), params))
    assert model[1].running_mean.dtype is rt.float64 and model[1].num_batches_tracked.dtype is rt.int64
    out = model(rt.randn(5, 4, dtype=rt.float64)).sum()
    opt.zero_grad()
    out.backward()
    before = params[0].clone()
    opt.step()  # the optimizer made before .double() still updates the model's parameters
    assert not rt.equal(params[0], before)


def test_shared_parameters_are_converted_once():
    a = nn.Linear(3, 3)
    model = nn.Sequential(a, nn.ReLU(), a)
    model.double()
    assert a.weight.dtype is rt.float64 and len(list(model.parameters())) == 2


# ---- with a GPU ----------------------------------------------------------------------------
def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().cpu().double().numpy(), b.detach().cpu().double().numpy(),
                               rtol=tol, atol=tol)


@needs_gpu
def test_device_queries():
    assert rt.cuda.device_count() >= 1 and rt.cuda.unavailable_reason() == ""
    assert rt.cuda.is_built() and rt.cuda.current_device() == 0
    rt.cuda.set_device(0)
    p = rt.cuda.get_device_properties(0)
    assert p.name and p.name == rt.cuda.get_device_name() and p.total_memory > 1 << 30
    assert p.major >= 5 and p.multi_processor_count > 0 and rt.cuda.get_device_capability() == (p.major, p.minor)
    assert "_CudaDeviceProperties(name=" in repr(p)
    with pytest.raises(RuntimeError, match="does not exist"):
        rt.cuda.set_device(rt.cuda.device_count())
    rt.cuda.synchronize()
    free, total = rt.cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    s = rt.cuda.current_stream()
    assert s.device_index == 0 and s.cuda_stream == 0 and "cuda:0" in repr(s)
    assert rt.cuda.default_stream(0).cuda_stream == s.cuda_stream
    s.synchronize()
    assert s.query()
    with rt.cuda.device(0) as d:
        assert rt.cuda.current_device() == 0 and d.idx == 0


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"])
def test_round_trip(dtype):
    x = (rt.randn(7, 5) * 10).to(getattr(rt, dtype))
    y = x.cuda()
    assert y.device == rt.device("cuda", 0) and y.is_cuda and y.dtype is x.dtype and y.shape == x.shape
    assert y.cuda() is y and y.to("cuda:0") is y and x.to(y) is not x
    back = y.cpu()
    assert back.device.type == "cpu" and rt.equal(back, x)
    assert rt.equal(x[:, 1:4].cuda().cpu(), x[:, 1:4])  # a strided view


@needs_gpu
def test_repr_names_the_device():
    assert repr(rt.tensor([1.0, 2.0]).cuda()) == "tensor([1., 2.], device='cuda:0')"
    assert repr(rt.tensor([1, 2], dtype=rt.int32).cuda()) == "tensor([1, 2], device='cuda:0', dtype=rustytorch.int32)"
    assert repr(rt.zeros(0, 2).cuda()) == "tensor([], device='cuda:0', size=(0, 2))"


@needs_gpu
def test_to_device_and_dtype_together():
    x = rt.randn(4, 3)
    y = x.to("cuda", rt.float16)
    assert y.is_cuda and y.dtype is rt.float16
    z = y.to("cpu", rt.float32)
    close(z, x, 1e-2)


@needs_gpu
def test_ops_on_cuda_match_the_cpu():
    a, b = rt.randn(64, 32), rt.randn(32, 16)
    c = rt.randn(64, 32)
    close((a.cuda() + c.cuda()).cpu(), a + c)
    close((a.cuda() * 3 - c.cuda()).cpu(), a * 3 - c)
    close((a.cuda() @ b.cuda()).cpu(), a @ b, 1e-4)
    close(a.cuda().softmax(-1).cpu(), a.softmax(-1))
    close(a.cuda().sum(0).cpu(), a.sum(0), 1e-4)


@needs_gpu
def test_remainder_and_floor_division_on_cuda():
    labels = rt.arange(10, device="cuda") % 3
    assert labels.device.type == "cuda" and labels.cpu().tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    a, b = rt.randn(8, 5) * 10, rt.rand(5) + 0.5
    for f in (lambda x, y: x % y, lambda x, y: x // y, lambda x, y: rt.fmod(x, y), lambda x, y: -7 % y):
        assert f(a.cuda(), b.cuda()).cpu().tolist() == f(a, b).tolist()
    x = a.cuda().requires_grad_()
    (x % 2.5).sum().backward()
    assert x.grad.cpu().tolist() == rt.ones(8, 5).tolist()
    with pytest.raises(ZeroDivisionError):
        rt.arange(4, device="cuda") // rt.tensor([1, 0, 1, 1], device="cuda")
    with pytest.raises(ZeroDivisionError):
        rt.arange(4, device="cuda") % 0


@needs_gpu
def test_gradients_flow_back_across_devices():
    x = rt.randn(3, 4, requires_grad=True)
    y = x.cuda()
    assert y.grad_fn is not None and y.requires_grad
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu"
    close(x.grad, 2 * x)


@needs_gpu
def test_memory_allocated_grows_and_returns():
    gc.collect()  # no earlier cycle may free a CUDA tensor between the readings
    rt.cuda.synchronize()
    before = rt.cuda.memory_allocated()
    t = rt.empty(1 << 20, device="cuda")  # 4 MiB
    assert rt.cuda.memory_allocated() >= before + (4 << 20)
    assert rt.cuda.max_memory_allocated() >= rt.cuda.memory_allocated()
    assert rt.cuda.memory_reserved() >= rt.cuda.memory_allocated()
    del t
    assert rt.cuda.memory_allocated() == before
    rt.cuda.empty_cache()
    assert rt.cuda.memory_reserved() >= rt.cuda.memory_allocated()
    rt.cuda.reset_peak_memory_stats()
    assert rt.cuda.max_memory_allocated() == rt.cuda.memory_allocated()


@needs_gpu
def test_memory_stats_follow_the_allocator():
    gc.collect()
    rt.cuda.empty_cache()
    base = rt.cuda.memory_stats()
    x = rt.empty(1 << 20, device="cuda")  # 4 MiB: the large pool
    stats = rt.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == rt.cuda.memory_allocated() >= base["allocated_bytes.all.current"] + (4 << 20)
    assert stats["allocation.all.current"] == base["allocation.all.current"] + 1
    assert stats["reserved_bytes.all.current"] == rt.cuda.memory_reserved() and stats["segment.all.current"] >= 1
    assert stats["reserved_bytes.all.peak"] == rt.cuda.max_memory_reserved() >= rt.cuda.memory_reserved()
    assert "MiB" in rt.cuda.memory_summary(0)
    del x


@needs_gpu
def test_events_time_work():
    x = rt.randn(512, 512, device="cuda")
    start, end = rt.cuda.Event(enable_timing=True), rt.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        x = x @ x / 512
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    with pytest.raises(ValueError, match="recorded"):
        rt.cuda.Event().elapsed_time(end)  # neither recorded nor timed
    untimed = rt.cuda.Event()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing"):
        start.elapsed_time(untimed)


@needs_gpu
def test_module_moves_keep_parameters_and_train():
    rt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    reference = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    reference.load_state_dict(model.state_dict())
    params = list(model.parameters())
    opt = rt.optim.SGD(model.parameters(), lr=0.1)  # made before the move, as in most scripts
    ref_opt = rt.optim.SGD(reference.parameters(), lr=0.1)
    assert model.cuda() is model
    assert all(a is b and a.is_cuda and a.is_leaf for a, b in zip(model.parameters(), params))
    x, target = rt.randn(32, 8), rt.randint(0, 3, (32,))
    losses = []
    for _ in range(3):
        loss = nn.functional.cross_entropy(model(x.cuda()), target.cuda())
        opt.zero_grad()
        loss.backward()
        assert all(p.grad.is_cuda for p in params)
        opt.step()
        losses.append(loss.item())
        ref_loss = nn.functional.cross_entropy(reference(x), target)
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
        assert abs(loss.item() - ref_loss.item()) < 1e-4
    assert losses[-1] < losses[0]
    for p, q in zip(model.parameters(), reference.parameters()):
        close(p, q, 1e-4)
    model.cpu()
    assert all(a is b and a.device.type == "cpu" for a, b in zip(model.parameters(), params))


# ---- mixed precision on a GPU: rt.autocast("cuda") and rt.amp.GradScaler ---------------------
@needs_gpu
def test_cuda_autocast_op_dtypes():
    x, w = rt.randn(8, 16, device="cuda"), rt.randn(4, 16, device="cuda")
    with rt.autocast("cuda"):
        h = nn.functional.linear(x, w)
        assert h.dtype == rt.float16 and h.is_cuda
        assert (x @ w.t()).dtype == rt.float16
        # On CUDA these run in float32 (torch's list), unlike on the CPU.
        assert nn.functional.softmax(h, -1).dtype == rt.float32
        assert nn.functional.layer_norm(h, (4,)).dtype == rt.float32
        assert h.sum().dtype == rt.float32 and h.exp().dtype == rt.float32
        assert h.relu().dtype == rt.float16
        assert nn.functional.cross_entropy(h, rt.randint(0, 4, (8,), device="cuda")).dtype == rt.float32
        assert nn.functional.l1_loss(h, h).dtype == rt.float32
        assert nn.functional.cosine_similarity(h, h).dtype == rt.float32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            nn.functional.binary_cross_entropy(h.sigmoid(), h.sigmoid())
    with rt.autocast("cuda", dtype=rt.bfloat16):
        assert nn.functional.linear(x, w).dtype == rt.bfloat16
    close(h, nn.functional.linear(x, w), 2e-2)


@needs_gpu
def test_cuda_float16_training_with_grad_scaler():
    rt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).cuda()
    opt = rt.optim.SGD(model.parameters(), lr=0.1)
    scaler = rt.amp.GradScaler("cuda")
    x, target = rt.randn(64, 8, device="cuda"), rt.randint(0, 3, (64,), device="cuda")
    losses = []
    for _ in range(20):
        opt.zero_grad()
        with rt.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), target)
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == rt.float32 and p.grad.is_cuda for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert scaler.get_scale() == 65536.0  # no inf in 20 steps: not backed off, not yet grown

    opt.zero_grad()
    scaler.scale(nn.functional.cross_entropy(model(x), target)).backward()
    first = next(iter(model.parameters()))
    with rt.no_grad():
        first.grad[0, 0] = float("nan")
    before = first.detach().clone()
    assert scaler.step(opt) is None
    scaler.update()
    assert scaler.get_scale() == 32768.0
    close(first, before, 0)


@needs_gpu
def test_cuda_custom_function_with_custom_fwd_and_custom_bwd():
    seen = {}

    class MatMul(rt.autograd.Function):
        @staticmethod
        @rt.amp.custom_fwd(device_type="cuda", cast_inputs=rt.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["forward"] = (a.dtype, (a @ b).dtype)
            return a @ b

        @staticmethod
        @rt.amp.custom_bwd(device_type="cuda")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad @ b.t(), a.t() @ grad

    a = rt.randn(4, 8, device="cuda", requires_grad=True)
    b = rt.randn(8, 3, device="cuda", requires_grad=True)
    with rt.autocast("cuda"):
        out = MatMul.apply(a.half(), b)
    assert seen["forward"] == (rt.float32, rt.float32) and out.dtype == rt.float32 and out.is_cuda
    out.sum().backward()
    assert a.grad.dtype == rt.float32 and a.grad.is_cuda
    close(a.grad, rt.ones(4, 3, device="cuda") @ b.detach().t(), 1e-2)  # through a float16 cast


# ---- indexing on a GPU: x[idx], x[mask], x[idx] = v, gather/scatter_add/index_select ----------
INDEXES = [
    lambda x: [4, 0, 2, 2],
    lambda x: (slice(None), [0, -1, 3]),
    lambda x: ([0, 1], slice(None), [6, 2]),           # non-adjacent advanced dims go first
    lambda x: (slice(1, None), [[0], [2]], [3, 4]),    # broadcast index dims
    lambda x: (1, [5, 1]),
    lambda x: rt.tensor([3, 1]),                       # a CPU index tensor moves to the GPU
    lambda x: rt.tensor([3, -1]).cuda(),
    lambda x: x > 0,
    lambda x: (x[:, 0, 0] > 0).cuda(),
    lambda x: (slice(None), x[0, :, 0] > 0),
    lambda x: (Ellipsis, [True, False, True, False, True, False, True]),
]


def on_cpu(index):
    """The same index with its tensors on the CPU."""
    if isinstance(index, tuple):
        return tuple(on_cpu(i) for i in index)
    return index.cpu() if isinstance(index, rt.Tensor) else index


def on_gpu(index):
    """The same index with its tensors on the GPU (lists and numbers stay as they are)."""
    if isinstance(index, tuple):
        return tuple(on_gpu(i) for i in index)
    return index.cuda() if isinstance(index, rt.Tensor) else index


@needs_gpu
@pytest.mark.parametrize("make_index", INDEXES, ids=[str(i) for i in range(len(INDEXES))])
def test_advanced_indexing_matches_the_cpu(make_index):
    x = rt.randn(5, 6, 7)
    index = make_index(x)
    y = x.cuda()[index]
    assert y.is_cuda
    assert rt.equal(y.cpu(), x[on_cpu(index)])


@needs_gpu
def test_advanced_indexing_errors_on_cuda():
    g = rt.randn(5, 6).cuda()
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 1 with size 6"):
        g[:, [0, 6]]
    with pytest.raises(IndexError, match="index -7 is out of bounds for dimension 1 with size 6"):
        g[:, rt.tensor([-7, 1]).cuda()]
    with pytest.raises(IndexError, match="The shape of the mask"):
        g[rt.ones(4, dtype=rt.bool).cuda()]


@needs_gpu
@pytest.mark.parametrize("index", [[0, 5, 5, 2, 0], ([1, 4], [3, 0]), "mask"])
def test_advanced_indexing_backward_on_cuda(index):
    x = rt.randn(6, 4, requires_grad=True)
    g = x.detach().cuda().requires_grad_()
    if index == "mask":
        index = x.detach() > 0
    y = x[index]
    w = rt.randn(*y.shape)
    (y * w).sum().backward()
    (g[on_gpu(index)] * w.cuda()).sum().backward()
    assert g.grad.is_cuda
    close(g.grad, x.grad)


SETS = [
    (lambda x: [4, 0, 2], 0.5),
    (lambda x: [1, 1, 3, 1], lambda n: rt.arange(float(n * 7)).view(n, 7)),  # repeats: the last value wins
    (lambda x: ([0, 2], [6, -1]), lambda n: rt.tensor([-1.5, 2.5])),
    (lambda x: x > 0.5, -0.0),                                               # a whole mask: masked_fill_
    (lambda x: x > 0.5, lambda n: rt.arange(float(n))),
    (lambda x: (slice(1, None), x[0] < 0), 9.0),
    (lambda x: ([[1], [3]], [2, 0]), lambda n: rt.tensor(-0.0)),              # broadcast value
]


@needs_gpu
@pytest.mark.parametrize("case", SETS, ids=[str(i) for i in range(len(SETS))])
def test_setitem_with_advanced_indices_on_cuda(case):
    make_index, value = case
    x = rt.randn(5, 7)
    index = make_index(x)
    a, b = x.clone(), x.cuda()
    v = value(a[index].shape[0]) if callable(value) else value
    a[index] = v
    b[on_gpu(index)] = v.cuda() if isinstance(v, rt.Tensor) else v
    assert b.is_cuda
    np.testing.assert_array_equal(b.cpu().numpy(), a.numpy())
    assert (np.signbit(b.cpu().numpy()) == np.signbit(a.numpy())).all()  # -0.0 stays -0.0


@needs_gpu
@pytest.mark.parametrize("dtype", ["int64", "float16", "bool"])
def test_setitem_through_a_view_and_other_dtypes_on_cuda(dtype):
    x = (rt.randn(6, 8) * 10).to(getattr(rt, dtype))
    a, b = x.clone(), x.cuda()
    a[1:, ::2][[0, 2, 2]] = 1
    b[1:, ::2][[0, 2, 2]] = 1
    assert rt.equal(b.cpu(), a)
    b[b.cpu() != 0] = 0
    assert not b.cpu().to(rt.float32).abs().sum().item()


@needs_gpu
def test_setitem_refuses_autograd_on_cuda():
    g = rt.randn(4, 3, device="cuda", requires_grad=True)
    with pytest.raises(NotImplementedError, match="does not record autograd"):
        g[[0, 1]] = 0.0
    with pytest.raises(NotImplementedError, match="does not record autograd"):
        g[g.detach() > 0] = 0.0


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_gather_scatter_add_index_select_match_the_cpu(dtype):
    dt = getattr(rt, dtype)
    tol = 1e-5 if dtype in ("float32", "float64") else 3e-2
    x = rt.randn(4, 5).to(dt).requires_grad_()
    src = rt.randn(4, 3).to(dt).requires_grad_()
    g, gsrc = x.detach().cuda().requires_grad_(), src.detach().cuda().requires_grad_()
    idx = rt.randint(0, 5, (4, 3))
    rows = rt.tensor([3, 0, 3, 1], dtype=rt.int32)

    def f(x, src, idx, rows):
        return x.gather(1, idx) * 2 + x.scatter_add(1, idx, src).sum(1, keepdim=True) + x.index_select(0, rows)[:, :3]

    out, gout = f(x, src, idx, rows), f(g, gsrc, idx.cuda(), rows.cuda())
    assert gout.is_cuda and gout.dtype is dt
    close(gout, out, tol)
    w = rt.randn(4, 3).to(dt)
    (out * w).sum().backward()
    (gout * w.cuda()).sum().backward()
    close(g.grad, x.grad, tol)
    close(gsrc.grad, src.grad, tol)


@needs_gpu
def test_index_ops_on_integers_and_one_hot_on_cuda():
    x = rt.randint(-9, 9, (6, 4))
    idx = rt.randint(0, 6, (5, 4))
    assert rt.equal(x.cuda().gather(0, idx.cuda()).cpu(), x.gather(0, idx))
    assert rt.equal(x.cuda().scatter_add(0, idx.cuda(), x[:5].cuda()).cpu(), x.scatter_add(0, idx, x[:5]))
    labels = rt.tensor([[0, 6, 2, 2], [5, 1, 0, 3]])
    assert rt.equal(nn.functional.one_hot(labels.cuda()).cpu(), nn.functional.one_hot(labels))
    assert nn.functional.one_hot(labels.cuda(), 9).is_cuda
    with pytest.raises(ValueError, match="smaller than num_classes"):
        nn.functional.one_hot(labels.cuda(), 3)
    with pytest.raises(ValueError, match="non-negative, got -2 at flat position 1"):
        nn.functional.one_hot(rt.tensor([1, -2, 0, -3]).cuda())


@needs_gpu
def test_index_ops_report_a_bad_index_found_on_the_device():
    g = rt.randn(3, 4, device="cuda")
    with pytest.raises(IndexError, match=r"gather: index 4 is out of bounds for dimension 1 with size 4.*\[3, 4\]"):
        g.gather(1, rt.tensor([[0, 4]]).cuda())
    with pytest.raises(IndexError, match="index_select: index -1 is out of bounds for dimension 0 with size 3"):
        g.index_select(0, rt.tensor([-1]).cuda())
    with pytest.raises(IndexError, match="scatter_add: index 3 is out of bounds for dimension 0 with size 3"):
        g.scatter_add(0, rt.tensor([[3]]).cuda(), g)
    with pytest.raises(RuntimeError, match="same device"):
        g.index_select(0, rt.tensor([0]))
    assert g.gather(1, rt.tensor([[3]]).cuda()).item() == g[0, 3].item()  # the stream is usable after an error


@needs_gpu
def test_sorting_and_scans_without_a_cuda_kernel_say_so_and_selection_runs_there():
    """sort, topk, scans, unique and searchsorted have no CUDA kernel yet: a clear error naming the
    op and the device; take, take_along_dim, masked_select and nonzero run on the device."""
    x = rt.tensor([3.0, 1.0, 2.0]).cuda()
    for name, call in (("sort", lambda: x.sort()), ("topk", lambda: x.topk(1)), ("cumsum", lambda: x.cumsum(0)),
                       ("cummax", lambda: x.cummax(0)), ("unique", lambda: rt.unique(x)),
                       ("searchsorted", lambda: rt.searchsorted(x, x))):
        with pytest.raises(RuntimeError, match=name + r" has no CUDA implementation yet.*cuda:0.*\.cpu\(\)"):
            call()
    assert rt.take(x, rt.tensor([2, -3]).cuda()).cpu().numpy().tolist() == [2.0, 3.0]
    assert x.masked_select(x > 1.5).cpu().numpy().tolist() == [3.0, 2.0]
    assert x.nonzero().device == x.device and x.nonzero().cpu().numpy().tolist() == [[0], [1], [2]]
    assert rt.take_along_dim(x, rt.tensor([1]).cuda(), 0).cpu().numpy().tolist() == [1.0]


# ---- reductions, losses and pooling composed of kernels (engine/src/ops/composed.h) ----------
@needs_gpu
@pytest.mark.parametrize("op", [
    lambda x: x.var(1), lambda x: x.std(0, keepdim=True), lambda x: x.std(), lambda x: x.prod(1),
    lambda x: x.logsumexp(1), lambda x: x.norm(p=3, dim=1), lambda x: x.norm(p=float("inf")),
    lambda x: rt.maximum(x, x * 0.5),
    lambda x: x.abs().pow(x), lambda x: 2 ** x,
    lambda x: nn.functional.mse_loss(x, x.detach() * 0.5 + 1),
    lambda x: nn.functional.binary_cross_entropy_with_logits(x * 10, (x.detach() > 0).float(),
                                                             pos_weight=rt.full((5,), 2.0, device=x.device)),
    lambda x: nn.functional.adaptive_avg_pool2d(x.view(1, 1, 6, 5), (4, 3)),
], ids=["var", "std keepdim", "std all", "prod", "logsumexp", "norm p=3", "norm p=inf", "maximum", "pow x^x", "pow 2^x", "mse_loss",
        "bce_with_logits", "adaptive_avg_pool2d"])
def test_composed_ops_and_their_gradients_match_the_cpu(op):
    base = rt.randn(6, 5)
    base[2, 3] = 0.0  # a zero for prod's exact gradient
    x = base.clone().requires_grad_()
    g = base.cuda().requires_grad_()
    yc, yg = op(x), op(g)
    assert yg.is_cuda and yg.shape == yc.shape and yg.grad_fn.name() == yc.grad_fn.name()
    close(yg.cpu(), yc, 1e-4)
    w = rt.randn(yc.shape)
    (yc * w).sum().backward()
    (yg * w.cuda()).sum().backward()
    close(g.grad.cpu(), x.grad, 1e-4)


@needs_gpu
def test_all_any_and_multinomial_on_cuda():
    m = rt.rand(7, 9) > 0.2
    assert rt.equal(m.cuda().all(1).cpu(), m.all(1)) and rt.equal(m.cuda().any(0).cpu(), m.any(0))
    assert m.cuda().any().item() is True
    w = rt.rand(3, 10)
    rt.manual_seed(3)
    on_cpu = rt.multinomial(w, 6)
    rt.manual_seed(3)
    on_gpu = rt.multinomial(w.cuda(), 6)
    assert on_gpu.is_cuda and rt.equal(on_gpu.cpu(), on_cpu)  # the same draws on every device


@needs_gpu
@pytest.mark.parametrize("make", [
    lambda ps: rt.optim.Adam(ps, lr=1e-2, amsgrad=True, weight_decay=1e-2),
    lambda ps: rt.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    lambda ps: rt.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, maximize=True),
], ids=["adam amsgrad", "adamw", "sgd nesterov maximize"])
def test_python_optimizers_take_the_fused_step_on_cuda_and_match_the_cpu(make):
    rt.manual_seed(0)
    cpu = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    gpu = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    gpu.load_state_dict(cpu.state_dict())
    gpu.cuda()
    opt_cpu, opt_gpu = make(cpu.parameters()), make(gpu.parameters())
    x, y = rt.randn(32, 8), rt.randint(0, 4, (32,))
    for _ in range(3):
        for model, opt, xb, yb in ((cpu, opt_cpu, x, y), (gpu, opt_gpu, x.cuda(), y.cuda())):
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    for a, b in zip(cpu.parameters(), gpu.parameters()):
        assert b.is_cuda
        close(b.cpu(), a, 1e-4)


# ---- streams ---------------------------------------------------------------------------------
@needs_gpu
def test_streams_come_from_a_pool_and_describe_themselves():
    a, b, high = rt.cuda.Stream(), rt.cuda.Stream("cuda:0"), rt.cuda.Stream(priority=-1)
    assert a.cuda_stream != 0 and a != b and a == a and len({a, a, b}) == 2
    assert a.device == rt.device("cuda:0") and a.device_index == 0
    assert high.priority < a.priority
    assert "cuda_stream=0x" in repr(a)
    assert rt.cuda.default_stream().cuda_stream == 0
    assert rt.cuda.current_stream() == rt.cuda.default_stream()
    with pytest.raises(ValueError, match="expected a CUDA device"):
        rt.cuda.Stream("cpu")


@needs_gpu
def test_with_stream_sets_and_restores_the_current_stream_per_thread():
    import threading
    s1, s2 = rt.cuda.Stream(), rt.cuda.Stream()
    with rt.cuda.stream(s1) as entered:
        assert entered is s1 and rt.cuda.current_stream() == s1
        with rt.cuda.stream(s2):
            assert rt.cuda.current_stream() == s2
            seen = []
            t = threading.Thread(target=lambda: seen.append(rt.cuda.current_stream()))
            t.start()
            t.join()
            assert seen[0] == rt.cuda.default_stream()  # other threads keep their own
        assert rt.cuda.current_stream() == s1
    assert rt.cuda.current_stream() == rt.cuda.default_stream()
    rt.cuda.set_stream(s2)
    assert rt.cuda.current_stream() == s2
    rt.cuda.set_stream(rt.cuda.default_stream())


@needs_gpu
def test_work_on_a_side_stream_matches_the_cpu():
    x = rt.randn(256, 512, device="cuda")
    w = rt.randn(512, 64, device="cuda")
    side = rt.cuda.Stream()
    side.wait_stream(rt.cuda.current_stream())
    with rt.cuda.stream(side):
        y = (x @ w).relu().sum(1)
        z = y.cpu()  # the copy waits for the side stream's work
    x.record_stream(side)
    w.record_stream(side)
    rt.cuda.current_stream().wait_stream(side)
    expected = (x.cpu() @ w.cpu()).relu().sum(1)
    close(z, expected, 1e-3)
    close(y.cpu(), expected, 1e-3)
    with pytest.raises(RuntimeError, match="only CUDA tensors"):
        rt.ones(2).record_stream(side)


@needs_gpu
def test_events_order_streams():
    side = rt.cuda.Stream()
    e = side.record_event()
    assert isinstance(e, rt.cuda.Event)
    e.synchronize()
    assert e.query()
    x = rt.randn(1 << 20, device="cuda")
    done = rt.cuda.Event()
    done.record()  # on the current (legacy) stream, after x
    side.wait_event(done)
    with rt.cuda.stream(side):
        y = x * 2
    mark = rt.cuda.Event(blocking=True)
    side.record_event(mark)
    mark.wait()  # later work on the current stream waits for the side stream
    assert rt.equal(y.cpu(), x.cpu() * 2)
    assert rt.cuda.Event().query()  # never recorded: complete


# ---- pinned memory ---------------------------------------------------------------------------
@needs_gpu
def test_pin_memory_and_non_blocking_copies():
    x = rt.randn(64, 32)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and rt.equal(p, x) and p.pin_memory() is p
    assert not p.cuda().is_pinned()
    q = (p + 1).sum()  # an ordinary CPU tensor otherwise
    close(q, (x + 1).sum())
    y = p.cuda(non_blocking=True)
    z = p.to("cuda", non_blocking=True)
    assert rt.equal(y.cpu(), x) and rt.equal(z.cpu(), x)  # the copy to the host waits for the stream
    buf = rt.empty(64, 32, device="cuda")
    buf.copy_(p, non_blocking=True)  # the prefetch idiom
    w = p.to("cuda", rt.float64, non_blocking=True)
    assert rt.equal(buf.cpu(), x) and w.dtype == rt.float64 and rt.equal(w.cpu(), x.double())
    t = rt.zeros(3, 4, pin_memory=True, requires_grad=True)
    assert t.is_pinned() and t.is_leaf and t.requires_grad
    assert rt.randint(0, 5, (8,), pin_memory=True).is_pinned()
    with pytest.raises(RuntimeError, match="only CPU tensors can be pinned"):
        y.pin_memory()


@needs_gpu
def test_dataloader_pins_batches():
    from collections import namedtuple
    from rustytorch.utils.data import DataLoader, Dataset

    Sample = namedtuple("Sample", "x y")

    class Pairs(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return Sample(rt.full((3,), float(i)), i)

    for batch in DataLoader(Pairs(), batch_size=4, pin_memory=True):
        assert type(batch) is Sample and batch.x.is_pinned() and batch.y.is_pinned()
        on_gpu = batch.x.cuda(non_blocking=True)
        assert rt.equal(on_gpu.cpu(), batch.x)
