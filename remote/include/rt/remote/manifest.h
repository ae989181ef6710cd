// rt/remote/manifest.h — where attachable processes announce themselves: each agent listens on a Unix socket
// in a per-user runtime folder and writes a manifest (JSON) beside it, so `rtorch ps`, `rtorch attach` and the
// studio find every job and rank on this machine without opening a port.
//
//   std::filesystem::path dir = rt::remote::ensure_runtime_dir();    // created 0700, checked
//   for (const rt::remote::AgentManifest& m : rt::remote::list_manifests(dir))   // stale ones pruned
//     std::printf("%s rank %d pid %d %s\n", m.job.c_str(), m.rank, m.pid, m.socket.c_str());
//
// Contracts
// - runtime_dir(): $RT_RUNTIME_DIR when set, else $XDG_RUNTIME_DIR/rustytorch, else /tmp/rustytorch-<uid>.
//   ensure_runtime_dir() creates it with mode 0700 and refuses (rt::Error naming the folder and the fix) one
//   that another user owns or that group or others can open: a socket there is only as private as its folder.
// - A manifest is written atomically (temporary file and rename), mode 0600; its socket is <stem>.sock beside
//   <stem>.json, stem = "<job>.r<rank>.<pid>".
// - list_manifests reads every *.json, skips (without failing) files that are not manifests, and removes the
//   manifest and socket of a process that no longer exists (prune = true). Sorted by job, then rank.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::remote {

struct AgentManifest {
  std::string job;            // RT_LAUNCH_JOB_ID / TORCHELASTIC_RUN_ID / SLURM_JOB_ID, else "<program>-<pid>"
  int rank = 0;               // RANK, else 0
  int world_size = 1;         // WORLD_SIZE, else 1
  std::string host;           // gethostname
  int pid = 0;
  int64_t start_time_ms = 0;  // Unix epoch, when the agent started
  std::string program;        // the command line, as /proc/self/cmdline has it (arguments space-separated)
  std::string rt_version;     // RustyTorch release
  int protocol = 0;           // rt::remote::kProtocolVersion
  std::string socket;         // absolute path of the agent's Unix socket
  std::string listen;         // "ADDR:PORT" when it also listens on TCP (rt/remote/tcp.h), else ""
};

std::filesystem::path runtime_dir();
std::filesystem::path ensure_runtime_dir();

std::string manifest_json(const AgentManifest& m);
AgentManifest parse_manifest(const std::string& json);  // throws rt::ValueError naming the missing field
void write_manifest(const std::filesystem::path& path, const AgentManifest& m);
std::vector<AgentManifest> list_manifests(const std::filesystem::path& dir, bool prune = true);

}  // namespace rt::remote

RT_API_END
