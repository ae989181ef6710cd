// The CUPTI Activity API collector. CUPTI state is process-wide, so one collector runs at a
// time; its buffers are parsed in CUPTI's completion callback, off the recording threads.
#include "rt/prof/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "cupti/activity_records.h"
#include "rt/cuda.h"
#include "rt/op_observer.h"

namespace rt::prof {
namespace {

constexpr size_t kBufferBytes = 4u << 20;
constexpr size_t kBufferAlign = 8;
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return fmt::format("CUPTI error {}", int(r));
  return s;
}

const char* api_name(CUpti_ActivityKind kind, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  const auto domain = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) return nullptr;
  return name;
}

// What the completion callback fills; the collector owns it while running.
struct Sink {
  std::mutex mu;
  cupti::ConversionContext context;
  StringTable strings;
  std::vector<GpuActivityRecord> records;
  cupti::ExternalLinks links;
  uint64_t dropped = 0;
};
std::mutex g_sink_mu;  // guards g_sink itself (set at start, cleared at stop)
Sink* g_sink = nullptr;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> guard(g_sink_mu);
  if (g_sink && buffer) {
    std::lock_guard<std::mutex> lk(g_sink->mu);
    CUpti_Activity* record = nullptr;
    GpuActivityRecord out;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
      if (cupti::convert_activity(*record, g_sink->context, g_sink->strings, out, g_sink->links))
        g_sink->records.push_back(out);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) g_sink->dropped += dropped;
  }
  std::free(buffer);
}

void disable_all() {
  for (auto kind : kKinds) cuptiActivityDisable(kind);
}

// Waits for the queued work of every device the engine has used (one it never used has no
// context, and making one costs memory; a used one has reserved memory at some point). Errors are ignored: a kernel's error surfaces at the
// engine's next call anyway.
void synchronize_devices() {
  const int devices = rt::cuda::device_count();
  for (int d = 0; d < devices; ++d) {
    try {
      if (rt::cuda::max_memory_reserved(d) > 0) rt::cuda::synchronize(d);  // used since the last peak reset
    } catch (const std::exception&) {
    }
  }
}

}  // namespace

struct CuptiCollector::State {
  Sink sink;
  bool running = false;
};

bool cupti_built() { return true; }

CuptiCollector::CuptiCollector() : state_(std::make_unique<State>()) {}

CuptiCollector::~CuptiCollector() {
  if (state_->running) {
    SessionData discard;
    try {
      stop(discard);
    } catch (...) {  // a destructor must not throw
    }
  }
}

bool CuptiCollector::running() const { return state_->running; }

void CuptiCollector::start() {
  if (state_->running) throw rt::Error("CuptiCollector::start: the collector is already running");
  int devices = 0;
  const cudaError_t cuda = cudaGetDeviceCount(&devices);
  if (cuda != cudaSuccess || devices == 0)
    throw CuptiUnavailableError(fmt::format(
        "no GPU: cudaGetDeviceCount {} ({}); GPU activity is not recorded. Run on a machine with an NVIDIA GPU and "
        "driver, or profile with cupti=off",
        cuda == cudaSuccess ? "found 0 devices" : "failed", cuda == cudaSuccess ? "" : cudaGetErrorString(cuda)));
  {
    std::lock_guard<std::mutex> guard(g_sink_mu);
    if (g_sink)
      throw CuptiUnavailableError("CUPTI is already used by another CuptiCollector in this process; stop it first");
    g_sink = &state_->sink;
  }
  auto release = [&] {
    std::lock_guard<std::mutex> guard(g_sink_mu);
    g_sink = nullptr;
  };
  // Registered once per process (stop() leaves CUPTI initialised, see there), and again after a failed try
  // (another CUPTI client held it). Only the collector that set g_sink gets here, so calls never overlap.
  static CUptiResult registered = CUPTI_ERROR_NOT_INITIALIZED;
  if (registered != CUPTI_SUCCESS) registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  CUptiResult r = registered;
  // API records carry gettid() ids, as ThreadRecord::os_tid (the default is pthread_self()).
  if (r == CUPTI_SUCCESS) r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  for (size_t i = 0; r == CUPTI_SUCCESS && i < std::size(kKinds); ++i) r = cuptiActivityEnable(kKinds[i]);
  if (r != CUPTI_SUCCESS) {
    disable_all();
    release();
    const bool taken = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_INITIALIZED ||
                       r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED;
    throw CuptiUnavailableError(fmt::format(
        "CUPTI could not start ({}): {}", result_text(r),
        taken ? "another CUPTI client (Nsight Systems, Nsight Compute, another profiler) holds it, or this user may "
                "not profile the GPU; stop that tool or profile with cupti=off"
              : "GPU activity is not recorded; profile with cupti=off to continue without it"));
  }
  uint64_t cupti_now = 0;
  cuptiGetTimestamp(&cupti_now);
  state_->sink.context.clock = {int64_t(cupti_now), rt::now_ns()};
  state_->sink.context.api_name = api_name;
  state_->running = true;
}

void CuptiCollector::stop(SessionData& out) {
  if (!state_->running) throw rt::Error("CuptiCollector::stop: the collector is not running; call start() first");
  state_->running = false;
  // CUPTI completes a record once its activity has finished: wait for the work queued on every
  // device, or a forced flush hands over records without times (convert_activity drops those).
  // The API and synchronisation kinds go off first, so that this wait is not in the trace.
  for (auto kind : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
    cuptiActivityDisable(kind);
  synchronize_devices();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_all();
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) state_->sink.dropped += dropped;
  // No cuptiFinalize(): called from here it can crash inside CUPTI (Kineto saw a SIGSEGV in
  // cuptiActivityFlushAll after it); with every activity kind disabled CUPTI records nothing more.
  {
    std::lock_guard<std::mutex> guard(g_sink_mu);
    g_sink = nullptr;
  }
  Sink& sink = state_->sink;
  cupti::link_external_ids(sink.records, sink.links);
  cupti::map_api_threads(sink.records, out.threads);
  out.gpu.reserve(out.gpu.size() + sink.records.size());
  for (GpuActivityRecord r : sink.records) {
    r.name = out.strings.intern(sink.strings.at(r.name));
    out.gpu.push_back(r);
  }
  out.dropped_records += sink.dropped;
  if (sink.dropped) out.metadata["cupti_dropped_records"] = std::to_string(sink.dropped);
  sink.records.clear();
  sink.links.clear();
  sink.dropped = 0;
}

void CuptiCollector::push_correlation(uint64_t id) noexcept {
  cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiCollector::pop_correlation() noexcept {
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

}  // namespace rt::prof
