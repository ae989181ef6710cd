// `rtorch ps [--json]`: the attachable processes on this machine (rt/remote/manifest.h), one line per rank,
// with what each agent says of itself. Manifests of processes that are gone are pruned.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "command.h"
#include "rt/remote/client.h"
#include "rt/remote/manifest.h"

namespace rt::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string uptime(int64_t start_ms) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t s = std::max<int64_t>(0, (now - start_ms) / 1000);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

// What the agent says of itself, or why it did not answer.
Json status_of(const rt::remote::AgentManifest& m) {
  try {
    auto client = rt::remote::AgentClient::connect(m.socket, "rtorch ps", std::chrono::milliseconds(1000));
    return Json::parse(client.request("status", std::chrono::milliseconds(1000)));
  } catch (const std::exception& e) {
    return Json{{"error", e.what()}};
  }
}

class PsCommand final : public Command {
 public:
  std::string name() const override { return "ps"; }
  std::string summary() const override { return "List attachable runs and ranks on this machine"; }
  void configure(CLI::App& app) override {
    app.add_flag("--json", json_, "Print one JSON object per rank, one per line");
    app.footer("Runs become attachable with `rtorch run --attach`, `rtorch launch --attach`, RT_ATTACH=1 or\n"
               "rt.remote.serve(); attach with `rtorch attach JOB` or the studio's Attach dialog.");
  }

  int execute(const GlobalOptions&) override {
    std::vector<rt::remote::AgentManifest> ranks;
    try {
      ranks = rt::remote::list_manifests(rt::remote::ensure_runtime_dir());
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch ps: {}\n", e.what());
      return 1;
    }
    if (!json_ && ranks.empty()) {
      fmt::print("no attachable runs on this machine (start one with `rtorch run --attach` or "
                 "`rtorch launch --attach`)\n");
      return 0;
    }
    if (!json_) fmt::print("{:<28} {:>9} {:>8} {:>8}  {:<24} {}\n", "JOB", "RANK", "PID", "UPTIME", "STATE", "PROGRAM");
    for (const auto& m : ranks) {
      const Json status = status_of(m);
      if (json_) {
        Json line = Json::parse(rt::remote::manifest_json(m));
        line["status"] = status;
        fmt::print("{}\n", line.dump());
        continue;
      }
      std::string state;
      if (status.contains("error"))
        state = "not answering";
      else if (status.value("recording", false))
        state = fmt::format("recording, {} steps", status.value("steps", 0));
      else
        state = fmt::format("idle, {} client{}", status.value("clients", 0) - 1, status.value("clients", 0) == 2 ? "" : "s");
      fmt::print("{:<28} {:>9} {:>8} {:>8}  {:<24} {}\n", m.job, fmt::format("{}/{}", m.rank, m.world_size), m.pid,
                 uptime(m.start_time_ms), state, m.program.substr(0, 60));
    }
    return 0;
  }

 private:
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_ps_command() { return std::make_unique<PsCommand>(); }

}  // namespace rt::cli
