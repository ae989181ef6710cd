"""The per-level CPU kernels (kernels/cpu/isa/) never leak into code the default level runs.

Note [CPU capability dispatch] (kernels/cpu/isa_kernels.cpp): the sources of kernels/cpu/isa/ compile
three times, with AVX2 and AVX-512 flags for two of the copies. An inline function or template those
copies instantiate outside their own namespace is a weak symbol the linker may keep from the AVX-512
object for every caller, which then dies of SIGILL on an older CPU. Two checks, on the built objects:
  * every symbol a level's object defines for the linker lies in that level's namespace
    (rt::cpu::isa_default::, isa_avx2::, isa_avx512::): nothing shared, nothing weak outside it;
  * every function of librt_engine.so that uses an AVX instruction (a VEX/EVEX 'v' mnemonic, a ymm,
    zmm or mask register) belongs to the isa_avx2 or isa_avx512 namespace.
RT_ISA_OBJECTS lists the objects (':'-separated), RT_LIB_DIR the folder of librt_engine.so.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

LIB_DIR = Path(os.environ.get("RT_LIB_DIR", Path(__file__).resolve().parents[2] / "build" / "lib"))
OBJECTS = [Path(p) for p in os.environ.get("RT_ISA_OBJECTS", "").split(":") if p]
LEVEL_OF_OBJECT = re.compile(r"rt_cpu_isa_(default|avx2|avx512)\.dir")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")
AVX_INSTRUCTION = re.compile(r"^\s+[0-9a-f]+:\s+(v[a-z0-9]+\b|.*%[yz]mm|.*%k[0-7]\b)")


def need(tool):
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} (binutils) is not installed")


def test_each_level_object_defines_only_symbols_of_its_namespace():
    need("nm")
    if not OBJECTS:
        pytest.skip("RT_ISA_OBJECTS is not set (ctest sets it to the rt_cpu_isa_* objects)")
    levels = set()
    for obj in OBJECTS:
        level = LEVEL_OF_OBJECT.search(str(obj))
        assert level, f"{obj} is not an object of an rt_cpu_isa_<level> library"
        levels.add(level.group(1))
        prefix = f"rt::cpu::isa_{level.group(1)}::"
        out = subprocess.run(["nm", "-C", "--defined-only", "--extern-only", str(obj)], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) < 3:
                continue
            kind, name = parts[1], parts[2]
            assert name.startswith(prefix), (
                f"{obj.name} ({level.group(1)}) defines '{name}' ({kind}) outside {prefix}: a copy compiled for "
                f"this level the linker may give to other callers. Keep inline code of headers out of "
                f"kernels/cpu/isa/ sources, or move it into the level's namespace (kernels/cpu/isa/vec.h)")
    assert levels == {"default", "avx2", "avx512"}, f"objects of levels {sorted(levels)} only"


def test_only_the_avx_levels_use_avx_instructions():
    need("objdump")
    lib = LIB_DIR / "librt_engine.so"
    if not lib.exists():
        pytest.skip(f"{lib} is not built")
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", str(lib)], check=True, capture_output=True,
                         text=True).stdout
    function, offenders, avx_functions = None, set(), 0
    for line in out.splitlines():
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            continue
        if function is not None and AVX_INSTRUCTION.match(line):
            if "rt::cpu::isa_avx2::" in function or "rt::cpu::isa_avx512::" in function:
                avx_functions += 1
            else:
                offenders.add(function)
    assert not offenders, ("functions outside rt::cpu::isa_avx2/isa_avx512 use AVX instructions and would fail on "
                           "an x86-64-v2 CPU:\n  " + "\n  ".join(sorted(offenders)[:20]))
    assert avx_functions > 0, "no AVX code found in the isa_avx2/isa_avx512 kernels: are they compiled with their flags?"
