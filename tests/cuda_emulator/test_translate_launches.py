"""kernels/cuda_emulator/translate_launches.py: the rewritten launches, line numbers kept, errors named."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(os.environ.get("RT_TRANSLATE_LAUNCHES",
                             Path(__file__).resolve().parents[2] / "kernels/cuda_emulator/translate_launches.py"))
spec = importlib.util.spec_from_file_location("translate_launches", SCRIPT)
tl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tl)


def test_plain_launch_becomes_a_call_with_a_lambda():
    out = tl.translate_launches("  k<<<grid_for(n), kBlock, 0, stream>>>(a, b);\n")
    assert out == ('  ::rt::cuda_emulator::launch("k", ::rt::cuda_emulator::config(grid_for(n), kBlock, 0, stream), '
                   'nullptr, [&](auto&... a) { k(a...); }, a, b);\n')


def test_template_kernel_over_lines_keeps_the_line_count():
    src = ("    if (x) softmax_kernel<T, kVecs, false, true>\n"
           "        <<<rows, threads, size_t(bytes), stream>>>(x,\n"
           "                                                  y);\n"
           "    next();\n")
    out = tl.translate_launches(src)
    assert out.count("\n") == src.count("\n")
    assert out.endswith("    next();\n")
    assert 'launch("softmax_kernel<T, kVecs, false, true>"' in out
    # dynamic shared memory: the kernel's address identifies it for cudaFuncSetAttribute's limit
    assert "::rt::cuda_emulator::kernel_key(softmax_kernel<T, kVecs, false, true>)" in out
    assert out.startswith("    if (x) ::rt::cuda_emulator::launch(")


def test_nested_template_arguments_and_parentheses():
    out = tl.translate_launches("f<A<int>, (1 > 0)><<<g, b>>>(h(x, y), z);")
    assert out.startswith('::rt::cuda_emulator::launch("f<A<int>, (1 > 0)>"')
    assert out.endswith(", h(x, y), z);")


def test_launch_without_arguments():
    assert tl.translate_launches("k<<<1, 1>>>();").endswith("[&](auto&... a) { k(a...); });")


def test_launches_in_comments_stay():
    src = "// my_kernel<<<grid_for(n), kBlock, 0, stream>>>(...);\n"
    assert tl.translate_launches(src) == src


def test_extern_shared_becomes_the_launch_buffer():
    out = tl.translate_extern_shared("  extern __shared__ __align__(16) unsigned char packs[];")
    assert out == ("  unsigned char* packs = static_cast<unsigned char*>("
                   "::rt::cuda_emulator::dynamic_shared_memory());")


def test_shared_declarations_become_storage_per_site():
    src = ("  __shared__ float sw[kRows][kTile + 1], sb[kRows][kTile + 1];\n"
           "  __shared__ unsigned char flag;  // __shared__ in a comment stays\n"
           '  const char* s = "__shared__ in a string stays";\n')
    out = tl.translate_shared(src)
    assert out.splitlines()[0] == (
        "  struct rt_shared_site_1 {}; auto& sw = ::rt::cuda_emulator::static_shared<float[kRows][kTile + 1], "
        "rt_shared_site_1>(); struct rt_shared_site_2 {}; auto& sb = "
        "::rt::cuda_emulator::static_shared<float[kRows][kTile + 1], rt_shared_site_2>();")
    assert out.splitlines()[1].startswith("  struct rt_shared_site_3 {}; auto& flag = "
                                          "::rt::cuda_emulator::static_shared<unsigned char, rt_shared_site_3>();")
    assert out.splitlines()[2] == src.splitlines()[2]
    with pytest.raises(tl.TranslationError, match="line 1: a __shared__ declaration"):
        tl.translate_shared("__shared__ float (*p)[4];")
    with pytest.raises(tl.TranslationError, match="line 2: `static __shared__`"):
        tl.translate_shared("\n  static __shared__ float s[4];")


def test_launch_bounds_become_a_check_at_the_top_of_the_body():
    src = ("__global__ void __launch_bounds__(kWarp ? 128 : 1024,\n"
           "                                  2)\n"
           "    k(const float* x,\n      int n) {\n  body();\n}\n")
    out = tl.translate_launch_bounds(src)
    assert out.count("\n") == src.count("\n")
    assert "__launch_bounds__" not in out
    assert "int n) { ::rt::cuda_emulator::check_launch_bounds(kWarp ? 128 : 1024);" in out
    with pytest.raises(tl.TranslationError, match="no kernel body"):
        tl.translate_launch_bounds("__global__ void __launch_bounds__(64) k(int* p);")


@pytest.mark.parametrize("src, what", [
    ("<<<g, b>>>(x);", "no kernel name"),
    ("k<<<g, b>>> x;", "no argument list"),
    ("k<<<g, b>>>(x;", "unbalanced parentheses"),
    ("k<<<g, b(x);", "without >>>"),
])
def test_malformed_launches_name_the_problem_and_line(src, what):
    with pytest.raises(tl.TranslationError, match=f"line 2: .*{what}"):
        tl.translate_launches("\n" + src)


def test_command_line_writes_a_line_directive(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("k<<<1, 32>>>(p);\n")
    out = tmp_path / "k.cpp"
    subprocess.run([sys.executable, str(SCRIPT), str(src), str(out)], check=True)
    text = out.read_text()
    assert text.startswith(f'#line 1 "{src}"\n')
    bad = tmp_path / "bad.cu"
    bad.write_text("k<<<1, 32>>> p;\n")
    r = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(out)], capture_output=True, text=True)
    assert r.returncode != 0 and "bad.cu:line 1: no argument list after >>>" in r.stderr
