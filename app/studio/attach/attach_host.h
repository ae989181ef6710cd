// app/studio/attach/attach_host.h — the machines the studio's Attach dialog can reach, and the attachable jobs
// on each: a job's ranks as their manifests say (rt/remote/manifest.h) plus what each agent answers to "status".
//
//   for (const std::shared_ptr<const AttachHost>& host : attach_hosts())     // "this machine" first
//     for (const JobListing& job : host->list_jobs(std::chrono::milliseconds(1000)))   // blocks: a worker thread
//       std::printf("%s on %s: %zu ranks\n", job.job.c_str(), host->name().c_str(), job.ranks.size());
//   rt::remote::AgentClient c = host->connect(job.ranks[0].manifest, std::chrono::seconds(2));
//
// Contracts
// - list_jobs and connect do network I/O and block (each read bounded by `timeout`): never call them on the GUI
//   thread. list_jobs asks every rank's agent for its status at the same time, so N silent ranks cost one timeout,
//   not N. A rank that does not answer is listed with answering = false and the reason; listing never throws for
//   one rank, only when the host's runtime folder cannot be used (rt::Error naming it and the fix).
// - Jobs are sorted by name, ranks by rank (as list_manifests sorts them); stale manifests are pruned.
// - process_running(pid): whether the rank's process still runs, when the host can tell (this machine can;
//   nullopt otherwise). A rank whose connection closed is "process exited" when it does not.
//
// Note [SSH hosts seam]
// attach_hosts() lists only LocalHost today. Attaching over SSH (`ssh HOST rtorch relay --job J`, issue 22) is
// another AttachHost: its list_jobs runs `rtorch ps --json` there, its connect returns an AgentClient over the
// relay's stream. The dialog, AttachedJob and the session picker only use this interface, so adding that host
// (and listing it in attach_hosts()) is the whole change on the studio's side.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/remote/client.h"
#include "rt/remote/manifest.h"

namespace rt::studio {

struct RankListing {
  remote::AgentManifest manifest;
  bool answering = false;
  std::string error;         // why it did not answer ("" when it did)
  bool recording = false;    // a profiling session records in the rank
  std::string session_name;  // ... its name
  int64_t steps = 0;         // steps the session recorded so far
  uint64_t ops = 0;          // ops it recorded so far
  int clients = 0;           // clients attached to the agent, this listing's excepted
};

struct JobListing {
  std::string job;
  std::string host;          // the AttachHost's name()
  std::vector<RankListing> ranks;
  int world_size() const { return ranks.empty() ? 0 : ranks.front().manifest.world_size; }
  const std::string& program() const;
};

class AttachHost {
 public:
  virtual ~AttachHost() = default;
  virtual std::string name() const = 0;  // shown in the dialog: "this machine (hostname)"
  virtual std::vector<JobListing> list_jobs(std::chrono::milliseconds timeout) const = 0;
  virtual remote::AgentClient connect(const remote::AgentManifest& rank, std::chrono::milliseconds timeout) const = 0;
  virtual std::optional<bool> process_running(int pid) const = 0;
};

// The processes of this user on this machine, found in rt::remote::runtime_dir() (or `runtime_dir`).
class LocalHost final : public AttachHost {
 public:
  explicit LocalHost(std::filesystem::path runtime_dir = {});
  std::string name() const override;
  std::vector<JobListing> list_jobs(std::chrono::milliseconds timeout) const override;
  remote::AgentClient connect(const remote::AgentManifest& rank, std::chrono::milliseconds timeout) const override;
  std::optional<bool> process_running(int pid) const override;

 private:
  std::filesystem::path runtime_dir_;  // "" = rt::remote::ensure_runtime_dir() at each listing
};

// The hosts the Attach dialog offers, this machine first. See Note [SSH hosts seam].
std::vector<std::shared_ptr<const AttachHost>> attach_hosts();

}  // namespace rt::studio
