#include "attach/attach_host.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <future>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rt::studio {
namespace {

const std::string kNoProgram;

// What the rank's agent says of itself; never throws.
RankListing ask_status(const remote::AgentManifest& m, std::chrono::milliseconds timeout) {
  RankListing r;
  r.manifest = m;
  try {
    auto client = remote::AgentClient::connect(m.socket, "rtorch-studio attach list", timeout);
    const auto s = nlohmann::json::parse(client.request("status", timeout));
    r.answering = true;
    r.recording = s.value("recording", false);
    r.session_name = s.value("session_name", std::string());
    r.steps = s.value("steps", int64_t(0));
    r.ops = s.value("ops", uint64_t(0));
    r.clients = std::max(0, s.value("clients", 1) - 1);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

const std::string& JobListing::program() const { return ranks.empty() ? kNoProgram : ranks.front().manifest.program; }

LocalHost::LocalHost(std::filesystem::path runtime_dir) : runtime_dir_(std::move(runtime_dir)) {}

std::string LocalHost::name() const {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return fmt::format("this machine ({})", buf);
}

std::vector<JobListing> LocalHost::list_jobs(std::chrono::milliseconds timeout) const {
  const std::filesystem::path dir = runtime_dir_.empty() ? remote::ensure_runtime_dir() : runtime_dir_;
  const std::vector<remote::AgentManifest> manifests = remote::list_manifests(dir);
  std::vector<std::future<RankListing>> answers;
  answers.reserve(manifests.size());
  for (const remote::AgentManifest& m : manifests)
    answers.push_back(std::async(std::launch::async, ask_status, m, timeout));
  std::vector<JobListing> jobs;
  const std::string host = name();
  for (auto& answer : answers) {
    RankListing r = answer.get();
    if (jobs.empty() || jobs.back().job != r.manifest.job) jobs.push_back({r.manifest.job, host, {}});
    jobs.back().ranks.push_back(std::move(r));
  }
  return jobs;
}

remote::AgentClient LocalHost::connect(const remote::AgentManifest& rank, std::chrono::milliseconds timeout) const {
  return remote::AgentClient::connect(rank.socket, "rtorch-studio", timeout);
}

std::optional<bool> LocalHost::process_running(int pid) const {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  // A killed child its parent has not reaped yet still answers kill(): it is a zombie, not running.
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  const char state = line[paren + 2];
  return state != 'Z' && state != 'X';
}

std::vector<std::shared_ptr<const AttachHost>> attach_hosts() {
  return {std::make_shared<LocalHost>()};
}

}  // namespace rt::studio
