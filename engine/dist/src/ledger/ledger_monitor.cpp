#include "ledger_monitor.h"

#include <fmt/core.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "desync_check.h"

namespace rt::dist::detail {

namespace {
constexpr const char* kReportKey = "ledger/report";
std::string summary_key(int rank) { return fmt::format("ledger/summary/{}", rank); }
std::string stack_request_key(int rank) { return fmt::format("ledger/stack_request/{}", rank); }
std::string stack_key(int rank) { return fmt::format("ledger/stack/{}", rank); }
std::atomic<StackProvider> g_stack_provider{nullptr};

// What describe_silent_ranks reads: the running monitor's store, rank and job size.
struct Liveness {
  std::mutex mutex;
  std::shared_ptr<Store> store;
  int rank = -1, world_size = 0;
  Milliseconds interval{500};
};
Liveness& liveness() {
  static Liveness* l = new Liveness;
  return *l;
}

int64_t wall_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::string describe_silent_ranks(Milliseconds patience) {
  std::shared_ptr<Store> store;
  int me, world_size;
  Milliseconds interval;
  {
    Liveness& l = liveness();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (!l.store) return "";
    store = l.store;
    me = l.rank;
    world_size = l.world_size;
    interval = l.interval;
  }
  const int64_t stale_ms = 3 * interval.count();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    std::string silent;
    try {
      for (int r = 0; r < world_size; ++r) {
        if (r == me || !store->check({summary_key(r)})) continue;
        Bytes b = store->get(summary_key(r));
        auto j = nlohmann::json::parse(b.begin(), b.end(), nullptr, false);
        if (j.is_discarded() || !j.contains("wall_ms")) continue;
        const int64_t age = wall_ms_now() - j["wall_ms"].get<int64_t>();
        if (age > stale_ms)
          silent += fmt::format("{}rank {} stopped publishing its ledger summary {:.1f} s ago: it has most likely died",
                                silent.empty() ? "" : "; ", r, double(age) / 1e3);
      }
    } catch (const std::exception&) {
      return "the job's store (hosted by rank 0) no longer answers: rank 0 has died, or exited after a failure of "
             "its own";
    }
    if (!silent.empty() || std::chrono::steady_clock::now() >= deadline) return silent;
    std::this_thread::sleep_for(interval / 2);
  }
}

LedgerMonitorOptions ledger_monitor_options_from_env() {
  LedgerMonitorOptions o;
  if (const char* h = std::getenv("RT_DISTRIBUTED_HANG_SECONDS"); h && *h) {
    char* end = nullptr;
    const double v = std::strtod(h, &end);
    if (end && *end == '\0' && v > 0) o.hang_seconds = v;
    else std::fprintf(stderr, "rustytorch.distributed: RT_DISTRIBUTED_HANG_SECONDS='%s' is not a positive number of "
                              "seconds; using %.0f\n", h, o.hang_seconds);
  }
  if (const char* d = std::getenv("RT_LEDGER_DIR"); d && *d) o.dump_dir = d;
  else if (const char* s = std::getenv("RT_LAUNCH_STATUS_DIR"); s && *s) o.dump_dir = s;
  return o;
}

LedgerMonitor::LedgerMonitor(std::shared_ptr<Store> store, int rank, int world_size, LedgerMonitorOptions options)
    : store_(std::move(store)), rank_(rank), world_size_(world_size), options_(std::move(options)),
      thread_([this] { loop(); }) {
  Liveness& l = liveness();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.store = store_;
  l.rank = rank_;
  l.world_size = world_size_;
  l.interval = options_.interval;
}

LedgerMonitor::~LedgerMonitor() {
  {
    Liveness& l = liveness();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (l.store == store_) l.store.reset();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LedgerMonitor::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!cv_.wait_for(lock, options_.interval, [&] { return stopping_; })) {
    lock.unlock();
    try {
      tick();
    } catch (const std::exception&) {
      return;  // the store is gone (rank 0 ended): nothing left to publish to
    }
    lock.lock();
  }
}

void LedgerMonitor::tick() {
  store_->set(summary_key(rank_), ledger_summary(rank_).dump());
  if (rank_ == 0) {
    std::vector<nlohmann::json> summaries;
    for (int r = 0; r < world_size_; ++r) {
      const std::string key = summary_key(r);
      if (!store_->check({key})) continue;
      Bytes b = store_->get(key);
      auto parsed = nlohmann::json::parse(b.begin(), b.end(), nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded() && parsed.contains("groups")) summaries.push_back(std::move(parsed));
    }
    for (const LedgerReport& r : check_ledger_summaries(summaries, options_.hang_seconds)) {
      if (!reported_.insert(r.key).second) continue;
      std::fprintf(stderr, "rustytorch.distributed: %s\n", r.text.c_str());
      std::fflush(stderr);
      store_->set(kReportKey, r.text);
      for (int waited : r.waited_for)
        if (stacks_pending_.insert(waited).second) store_->set(stack_request_key(waited), "1");
    }
    print_stacks_received();
  }
  publish_stack_if_asked();
  if (!dumped_ && !options_.dump_dir.empty() && store_->check({kReportKey})) dump_once();
}

void LedgerMonitor::publish_stack_if_asked() {
  if (stack_published_ || !store_->check({stack_request_key(rank_)})) return;
  stack_published_ = true;
  StackProvider provider = g_stack_provider.load();
  std::string stack = provider ? provider() : std::string();
  if (stack.empty()) stack = "(no Python stack: this process runs no Python, or it is shutting down)\n";
  store_->set(stack_key(rank_), stack);
}

void LedgerMonitor::print_stacks_received() {
  for (auto it = stacks_pending_.begin(); it != stacks_pending_.end();) {
    if (!store_->check({stack_key(*it)})) {
      ++it;
      continue;
    }
    const std::string stack = store_->get_string(stack_key(*it));
    std::fprintf(stderr, "rustytorch.distributed: Python stack of rank %d, which the others wait for:\n%s", *it,
                 stack.c_str());
    std::fflush(stderr);
    it = stacks_pending_.erase(it);
  }
}

void LedgerMonitor::dump_once() {
  dumped_ = true;
  const std::string path = (std::filesystem::path(options_.dump_dir) / fmt::format("rank{}.ledger.json", rank_)).string();
  try {
    write_ledger_trace(path, rank_);
    std::fprintf(stderr, "rustytorch.distributed: rank %d wrote its collective ledger to %s (opens in Perfetto)\n",
                 rank_, path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rustytorch.distributed: %s\n", e.what());
  }
}

}  // namespace rt::dist::detail

namespace rt::dist {
void set_stack_provider(StackProvider provider) { detail::g_stack_provider.store(provider); }
}  // namespace rt::dist
