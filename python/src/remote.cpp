// rustytorch.remote's bindings (the `_C._remote` submodule): make this process attachable by the studio and
// `rtorch attach` (rt/remote/agent.h), and list what is attachable on this machine.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "bind.h"
#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/remote/manifest.h"
#include "rt/remote/tcp.h"

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
  d["listen"] = m.listen;
  const auto file = rt::remote::connection_file_path(m);
  std::error_code ec;
  d["connection_file"] = !m.listen.empty() && std::filesystem::exists(file, ec) ? file.string() : std::string();
  return d;
}

}  // namespace

void bind_remote(py::module_& m) {
  m.def(
      "serve",
      [](const std::string& job, int rank, int world_size, size_t buffer_bytes, const std::string& listen,
         const std::string& listen_auth) {
        rt::remote::AgentOptions o;
        o.job = job;
        o.rank = rank;
        o.world_size = world_size;
        o.buffer_bytes = buffer_bytes;
        o.listen = listen;
        if (listen_auth == "token") o.listen_auth = rt::remote::TcpAuth::Token;
        else if (listen_auth == "none") o.listen_auth = rt::remote::TcpAuth::None;
        else if (listen_auth != "auto") throw rt::ValueError("listen_auth must be 'auto', 'token' or 'none', not '" + listen_auth + "'");
        rt::remote::AgentManifest manifest;
        {
          py::gil_scoped_release release;  // the agent's thread never takes the GIL; this just waits less
          manifest = rt::remote::serve(o);
        }
        return manifest_dict(manifest);
      },
      py::arg("job") = "", py::arg("rank") = -1, py::arg("world_size") = -1,
      py::arg("buffer_bytes") = size_t(64) << 20, py::arg("listen") = "", py::arg("listen_auth") = "auto");
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
  // A headless client (rustytorch.remote.Client): blocking calls, the GIL released while they wait.
  using rt::remote::AgentClient;
  py::class_<AgentClient>(m, "Client")
      .def(py::init([](const std::string& socket, const std::string& name, double timeout_s) {
             py::gil_scoped_release release;
             return AgentClient::connect(socket, name, std::chrono::milliseconds(int64_t(timeout_s * 1000)));
           }),
           py::arg("socket"), py::arg("client_name") = "rustytorch.remote.Client", py::arg("timeout_s") = 5.0)
      .def_property_readonly("agent", [](const AgentClient& c) { return manifest_dict(c.agent()); })
      .def(
          "request",
          [](AgentClient& c, const std::string& method, const py::object& params, double timeout_s) {
            // params: a dict (or None), sent as the Request's "params" object
            const std::string text =
                params.is_none() ? std::string() : py::module_::import("json").attr("dumps")(params).cast<std::string>();
            py::gil_scoped_release release;
            return c.request(method, text, std::chrono::milliseconds(int64_t(timeout_s * 1000)));
          },
          py::arg("method"), py::arg("params") = py::none(), py::arg("timeout_s") = 10.0)
      .def(
          "estimate_clock",
          [](AgentClient& c, int round_trips, double timeout_s) {
            rt::remote::ClockEstimate e;
            {
              py::gil_scoped_release release;
              e = c.estimate_clock(round_trips, std::chrono::milliseconds(int64_t(timeout_s * 1000)));
            }
            py::dict d;
            d["offset_ns"] = e.offset_ns;  // the agent's steady clock minus this process's time.monotonic_ns()
            d["error_ns"] = e.error_ns;
            d["round_trips"] = e.round_trips;
            return d;
          },
          py::arg("round_trips") = 8, py::arg("timeout_s") = 2.0)
      .def(
          "poll",
          [](AgentClient& c, double timeout_s) {
            rt::remote::ClientEvent e;
            {
              py::gil_scoped_release release;
              e = c.poll(std::chrono::milliseconds(int64_t(timeout_s * 1000)));
            }
            switch (e) {
              case rt::remote::ClientEvent::Batch: return "batch";
              case rt::remote::ClientEvent::Notice: return "notice";
              case rt::remote::ClientEvent::Reply: return "reply";
              case rt::remote::ClientEvent::Closed: return "closed";
              default: return "nothing";
            }
          },
          py::arg("timeout_s") = 0.5)
      .def_property_readonly("notices", [](const AgentClient& c) { return c.notices(); })
      .def_property_readonly("connected", &AgentClient::connected)
      .def_property_readonly("error", &AgentClient::error)
      .def_property_readonly("dropped", &AgentClient::dropped_by_agent)
      .def_property_readonly("batches", &AgentClient::batches)
      .def("op_counts", [](const AgentClient& c) {
        // name -> how many ops of that name the mirrored session holds
        std::map<std::string, int64_t> counts;
        const auto& d = c.session();
        for (const auto& op : d.ops) ++counts[d.strings.at(op.name)];
        return counts;
      })
      .def_property_readonly("session_complete", [](const AgentClient& c) { return c.session().complete; });
  m.def("list_manifests", []() {
    py::list out;
    for (const auto& m : rt::remote::list_manifests(rt::remote::ensure_runtime_dir())) out.append(manifest_dict(m));
    return out;
  });
}

}  // namespace rtpy
