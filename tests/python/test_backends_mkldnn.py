"""rt.backends.mkldnn: the switch between oneDNN and im2col CPU convolutions, as torch.backends.mkldnn."""
import os
import subprocess
import sys

import rustytorch as rt
import rustytorch.nn.functional as F


def _conv_path_ops():
    x = rt.randn(2, 8, 10, 10, requires_grad=True)
    w = rt.randn(8, 8, 3, 3, requires_grad=True)
    with rt.profiler.profile() as prof:
        F.conv2d(x, w, padding=1).sum().backward()
    return {e.key for e in prof.key_averages()} & {
        "mkldnn_convolution", "mkldnn_convolution_backward", "_slow_conv2d_forward", "_slow_conv2d_backward"}


def test_enabled_by_default_and_available(torch):
    assert rt.backends.mkldnn.is_available() is True
    assert rt.backends.mkldnn.enabled is True
    assert rt.backends.mkldnn.enabled == torch.backends.mkldnn.enabled
    assert rt.backends.mkldnn.version().startswith("2.")


def test_setting_enabled_switches_the_path_the_profiler_shows():
    try:
        rt.backends.mkldnn.enabled = False
        assert rt.backends.mkldnn.enabled is False
        assert _conv_path_ops() == {"_slow_conv2d_forward", "_slow_conv2d_backward"}
        rt.backends.mkldnn.enabled = True
        assert _conv_path_ops() == {"mkldnn_convolution", "mkldnn_convolution_backward"}
    finally:
        rt.backends.mkldnn.enabled = True


def test_flags_sets_the_switch_for_a_block():
    with rt.backends.mkldnn.flags(enabled=False):
        assert rt.backends.mkldnn.enabled is False
        assert _conv_path_ops() == {"_slow_conv2d_forward", "_slow_conv2d_backward"}
    assert rt.backends.mkldnn.enabled is True


def test_both_paths_match_torch(torch):
    import numpy as np
    xs = np.random.default_rng(0).standard_normal((2, 4, 9, 9)).astype(np.float32)
    ws = np.random.default_rng(1).standard_normal((6, 2, 3, 3)).astype(np.float32)
    expected = torch.nn.functional.conv2d(torch.from_numpy(xs), torch.from_numpy(ws), stride=2, padding=1, groups=2)
    for enabled in (True, False):
        with rt.backends.mkldnn.flags(enabled=enabled):
            got = F.conv2d(rt.tensor(xs), rt.tensor(ws), stride=2, padding=1, groups=2)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


def test_rt_onednn_environment_variable_sets_it_at_start():
    code = "import rustytorch as rt; print(rt.backends.mkldnn.enabled)"
    for value, expected in (("0", "False"), ("1", "True")):
        env = dict(os.environ, RT_ONEDNN=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected
    env = dict(os.environ, RT_ONEDNN="maybe")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True" and "RT_ONEDNN=maybe is not 0 or 1" in out.stderr
