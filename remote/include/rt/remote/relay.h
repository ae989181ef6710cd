// rt/remote/relay.h — the far end of an SSH attach: `rtorch relay --job J --rank R`, run by ssh on the machine
// where the job runs, joins its stdin and stdout to that rank's agent socket (rt/remote/ssh.h is the near end).
//
//   const rt::remote::AgentManifest m = rt::remote::find_local_agent("train-42", 0);  // throws: what runs instead
//   return rt::remote::relay_stdio(m);   // until either side closes; the exit status of `rtorch relay`
//
// Contracts
// - relay_stdio copies bytes both ways through two bounded buffers (256 KiB each: a side that does not read
//   stops the other from being read, nothing grows). It parses nothing but the first frame header's magic:
//   a peer that does not speak the protocol gets an Error frame and a line on stderr, status 2. When stdin
//   ends, the agent's socket is shut for writing and what the agent still sends is delivered; when the agent
//   closes, the relay ends (status 0). An agent that cannot be reached: an Error frame and stderr, status 1.
// - The agent checks the relay's uid as for any local client: the ssh login user must be the job's user.
#pragma once
#include <string>

#include "rt/export.h"
#include "rt/remote/manifest.h"

RT_API_BEGIN

namespace rt::remote {

// The agent of `job` and `rank` on this machine (rank -1: the job's only rank; the newest process when a
// restarted rank left two). Throws rt::ValueError naming the jobs or ranks that run instead.
AgentManifest find_local_agent(const std::string& job, int rank);

int relay_stdio(const AgentManifest& agent, int in_fd = 0, int out_fd = 1);

// Writes an Error frame {"error": message} to `fd` (best effort, at most 2 s): how a relay that cannot serve
// tells the client why.
void write_error_frame(int fd, const std::string& message);

}  // namespace rt::remote

RT_API_END
