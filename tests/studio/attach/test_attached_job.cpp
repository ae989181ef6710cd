// The studio's attach model without Qt, against real processes: `rtorch run --attach` trains in a private runtime
// folder; LocalHost lists it with what its agent says, AttachedSessions attaches (an AttachedJob mirroring the rank
// on its worker thread), a reader sees the rank's ops arrive, and killing the process, detaching, or an agent that
// never answers each show as such.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "attach/attached_sessions.h"
#include "attach/rank_rows.h"
#include "attach_test_process.h"

using namespace rt;
using namespace rt::studio;
using namespace rt::studio::test;
using namespace std::chrono_literals;

namespace {

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

struct Reader {
  prof::SnapshotCursor cursor;
  prof::SessionData data;
  bool read(const AttachedSessions& sessions, uint64_t id) {
    auto d = sessions.read_since(id, cursor);
    if (!d) return false;
    cursor = d->cursor;
    if (d->reset) data = std::move(d->records);
    else prof::append_delta(data, std::move(*d));
    return true;
  }
  bool has_op(const std::string& name) const {
    for (const auto& op : data.ops)
      if (data.strings.at(op.name) == name) return true;
    return false;
  }
};

JobListing list_one_job(const LocalHost& host, const std::string& job) {
  std::vector<JobListing> jobs;
  REQUIRE(wait_for([&] {
    jobs = host.list_jobs(2000ms);
    return jobs.size() == 1 && jobs[0].ranks.size() == 1 && jobs[0].ranks[0].answering;
  }, 30s));
  REQUIRE(jobs[0].job == job);
  return jobs[0];
}

}  // namespace

TEST_CASE("an attached rank's session grows in the studio until its process is killed") {
  PrivateRuntimeDir dir;
  AttachableProcess process(dir, "studio-attach-test", 0, 1);
  INFO(process.log());
  REQUIRE(process.wait_ready(120000));
  auto host = std::make_shared<LocalHost>(dir.path);

  const JobListing listed = list_one_job(*host, "studio-attach-test");
  const RankListing& rank = listed.ranks[0];
  CHECK(rank.manifest.pid == process.pid());
  CHECK(rank.manifest.rank == 0);
  CHECK(listed.world_size() == 1);
  CHECK(listed.program().find("attachable_training.py") != std::string::npos);
  std::vector<RankRow> rows = rank_rows(listed, nullptr);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].pid == std::to_string(process.pid()));
  CHECK(rows[0].rank == "0/1");
  CHECK(rows[0].dropped == "\u2014");
  CHECK_FALSE(rows[0].problem);

  AttachedSessions sessions;
  std::shared_ptr<AttachedJob> job = sessions.attach(host, listed);
  REQUIRE(sessions.list().size() == 1);
  const AttachedSessionInfo info = sessions.list()[0];
  CHECK(info.name == "studio-attach-test rank 0 (attached)");
  CHECK(info.rank == 0);
  // Attaching the same job again while attached is refused by name.
  REQUIRE_THROWS_WITH(sessions.attach(host, listed), Catch::Contains("studio-attach-test") && Catch::Contains("attached already"));

  // The training's ops (the script's profile) arrive in the rank's session, with its steps.
  Reader reader;
  REQUIRE(wait_for([&] {
    reader.read(sessions, info.id);
    return reader.has_op("train_step") && reader.data.steps.size() >= 3;
  }, 60s));
  CHECK((reader.has_op("aten::linear") || reader.has_op("linear") || reader.data.ops.size() > 10));
  const RankState live = job->rank_state(0);
  CHECK(live.phase == RankPhase::Live);
  CHECK(live.batches > 0);
  REQUIRE(live.clock);  // measured when the rank went live; one machine, one steady clock: about 0
  CHECK(live.clock->round_trips == 8);
  CHECK(std::abs(live.clock->offset_ns) <= live.clock->error_ns + 1000);
  rows = rank_rows(listed, job.get());
  CHECK(rows[0].state == "live");
  CHECK(rows[0].dropped == "0");
  CHECK(rows[0].step_time != "\u2014");
  CHECK(std::stoul(rows[0].ops) > 0);

  // The process dies: the rank shows it, the worker ends, and what arrived stays readable.
  const size_t ops_before = reader.data.ops.size();
  process.kill();
  REQUIRE(wait_for([&] { return job->finished(); }, 30s));
  CHECK(job->rank_state(0).phase == RankPhase::ProcessExited);
  CHECK(sessions.list()[0].phase == RankPhase::ProcessExited);
  rows = rank_rows(listed, job.get());
  CHECK(rows[0].state.rfind("process exited", 0) == size_t(0));
  CHECK(rows[0].ended);
  REQUIRE(reader.read(sessions, info.id));
  CHECK(reader.data.ops.size() >= ops_before);
  Reader late;
  REQUIRE(late.read(sessions, info.id));
  CHECK(late.data.ops.size() == reader.data.ops.size());
  // The job is gone from the host's listing (its manifest pruned).
  CHECK(host->list_jobs(1000ms).empty());
  CHECK(host->process_running(process.pid()) == false);
}

