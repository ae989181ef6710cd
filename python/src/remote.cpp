// rustytorch.remote's bindings (the `_C._remote` submodule): make this process attachable by the studio and
// `rtorch attach` (rt/remote/agent.h), and list what is attachable on this machine.
#include <chrono>

#include "bind.h"
#include "rt/remote/agent.h"
#include "rt/remote/manifest.h"

namespace rtpy {
namespace {

py::dict manifest_dict(const rt::remote::AgentManifest& m) {
  py::dict d;
  d["job"] = m.job;
  d["rank"] = m.rank;
  d["world_size"] = m.world_size;
  d["host"] = m.host;
  d["pid"] = m.pid;
  d["start_time_ms"] = m.start_time_ms;
  d["program"] = m.program;
  d["rt_version"] = m.rt_version;
  d["protocol"] = m.protocol;
  d["socket"] = m.socket;
  return d;
}

}  // namespace

void bind_remote(py::module_& m) {
  m.def(
      "serve",
      [](const std::string& job, int rank, int world_size, size_t buffer_bytes) {
        rt::remote::AgentOptions o;
        o.job = job;
        o.rank = rank;
        o.world_size = world_size;
        o.buffer_bytes = buffer_bytes;
        rt::remote::AgentManifest manifest;
        {
          py::gil_scoped_release release;  // the agent's thread never takes the GIL; this just waits less
          manifest = rt::remote::serve(o);
        }
        return manifest_dict(manifest);
      },
      py::arg("job") = "", py::arg("rank") = -1, py::arg("world_size") = -1,
      py::arg("buffer_bytes") = size_t(64) << 20);
  m.def(
      "stop",
      [](double flush_timeout_s) {
        py::gil_scoped_release release;
        rt::remote::stop_serving(std::chrono::milliseconds(int64_t(flush_timeout_s * 1000)));
      },
      py::arg("flush_timeout_s") = 2.0);
  m.def("serving", []() -> py::object {
    const auto m = rt::remote::serving();
    if (!m) return py::none();
    return manifest_dict(*m);
  });
  m.def("list_manifests", []() {
    py::list out;
    for (const auto& m : rt::remote::list_manifests(rt::remote::ensure_runtime_dir())) out.append(manifest_dict(m));
    return out;
  });
}

}  // namespace rtpy
