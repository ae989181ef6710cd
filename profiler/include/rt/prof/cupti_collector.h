// rt/prof/cupti_collector.h — GPU activity (kernels, copies, memsets, CUDA API calls,
// synchronisation) from CUPTI's Activity API, linked to the ops that launched it.
//
//   rt::prof::CuptiCollector gpu;
//   gpu.start();             // throws CuptiUnavailableError with the reason and the fix
//   ... run ops on CUDA tensors ...
//   gpu.stop(session_data);  // appends GpuActivityRecords, adds CUPTI's dropped records
//
// A Session drives this itself (SessionOptions::cupti); use it directly only without one.
//
// Contracts
// - Enabled kinds: CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER, SYNCHRONIZATION,
//   EXTERNAL_CORRELATION. While it runs, every recorded op pushes its OpRecord::correlation_id
//   as a CUPTI external correlation id (CUSTOM0), so GpuActivityRecord::external_id names the
//   op that launched a kernel or copy.
// - CUPTI hands over 4 MB buffers; they are parsed on CUPTI's completion thread, never on
//   the recording threads. stop() forces a flush, disables CUPTI and calls cuptiFinalize.
// - Times are converted to the steady clock (rt::now_ns) by pairing cuptiGetTimestamp with
//   now_ns at start().
// - One collector runs at a time. start() throws CuptiUnavailableError, and leaves nothing
//   enabled, when: this build has no CUPTI ("CUPTI support was not built ..."), no GPU is
//   usable ("no GPU ..."), or another CUPTI client such as Nsight Systems holds it.
#pragma once
#include <cstdint>
#include <memory>

#include "rt/error.h"
#include "rt/export.h"
#include "rt/prof/events.h"

RT_API_BEGIN

namespace rt::prof {

class CuptiUnavailableError : public rt::NotImplementedError {
  using rt::NotImplementedError::NotImplementedError;
};

// Whether rt_profiler was built with CUPTI (RT_WITH_CUPTI).
bool cupti_built();

class CuptiCollector {
 public:
  CuptiCollector();
  ~CuptiCollector();  // stops (discarding records) if still running
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  void start();
  // Threads' OS ids map CUDA API records to ThreadRecord::thread; pass the session's threads.
  void stop(SessionData& out);
  bool running() const;

  // The hooks a recorder calls around each op while a collector runs.
  static void push_correlation(uint64_t id) noexcept;
  static void pop_correlation() noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rt::prof

RT_API_END