TEST_CASE("detaching closes the connection, keeps what arrived, and the job can be attached again") {
  PrivateRuntimeDir dir;
  AttachableProcess process(dir, "studio-detach-test", 0, 1);
  INFO(process.log());
  REQUIRE(process.wait_ready(120000));
  auto host = std::make_shared<LocalHost>(dir.path);
  const JobListing listed = list_one_job(*host, "studio-detach-test");

  AttachedSessions sessions;
  auto job = sessions.attach(host, listed);
  const uint64_t id = sessions.list()[0].id;
  Reader reader;
  REQUIRE(wait_for([&] { return reader.read(sessions, id) && reader.has_op("train_step"); }, 60s));
  sessions.detach("studio-detach-test");
  REQUIRE(wait_for([&] { return job->finished(); }, 30s));
  CHECK(job->rank_state(0).phase == RankPhase::Detached);
  CHECK(process.running());
  REQUIRE(reader.read(sessions, id));
  CHECK(reader.has_op("train_step"));

  // Attached again: a new attachment replaces the finished one, with new ids.
  auto again = sessions.attach(host, list_one_job(*host, "studio-detach-test"));
  REQUIRE(sessions.list().size() == 1);
  CHECK(sessions.list()[0].id != id);
  CHECK_FALSE(sessions.read_since(id, {}).has_value());
  REQUIRE(wait_for([&] { return again->rank_state(0).phase == RankPhase::Live; }, 30s));
  sessions.clear();
  CHECK(sessions.list().empty());
}

TEST_CASE("a rank whose agent does not answer is listed and attached as not answering") {
  PrivateRuntimeDir dir;
  // A manifest of a running process (this one) whose socket nobody listens on.
  remote::AgentManifest m;
  m.job = "silent-job";
  m.rank = 0;
  m.world_size = 1;
  m.host = "localhost";
  m.pid = int(::getpid());
  m.program = "silent";
  m.protocol = 1;
  m.socket = (dir.path / "silent-job.r0.1.sock").string();
  remote::write_manifest(dir.path / "silent-job.r0.1.json", m);

  auto host = std::make_shared<LocalHost>(dir.path);
  const std::vector<JobListing> jobs = host->list_jobs(500ms);
  REQUIRE(jobs.size() == 1);
  REQUIRE(jobs[0].ranks.size() == 1);
  CHECK_FALSE(jobs[0].ranks[0].answering);
  CHECK_FALSE(jobs[0].ranks[0].error.empty());
  const std::vector<RankRow> rows = rank_rows(jobs[0], nullptr);
  CHECK(rows[0].state.rfind("not answering: ", 0) == size_t(0));
  CHECK(rows[0].problem);

  AttachedSessions sessions;
  auto job = sessions.attach(host, jobs[0], {.connect_timeout = 500ms, .request_timeout = 500ms});
  REQUIRE(wait_for([&] { return job->finished(); }, 30s));
  CHECK(job->rank_state(0).phase == RankPhase::NotAnswering);
  CHECK_FALSE(job->rank_state(0).message.empty());
  CHECK(rank_rows(jobs[0], job.get())[0].problem);
}

TEST_CASE("a rank that finishes its training shows process exited and keeps what it sent") {
  PrivateRuntimeDir dir;
  AttachableProcess process(dir, "studio-finish-test", 0, 1, 150);
  INFO(process.log());
  REQUIRE(process.wait_ready(120000));
  auto host = std::make_shared<LocalHost>(dir.path);
  AttachedSessions sessions;
  auto job = sessions.attach(host, list_one_job(*host, "studio-finish-test"));
  REQUIRE(wait_for([&] { return job->finished(); }, 120s));
  CHECK(job->rank_state(0).phase == RankPhase::ProcessExited);
  // The agent streams the script's session from its start. (Whether the final, sorted read of the stopped
  // session arrives depends on the agent reading it before the process tears the session down.)
  Reader reader;
  REQUIRE(reader.read(sessions, sessions.list()[0].id));
  CHECK(reader.data.steps.size() > 100);
  CHECK(reader.has_op("train_step"));
}

TEST_CASE("an agent that accepts and stays silent is not answering, within the timeouts") {
  PrivateRuntimeDir dir;
  // A socket that listens and never accepts: connect() succeeds (the backlog), nothing ever answers Hello.
  const std::string path = (dir.path / "silent-accept.r0.1.sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(fd, 8) == 0);
  remote::AgentManifest m;
  m.job = "silent-accept";
  m.pid = int(::getpid());
  m.host = "localhost";
  m.protocol = 1;
  m.socket = path;
  remote::write_manifest(dir.path / "silent-accept.r0.1.json", m);

  auto host = std::make_shared<LocalHost>(dir.path);
  const std::vector<JobListing> jobs = host->list_jobs(300ms);
  REQUIRE(jobs.size() == 1);
  CHECK_FALSE(jobs[0].ranks[0].answering);
  CHECK_THAT(jobs[0].ranks[0].error, Catch::Contains("did not answer"));
  AttachedSessions sessions;
  auto job = sessions.attach(host, jobs[0], {.connect_timeout = 300ms, .request_timeout = 300ms});
  REQUIRE(wait_for([&] { return job->finished(); }, 30s));
  CHECK(job->rank_state(0).phase == RankPhase::NotAnswering);
  CHECK_THAT(job->rank_state(0).message, Catch::Contains("did not answer"));
  ::close(fd);
}

TEST_CASE("the host list offers this machine only, and names it") {
  const auto hosts = attach_hosts();
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0]->name().rfind("this machine (", 0) == size_t(0));
  CHECK(hosts[0]->process_running(int(::getpid())) == true);
}

TEST_CASE("durations read as the rank table shows them") {
  CHECK(duration_text(-1) == "\u2014");
  CHECK(duration_text(312'000) == "312 \u00B5s");
  CHECK(duration_text(1'250'000) == "1.25 ms");
  CHECK(duration_text(2'400'000'000) == "2.4 s");
}
