"""What rt_engine and rt_profiler export (rt/export.h): the API, not their internals.

Both libraries compile with -fvisibility=hidden; public headers open RT_API_BEGIN. This reads the
built libraries' dynamic symbol tables (nm -D) and checks both sides of the rule: public functions
are there, internal ones are not.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

LIB_DIR = Path(os.environ.get("RT_LIB_DIR", Path(__file__).resolve().parents[2] / "build" / "lib"))


def exported(name):
    path = LIB_DIR / name
    if not path.exists():
        pytest.skip(f"{path} is not built (set RT_LIB_DIR to the build's lib folder)")
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(["nm", "-DC", "--defined-only", str(path)], check=True, capture_output=True, text=True).stdout
    return [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]


def test_the_engine_exports_its_api_and_hides_its_internals():
    symbols = exported("librt_engine.so")
    text = "\n".join(symbols)
    for public in ("rt::relu(rt::Tensor const&)", "rt::set_num_threads(int)", "rt::Tensor::raw_data() const",
                   "rt::cpu::copy_kernel(rt::cpu::TensorView const&, rt::cpu::TensorView const&)"):
        assert public in text, f"{public} is missing from librt_engine.so's exports"
    for internal in ("rt::detail::ReducePlan::make", "rt::throw_too_many_dims_for_cpu_kernel"):
        assert internal not in text, f"{internal} (engine/src/) is exported; only the API should be"


def test_the_profiler_exports_its_api_and_hides_its_internals():
    symbols = exported("librt_profiler.so")
    text = "\n".join(symbols)
    assert "rt::prof::Session::start()" in text
    assert "rt::prof::Store::open" in text
    assert "rt::prof::collect::BufferRegistry" not in text, "profiler/src/ internals are exported"


def test_remote_exports_its_api_and_hides_its_internals():
    symbols = exported("librt_remote.so")
    text = "\n".join(symbols)
    for public in ("rt::remote::serve(", "rt::remote::AgentClient::connect(", "rt::remote::decode_event_batch(",
                   "rt::remote::AgentClient::connect_command(", "rt::remote::relay_stdio("):
        assert public in text, f"{public} is missing from librt_remote.so's exports"
    for internal in ("rt::remote::AgentServer", "rt::remote::BatchQueue", "rt::remote::listen_unix",
                     "rt::remote::TokenGate", "rt::remote::ChildProcess", "rt::remote::TcpListener"):
        assert internal not in text, f"{internal} (remote/src/) is exported; only the API should be"
