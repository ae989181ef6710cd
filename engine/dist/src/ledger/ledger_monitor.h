// The thread that publishes this rank's ledger summary through the store (about twice a second) and, on
// rank 0, compares every rank's and prints what it finds (desync_check.h). Started by
// init_process_group for jobs of two or more ranks unless RT_DISTRIBUTED_LEDGER=0. It never throws into
// training: a store that went away (rank 0 exited) just ends the publishing.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "rt/dist/store.h"

namespace rt::dist::detail {

struct LedgerMonitorOptions {
  Milliseconds interval = std::chrono::milliseconds(500);
  double hang_seconds = 30;  // RT_DISTRIBUTED_HANG_SECONDS
  std::string dump_dir;      // RT_LEDGER_DIR, else the launcher's status folder: rank<N>.ledger.json on a finding
};
LedgerMonitorOptions ledger_monitor_options_from_env();

// After a backend saw a peer's connection close: the ranks of the job whose ledger summaries stopped
// (older than three publishing intervals, waiting up to `patience` for that to show), as "rank 2 stopped
// publishing its ledger summary 1.6 s ago: it has most likely died"; "" when every rank still publishes, or
// no monitor runs. A store that no longer answers means rank 0 (which hosts it) is gone: dead, or exited
// after its own failure, which the message cannot tell apart.
std::string describe_silent_ranks(Milliseconds patience);

class LedgerMonitor {
 public:
  LedgerMonitor(std::shared_ptr<Store> store, int rank, int world_size, LedgerMonitorOptions options);
  ~LedgerMonitor();  // stops the thread
  LedgerMonitor(const LedgerMonitor&) = delete;
  LedgerMonitor& operator=(const LedgerMonitor&) = delete;

 private:
  void loop();
  void tick();
  void dump_once();

  std::shared_ptr<Store> store_;
  int rank_, world_size_;
  LedgerMonitorOptions options_;
  void publish_stack_if_asked();
  void print_stacks_received();

  std::set<std::string> reported_;
  std::set<int> stacks_pending_;  // rank 0: ranks whose Python stack a hang report asked for
  bool stack_published_ = false;
  bool dumped_ = false;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rt::dist::detail
