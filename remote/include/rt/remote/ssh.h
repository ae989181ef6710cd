// rt/remote/ssh.h — reaching agents on other machines through the system `ssh`: no port is opened, the data
// is encrypted, and ~/.ssh/config, keys, agents and jump hosts work as they do for the user's own ssh. On the
// far side `rtorch relay` (rt/remote/relay.h) joins ssh's stdin and stdout to the agent's Unix socket.
//
//   for (const rt::remote::AgentManifest& m : rt::remote::list_remote_manifests("gpu-node-3"))
//     clients.push_back(rt::remote::AgentClient::connect_command(
//         rt::remote::relay_command("gpu-node-3", m.job, m.rank), "my tool"));   // client.h
//
// Contracts
// - The ssh command is $RT_SSH when set (split into words like a shell: blanks separate, '...' and "..." quote;
//   e.g. RT_SSH="ssh -p 2222 -i ~/.ssh/lab_key"), else "ssh". The host follows, then the remote command:
//   $RT_REMOTE_RTORCH (default "rtorch": it must be on the remote PATH of a non-interactive shell) and its
//   arguments, each quoted for the remote shell.
// - host is what ssh accepts: "name", "user@name", an alias of ~/.ssh/config.
// - list_remote_manifests() runs `ssh HOST rtorch relay --list` within `timeout` and reads at most 4 MiB; it
//   throws rt::Error carrying ssh's stderr ("ssh: connect to host x port 22: Connection refused") and its exit
//   status when that fails. Lines that are not JSON objects (a chatty shell profile) are skipped.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/remote/manifest.h"

RT_API_BEGIN

namespace rt::remote {

// $RT_SSH (or "ssh") as words; throws rt::ValueError for an unclosed quote.
std::vector<std::string> ssh_program();
std::vector<std::string> ssh_command(const std::string& host, const std::vector<std::string>& rtorch_args);
// ssh HOST rtorch relay --job JOB --rank RANK
std::vector<std::string> relay_command(const std::string& host, const std::string& job, int rank);
std::vector<AgentManifest> list_remote_manifests(const std::string& host,
                                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// "HOST:JOB" split at its first ':' outside [...]; {"", text} when it names no host.
std::pair<std::string, std::string> split_host_job(const std::string& text);

}  // namespace rt::remote

RT_API_END
