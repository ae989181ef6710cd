// remote_attach_bench — remote attach's three figures (issue 22), with a real client in another process over the
// agent's Unix socket:
//   1. streaming: a thread issuing 1-element adds paced to --events-per-second events (each add records an op
//      and its result's allocation and free: 3 events) for --seconds; how many events per second the client
//      receives, and how many the agent dropped for it (target: 1M/s for 10 s, no drops);
//   2. slowdown: an MLP training step (784-256-128-10, Adam, batch 64) with a client attached and streaming, against
//      the same step with nobody attached (alternating blocks; target <= 5 %);
//   3. attach latency: connect, Hello, subscribe, until the first batch holding an op arrives (target <= 1 s).
//
//   build/bin/remote_attach_bench [--seconds 10] [--rounds 7] [--events-per-second 1000000]
//   build/bin/remote_attach_bench --client SOCKET MODE     (the client process; MODE stream or first-frame)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <string>
#include <vector>

#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/remote/event_batch.h"
#include "rt/rt.h"

namespace {

rt::remote::AgentOptions bench_agent_options() {
  rt::remote::AgentOptions o;
  o.job = "bench";
  return o;
}

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The client process: prints one line "ops=N dropped=D first_frame_s=T" when the connection ends.
int client_main(const char* socket, const std::string& mode) {
  const auto t0 = Clock::now();
  auto c = rt::remote::AgentClient::connect(socket, "remote_attach_bench");
  c.request("subscribe");
  double first = -1;
  // The agent's sessions complete and follow one another (Note [Bounded agent sessions]): count them all.
  uint64_t generation = c.resets(), earlier = 0, current = 0;
  for (;;) {
    const auto e = c.poll(200ms);
    if (c.resets() != generation) {
      earlier += current;
      generation = c.resets();
    }
    current = rt::remote::record_count(c.session());
    if (first < 0 && !c.session().ops.empty()) {
      first = seconds_since(t0);
      if (mode == "first-frame") break;
    }
    if (e == rt::remote::ClientEvent::Closed) break;
  }
  std::printf("ops=%zu records=%llu dropped=%llu first_frame_s=%.4f\n", c.session().ops.size(),
              (unsigned long long)(earlier + current),
              (unsigned long long)c.dropped_by_agent(), first);
  return 0;
}

struct ClientProcess {
  pid_t pid = -1;
  int out = -1;
  ClientProcess(const std::string& socket, const char* mode) {
    int p[2];
    if (::pipe(p) != 0) std::abort();
    pid = ::fork();
    if (pid == 0) {
      ::dup2(p[1], 1);
      ::close(p[0]);
      ::execl("/proc/self/exe", "remote_attach_bench", "--client", socket.c_str(), mode, (char*)nullptr);
      ::_exit(127);
    }
    ::close(p[1]);
    out = p[0];
  }
  std::string finish() {
    std::string text;
    char buf[256];
    for (ssize_t n; (n = ::read(out, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
    ::close(out);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return text;
  }
};

long long field(const std::string& line, const char* key) {
  const auto at = line.find(key);
  return at == std::string::npos ? -1 : std::atoll(line.c_str() + at + std::strlen(key));
}
double field_f(const std::string& line, const char* key) {
  const auto at = line.find(key);
  return at == std::string::npos ? -1 : std::atof(line.c_str() + at + std::strlen(key));
}

// Waits until the agent reports a subscriber (the client's subscribe reply was sent).
void wait_subscribed(const std::string& socket) {
  auto probe = rt::remote::AgentClient::connect(socket, "probe");
  for (int i = 0; i < 500; ++i) {
    if (probe.request("status").find("\"session\":0") == std::string::npos) return;
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "--client") == 0) return client_main(argv[2], argv[3]);
  double seconds = 10;
  int rounds = 7;
  double events_per_second = 1e6;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--events-per-second") == 0) events_per_second = std::atof(argv[i + 1]);
  }
  char tmpl[] = "/tmp/rt-remote-bench-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl);
  ::setenv("RT_RUNTIME_DIR", dir.c_str(), 1);
  rt::set_num_threads(1);

  // 1. Streaming.
  {
    const auto m = rt::remote::serve(bench_agent_options());
    ClientProcess client(m.socket, "stream");
    wait_subscribed(m.socket);
    auto a = rt::ones({1}), b = rt::ones({1});
    long long issued = 0;
    const double adds_per_second = events_per_second / 3;
    const auto t0 = Clock::now();
    while (seconds_since(t0) < seconds) {
      for (int i = 0; i < 1000; ++i) (void)rt::add(a, b);
      issued += 1000;
      const double ahead = issued / adds_per_second - seconds_since(t0);
      if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    }
    const double took = seconds_since(t0);
    rt::remote::stop_serving(10000ms);
    const std::string r = client.finish();
    const long long records = field(r, "records="), dropped = field(r, "dropped=");
    std::printf("streaming: %lld adds in %.1f s (%.2f M events/s issued); client received %lld events (%.2f M/s), "
                "agent dropped %lld\n",
                issued, took, 3 * issued / took / 1e6, records, records / took / 1e6, dropped);
  }

  // 2. Slowdown of a training step while attached.
  {
    rt::manual_seed(0);
    auto model = std::make_shared<rt::nn::Sequential>(
        std::make_shared<rt::nn::Linear>(784, 256), std::make_shared<rt::nn::ReLU>(),
        std::make_shared<rt::nn::Linear>(256, 128), std::make_shared<rt::nn::ReLU>(),
        std::make_shared<rt::nn::Linear>(128, 10));
    rt::optim::Adam opt(model->parameters(), {.lr = 1e-3});
    auto x = rt::randn({64, 784});
    auto y = rt::randint(0, 10, {64});
    auto step = [&] {
      auto loss = rt::cross_entropy((*model)(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
    };
    auto block = [&] {
      const auto t0 = Clock::now();
      for (int i = 0; i < 50; ++i) step();
      return seconds_since(t0) / 50;
    };
    for (int i = 0; i < 20; ++i) step();
    const auto m = rt::remote::serve(bench_agent_options());
    std::vector<double> ratios, plain_ms;
    for (int r = 0; r < rounds; ++r) {
      const double plain = block();
      ClientProcess client(m.socket, "stream");
      wait_subscribed(m.socket);
      const double attached = block();
      rt::remote::stop_serving(5000ms);
      client.finish();
      rt::remote::serve(bench_agent_options());
      ratios.push_back(attached / plain);
      plain_ms.push_back(plain * 1e3);
    }
    rt::remote::stop_serving(0ms);
    std::sort(ratios.begin(), ratios.end());
    std::printf("slowdown: MLP step %.2f ms unattached; attached/unattached median %.3f (min %.3f, max %.3f, %d rounds)\n",
                median(plain_ms), median(ratios), ratios.front(), ratios.back(), rounds);
  }

  // 3. Attach to first live frame.
  {
    const auto m = rt::remote::serve(bench_agent_options());
    std::vector<double> firsts;
    for (int r = 0; r < rounds; ++r) {
      ClientProcess client(m.socket, "first-frame");
      auto a = rt::ones({1}), b = rt::ones({1});
      std::string text;
      // Training keeps issuing ops (at the streaming figure's rate) while the client attaches; the client exits
      // after its first frame.
      const auto t0 = Clock::now();
      long long issued = 0;
      for (int status = 0; ::waitpid(client.pid, &status, WNOHANG) == 0;) {
        for (int i = 0; i < 100; ++i) (void)rt::add(a, b);
        issued += 100;
        const double ahead = issued / (events_per_second / 3) - seconds_since(t0);
        if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
      }
      char buf[256];
      for (ssize_t n; (n = ::read(client.out, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
      ::close(client.out);
      firsts.push_back(field_f(text, "first_frame_s="));
    }
    rt::remote::stop_serving(0ms);
    std::sort(firsts.begin(), firsts.end());
    std::printf("attach: connect to first live frame median %.3f s (min %.3f, max %.3f, %d rounds)\n", median(firsts),
                firsts.front(), firsts.back(), rounds);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
