// The protocol over a program's stdin and stdout (AgentClient::connect_command), as `rtorch attach HOST:JOB`
// uses it with `ssh HOST rtorch relay`: here the real `rtorch relay` runs locally (no ssh; tests/cli/
// test_attach_ssh.py adds a real sshd), against the agent in this test process. Also: a failing command's
// stderr reaches the user, a missing program is named, and the child is reaped.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/remote/manifest.h"
#include "rt/remote/ssh.h"
#include "rt/rt.h"
#include "runtime_dir.h"

using namespace rt;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// rtorch beside this test binary (build/bin).
std::string rtorch() { return (fs::read_symlink("/proc/self/exe").parent_path() / "rtorch").string(); }

bool no_children_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

int64_t count_ops(const prof::SessionData& d, const std::string& name) {
  int64_t n = 0;
  for (const auto& op : d.ops)
    if (d.strings.at(op.name) == name) ++n;
  return n;
}

}  // namespace

TEST_CASE("a client speaks to an agent through `rtorch relay` on a pipe pair, and reaps it", "[remote][relay]") {
  REQUIRE(fs::exists(rtorch()));
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "relay-job", .rank = 1, .world_size = 2});
  {
    auto client = remote::AgentClient::connect_command({rtorch(), "relay", "--job", "relay-job", "--rank", "1"},
                                                       "test_command_transport");
    CHECK(client.agent().job == "relay-job");
    CHECK(client.agent().rank == 1);
    CHECK(client.scope() == remote::AccessScope::Control);  // the relay is this user on the Unix socket
    CHECK_THAT(client.request("status"), Catch::Contains("\"rank\":1"));
    client.request("subscribe");
    auto w = rt::randn({8, 8});
    for (int i = 0; i < 9; ++i) (void)rt::matmul(w, w);
    for (int i = 0; i < 100 && count_ops(client.session(), "matmul") < 9; ++i) client.poll(50ms);
    CHECK(count_ops(client.session(), "matmul") == 9);
    remote::stop_serving(2000ms);
    while (client.poll(200ms) != remote::ClientEvent::Closed) {
    }
    CHECK(client.session().complete);
    CHECK(client.error().empty());  // the relay ended cleanly with the agent
  }
  CHECK(no_children_left());
  (void)m;
}

TEST_CASE("a relay that finds no such job says so through the protocol", "[remote][relay]") {
  REQUIRE(fs::exists(rtorch()));
  RuntimeDir dir;
  remote::serve({.job = "present"});
  CHECK_THROWS_WITH(remote::AgentClient::connect_command({rtorch(), "relay", "--job", "absent"}),
                    Catch::Contains("no attachable job 'absent'") && Catch::Contains("running: present"));
  CHECK(no_children_left());
}

TEST_CASE("what a failing command writes to stderr reaches the user", "[remote][relay]") {
  // What ssh does when nothing listens on the host's port 22.
  CHECK_THROWS_WITH(
      remote::AgentClient::connect_command(
          {"sh", "-c", "echo 'ssh: connect to host x port 22: Connection refused' >&2; exit 255"}),
      Catch::Contains("ssh: connect to host x port 22: Connection refused") &&
          Catch::Contains("exited with status 255"));
  CHECK_THROWS_WITH(remote::AgentClient::connect_command({"rt-no-such-program-here", "host"}),
                    Catch::Contains("cannot start 'rt-no-such-program-here'"));
  // A program that never answers is given up on at the timeout, and killed.
  CHECK_THROWS_WITH(remote::AgentClient::connect_command({"sleep", "30"}, "t", 300ms),
                    Catch::Contains("did not answer Hello within 300 ms"));
  CHECK(no_children_left());
}

TEST_CASE("the ssh command honours RT_SSH and RT_REMOTE_RTORCH and quotes for the remote shell", "[remote][ssh]") {
  ::unsetenv("RT_SSH");
  ::unsetenv("RT_REMOTE_RTORCH");
  CHECK(remote::relay_command("gpu1", "job-1", 0) ==
        std::vector<std::string>{"ssh", "gpu1", "rtorch", "relay", "--job", "job-1", "--rank", "0"});
  ::setenv("RT_SSH", "ssh -p 2222 -i '/keys/my key' -o StrictHostKeyChecking=no", 1);
  ::setenv("RT_REMOTE_RTORCH", "/opt/rt/bin/rtorch", 1);
  CHECK(remote::ssh_command("me@gpu1", {"relay", "--job", "it's"}) ==
        std::vector<std::string>{"ssh", "-p", "2222", "-i", "/keys/my key", "-o", "StrictHostKeyChecking=no",
                                 "me@gpu1", "/opt/rt/bin/rtorch", "relay", "--job", "'it'\\''s'"});
  ::setenv("RT_SSH", "ssh -i 'unclosed", 1);
  CHECK_THROWS_WITH(remote::ssh_program(), Catch::Contains("unclosed"));
  ::unsetenv("RT_SSH");
  ::unsetenv("RT_REMOTE_RTORCH");
  CHECK_THROWS_WITH(remote::ssh_command("-oProxyCommand=x", {}), Catch::Contains("not a host name"));
  CHECK(remote::split_host_job("gpu1:job") == std::pair<std::string, std::string>{"gpu1", "job"});
  CHECK(remote::split_host_job("me@gpu1:job") == std::pair<std::string, std::string>{"me@gpu1", "job"});
  CHECK(remote::split_host_job("[::1]:job") == std::pair<std::string, std::string>{"::1", "job"});
  CHECK(remote::split_host_job("job") == std::pair<std::string, std::string>{"", "job"});
}

TEST_CASE("listing a host's jobs through a failing ssh reports ssh's words", "[remote][ssh]") {
  ::setenv("RT_SSH", "sh -c 'echo \"ssh: Could not resolve hostname nohost: Name or service not known\" >&2; exit 255'", 1);
  CHECK_THROWS_WITH(remote::list_remote_manifests("nohost"),
                    Catch::Contains("Could not resolve hostname nohost") && Catch::Contains("status 255"));
  ::unsetenv("RT_SSH");
  CHECK(no_children_left());
}
