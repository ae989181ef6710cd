"""rt.backends.cudnn and rt.backends.mps answer as torch.backends does in a PyTorch build without cuDNN and
without MPS (Debian's), so the seeding and device-picking lines of PyTorch scripts run unchanged."""
import rustytorch as rt


def test_cudnn_answers_as_a_torch_build_without_cudnn(torch):
    ours, theirs = rt.backends.cudnn, torch.backends.cudnn
    assert ours.is_available() is False and ours.version() is None
    assert (ours.is_available(), ours.version()) == (theirs.is_available(), theirs.version())
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(ours, flag) == getattr(theirs, flag), flag


def test_cudnn_flags_keep_what_a_script_assigns():
    saved = rt.backends.cudnn.deterministic, rt.backends.cudnn.benchmark
    try:
        rt.backends.cudnn.deterministic = True
        rt.backends.cudnn.benchmark = False
        assert rt.backends.cudnn.deterministic is True and rt.backends.cudnn.benchmark is False
    finally:
        rt.backends.cudnn.deterministic, rt.backends.cudnn.benchmark = saved


def test_mps_is_never_available(torch):
    assert rt.backends.mps.is_available() is False and rt.backends.mps.is_built() is False
    assert rt.backends.mps.is_available() == torch.backends.mps.is_available()
    device = "cuda" if rt.cuda.is_available() else "mps" if rt.backends.mps.is_available() else "cpu"
    assert device in ("cuda", "cpu")


def test_cpu_capability_is_the_engines_level():
    import os
    import subprocess
    import sys

    levels = ["DEFAULT", "AVX2", "AVX512"]
    assert rt.backends.cpu.get_cpu_capability() in levels
    code = "import rustytorch as rt; print(rt.backends.cpu.get_cpu_capability())"
    env = dict(os.environ, RT_CPU_CAPABILITY="default")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "DEFAULT"
