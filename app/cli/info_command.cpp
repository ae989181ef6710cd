// `rtorch info [--json]`: versions, BLAS, oneDNN, threads, the CPU kernels' instruction-set level, embedded Python and its packages, optional parts.
#include <CLI/CLI.hpp>
#include <cblas.h>
#include <fmt/core.h>
#include <omp.h>
#include <sys/utsname.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "command.h"
#include "rt/backends.h"
#include "rt/cpu_capability.h"
#include "rt/parallel.h"
#include "embedded_python.h"
#include "install_layout.h"
#include "optional_parts.h"

namespace rt::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string openblas_parallel_mode() {
  switch (openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "OpenMP";
    default: return "unknown";
  }
}

Json build_section() {
  utsname os{};
  uname(&os);
  return {{"rustytorch", RT_VERSION},
          {"compiler", fmt::format("GCC {}", __VERSION__)},
          {"c++ standard", fmt::format("C++{} ({}L)", __cplusplus / 100 % 100, __cplusplus)},
          {"build type", RT_BUILD_TYPE},
          {"platform", fmt::format("{} {} {}", os.sysname, os.release, os.machine)}};
}

Json threads_section() {
  return {{"engine", rt::get_num_threads()},
          {"OpenMP max", omp_get_max_threads()},
          {"OpenBLAS", openblas_get_num_threads()},
          {"CPU cores", std::thread::hardware_concurrency()}};
}

// The instruction-set level of the CPU kernels (RT_CPU_CAPABILITY, rt/cpu_capability.h).
Json cpu_section() {
  return {{"capability", rt::cpu_capability()}, {"supported", rt::cpu_capability_supported()},
          {"vector math", "SLEEF"}};
}

Json blas_section() {
  return {{"library", "OpenBLAS"}, {"config", openblas_get_config()}, {"parallel", openblas_parallel_mode()}};
}

// rt.backends.mkldnn: the oneDNN CPU convolutions run on, and whether they are on (RT_ONEDNN).
Json onednn_section() {
  return {{"version", rt::backends::mkldnn::version()},
          {"enabled", rt::backends::mkldnn::enabled() ? "yes (conv2d/conv1d on the CPU)"
                                                      : "no (RT_ONEDNN=0 or switched off: im2col + GEMM)"}};
}

Json module_entry(const ModuleProbe& probe, bool want_location) {
  if (!probe.importable) return {{"available", false}, {"error", probe.error}};
  Json entry = {{"available", true}, {"version", probe.version}};
  if (want_location) entry["location"] = probe.location;
  return entry;
}

Json python_section() {
  Json dirs = Json::array();
  for (const auto& dir : python_package_dirs()) dirs.push_back(dir.string());
  try {
    EmbeddedInterpreter py;
    return {{"version", py.version()},
            {"executable", py.executable()},
            {"package dirs", dirs},
            {"rustytorch", module_entry(py.probe("rustytorch._C"), true)},
            {"numpy", module_entry(py.probe("numpy"), false)},
            {"torch", module_entry(py.probe("torch"), false)}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

Json cuda_devices(const CudaBackend& cuda) {
  Json devices = Json::array();
  for (const CudaBackend::Device& d : cuda.devices)
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"capability", fmt::format("{}.{}", d.major, d.minor)},
                       {"total memory", d.total_memory},
                       {"multiprocessors", d.multiprocessors}});
  return devices;
}

// CUDA: what the engine reports (built, usable, version, its devices); "GPU devices": what the
// driver shows, found by dlopen whether or not this build can use them.
Json optional_section() {
  const GpuProbe gpu = probe_gpu();
  const CudaBackend cuda = probe_cuda_backend();
  Json parts = Json::object();
  for (const OptionalPart& part : probe_optional_parts(gpu, cuda))
    parts[part.name] = {{"built", part.built}, {"usable", part.usable}, {"detail", part.detail}};
  parts["CUDA"]["version"] = cuda.version;
  parts["CUDA"]["devices"] = cuda_devices(cuda);
  Json devices = Json::array();
  for (const auto& d : gpu.devices) devices.push_back(d);
  parts["GPU devices"] = devices;
  return parts;
}

std::string text_of(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string module_text(const Json& entry, bool optional) {
  if (!entry.value("available", false)) {
    const std::string error = entry.value("error", "");
    if (optional && error.starts_with("ModuleNotFoundError")) return "not installed";
    return fmt::format("not importable ({})", error);
  }
  std::string text = entry.value("version", "");
  if (text.empty()) text = "available";
  if (entry.contains("location")) text += fmt::format(" ({})", entry["location"].get<std::string>());
  return text;
}

void print_text(const Json& info) {
  fmt::print("rtorch {} — RustyTorch++\n", info["build"]["rustytorch"].get<std::string>());
  auto row = [](const std::string& key, const std::string& value) { fmt::print("  {:<14}{}\n", key, value); };
  for (const char* section : {"build", "threads", "CPU", "BLAS", "oneDNN"}) {
    fmt::print("\n{}\n", section);
    for (const auto& [key, value] : info[section].items()) row(key, text_of(value));
  }
  fmt::print("\nPython\n");
  const Json& py = info["python"];
  if (py.contains("error")) {
    row("embedded", py["error"].get<std::string>());
  } else {
    row("embedded", fmt::format("{} ({})", py["version"].get<std::string>(), py["executable"].get<std::string>()));
    row("rustytorch", module_text(py["rustytorch"], false));
    if (!py["rustytorch"]["available"].get<bool>())
      row("", fmt::format("searched: {}; build target rt_python_ext or set RT_PYTHONPATH",
                          py["package dirs"].empty() ? std::string("(no directory)") : py["package dirs"].dump()));
    for (const char* module : {"numpy", "torch"}) row(module, module_text(py[module], true));
  }
  fmt::print("\noptional parts\n");
  const Json& optional = info["optional"];
  for (const auto& [name, part] : optional.items()) {
    if (name == "GPU devices") {
      if (optional["CUDA"]["devices"].empty())  // otherwise listed under CUDA
        for (const auto& device : part) row("GPU", device.get<std::string>());
      continue;
    }
    const std::string state = part["built"].get<bool>() ? (part["usable"].get<bool>() ? "usable" : "built, not usable")
                                                        : "not built";
    row(name, fmt::format("{} — {}", state, part["detail"].get<std::string>()));
    if (name == "CUDA")
      for (const auto& d : part["devices"])
        row(fmt::format("  cuda:{}", d["index"].get<int>()),
            fmt::format("{}, compute {}, {:.1f} GiB, {} multiprocessors", d["name"].get<std::string>(),
                        d["capability"].get<std::string>(), d["total memory"].get<double>() / (1ull << 30),
                        d["multiprocessors"].get<int>()));
  }
}

class InfoCommand final : public Command {
 public:
  std::string name() const override { return "info"; }
  std::string summary() const override {
    return "Show versions, BLAS, oneDNN, threads, Python packages and optional parts (CUDA, CUPTI, NCCL, MPI)";
  }
  void configure(CLI::App& app) override { app.add_flag("--json", json_, "Print the report as one JSON object"); }

  int execute(const GlobalOptions&) override {
    Json info = {{"build", build_section()},
                 {"threads", threads_section()},
                 {"CPU", cpu_section()},
                 {"BLAS", blas_section()},
                 {"oneDNN", onednn_section()},
                 {"python", python_section()},
                 {"optional", optional_section()}};
    if (json_)
      fmt::print("{}\n", info.dump(2));
    else
      print_text(info);
    return 0;
  }

 private:
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_info_command() { return std::make_unique<InfoCommand>(); }

}  // namespace rt::cli
