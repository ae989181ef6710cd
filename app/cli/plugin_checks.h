// app/cli/plugin_checks.h — what `rtorch plugin check DIR` runs inside its child process.
//
//   std::vector<CheckFinding> all = run_plugin_checks("plugins/folded-stacks",
//       [](const std::string& check) { /* about to run `check` */ },
//       [](const CheckFinding& f) { /* one result, as soon as it is known */ });
//
// The checks, in order: load (dlopen, rt_plugin_entry, the ABI handshake against plugin.json), initialize,
// the plugin's own self_test, then those of its kinds. A crash inside any of them kills the child; the parent
// reports it against the check announced last.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rt::cli {

struct CheckFinding {
  std::string check;   // "load", "initialize", "self-test", ...
  bool ok = false;
  std::string detail;  // what was found, or what failed and how to fix it
};

std::vector<CheckFinding> run_plugin_checks(const std::filesystem::path& dir,
                                            const std::function<void(const std::string&)>& announce,
                                            const std::function<void(const CheckFinding&)>& emit);

}  // namespace rt::cli
