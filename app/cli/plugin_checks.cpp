#include "plugin_checks.h"

#include <fmt/core.h>

#include <cstring>

#include "rt/plugin_host/importer_checks.h"
#include "rt/plugin_host/op_checks.h"
#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/plugin_manager.h"

namespace rt::cli {
namespace {

using rt::plugin::PluginState;

}  // namespace

std::vector<CheckFinding> run_plugin_checks(const std::filesystem::path& dir,
                                            const std::function<void(const std::string&)>& announce,
                                            const std::function<void(const CheckFinding&)>& emit) {
  std::vector<CheckFinding> all;
  auto report = [&](std::string check, bool ok, std::string detail) {
    all.push_back({std::move(check), ok, std::move(detail)});
    emit(all.back());
    return ok;
  };

  rt::plugin::ManagerOptions options;
  options.app = "rtorch-check";
  options.on_phase = [&](const std::string&, const char* phase) { announce(phase); };
  rt::plugin::PluginManager pm(options);
  pm.discover(rt::plugin::default_search_paths());  // for its dependencies
  rt::plugin::PluginRecord& r = const_cast<rt::plugin::PluginRecord&>(pm.add(dir));
  if (r.state == PluginState::Invalid) return report("load", false, r.error), all;
  if (r.state == PluginState::Disabled) r.state = PluginState::Found;  // checking is asking for it explicitly
  if (r.manifest.has_kind(rt::plugin::Kind::Panel))
    return report("load", false,
                  "panel plugins are checked by the studio, which hosts Dear ImGui: "
                  "rtorch-studio --check-plugin DIR"),
           all;

  for (const rt::plugin::Dependency& d : r.manifest.dependencies) {
    announce("dependencies");
    try {
      pm.load_one(d.id);
    } catch (const std::exception& e) {
      return report("dependencies", false, e.what()), all;
    }
    const rt::plugin::PluginRecord* dep = pm.find(d.id);
    if (!dep || dep->state != PluginState::Running)
      return report("dependencies", false, fmt::format("{}: {}", d.id, dep ? dep->error : "not installed")), all;
  }

  pm.load_one(r.manifest.id);
  if (!r.info) return report("load", false, r.error), all;
  report("load", true,
         fmt::format("ABI {}.{} (host {}.{}), {:.1f} ms", r.info->abi_major, r.info->abi_minor, RT_PLUGIN_ABI_MAJOR,
                     RT_PLUGIN_ABI_MINOR, r.load_ms));
  if (r.state != PluginState::Running) return report("initialize", false, r.error), all;
  report("initialize", true, fmt::format("{:.1f} ms, then extensions_initialized and delayed_initialize",
                                         r.initialize_ms));

  if (r.info->self_test) {
    announce("self-test");
    RtError error{};
    RtStatus status = RT_STATUS_ERROR;
    try {
      status = r.info->self_test(rt::plugin::host_api(), &error);
    } catch (...) {
      std::strncpy(error.message, "threw a C++ exception across the C boundary", sizeof error.message - 1);
    }
    report("self-test", status == RT_STATUS_OK,
           status == RT_STATUS_OK ? "passed" : fmt::format("failed: {}", error.message));
  } else {
    report("self-test", true, "none (RtPluginInfo.self_test is NULL)");
  }

  if (r.manifest.has_kind(rt::plugin::Kind::Ops)) {
    // Each of its ops, as torch.library.opcheck does: schema against mutation and aliasing, a backward,
    // float64 gradcheck, CPU against CUDA where a device exists (op_checks.h).
    for (const rt::plugin::OpInfo* op : rt::plugin::registered_ops()) {
      if (op->plugin_id != r.manifest.id) continue;
      announce(op->qualified_name);
      auto sample = rt::plugin::find_sample_arguments(*op);
      if (!sample) {
        report(op->qualified_name, false,
               "no sample arguments: its CPU kernel refused float64 tensors of shapes [3, 4], [3, 4]+[4], [4] and "
               "[2, 3, 4]; test it with rt::plugin::check_op and arguments of your own");
        continue;
      }
      for (const rt::plugin::OpCheck& c : rt::plugin::check_op(*op, *sample))
        report(fmt::format("{}: {}", op->qualified_name, c.name), c.passed,
               c.skipped ? "skipped: " + c.detail : c.detail);
    }
  }

  if (r.manifest.has_kind(rt::plugin::Kind::Importer)) {
    // Round trip and fuzzing over the plugin's own samples, each run out of process (importer_checks.h).
    std::vector<std::filesystem::path> samples = rt::plugin::importer_samples(r.manifest);
    if (samples.empty())
      report("importer", true,
             fmt::format("not fuzzed: no sample files in {}/samples (add one to have the importer round-tripped "
                         "and fed truncated and corrupted copies)",
                         r.manifest.folder().string()));
    for (const std::filesystem::path& sample : samples) {
      announce("importer");
      std::vector<rt::plugin::ImporterFinding> findings = rt::plugin::check_importer(r.manifest, sample);
      for (const auto& f : findings) report(f.check, false, fmt::format("{}: {}", sample.filename().string(), f.message));
      if (findings.empty())
        report("importer", true,
               fmt::format("{}: imports, {}truncated and byte-flipped copies import or are refused cleanly",
                           sample.filename().string(),
                           r.manifest.has_kind(rt::plugin::Kind::Exporter) ? "round-trips through the exporter, " : ""));
    }
  }

  pm.shutdown();
  report("shutdown", r.state == PluginState::Stopped, rt::plugin::state_name(r.state));
  return all;
}

}  // namespace rt::cli
