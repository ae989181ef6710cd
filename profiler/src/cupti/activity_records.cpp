#include "cupti/activity_records.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace rt::prof::cupti {
namespace {

std::string demangle(const char* name) {
  if (!name) return "<unnamed kernel>";
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s(d);
  std::free(d);
  return s;
}

const char* sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "cudaEventSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "cudaStreamWaitEvent";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "cudaStreamSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "cudaDeviceSynchronize";
    default: return "Synchronization";
  }
}

// False for a record CUPTI handed over before the activity finished (a forced flush with GPU work
// still queued leaves start/end at 0): it has no place on the timeline.
bool times(GpuActivityRecord& out, const ConversionContext& c, uint64_t start, uint64_t end) {
  if (start == 0 || end < start) return false;
  out.start_ns = c.clock.to_steady(start);
  out.end_ns = c.clock.to_steady(end);
  return true;
}

}  // namespace

const char* memcpy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

bool convert_activity(const CUpti_Activity& record, const ConversionContext& c, StringTable& strings,
                      GpuActivityRecord& out, ExternalLinks& links) {
  out = GpuActivityRecord{};
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      out.kind = GpuActivityKind::Kernel;
      if (!times(out, c, k.start, k.end)) return false;
      out.device = int32_t(k.deviceId);
      out.stream = int32_t(k.streamId);
      out.name = strings.intern(demangle(k.name));
      out.correlation_id = k.correlationId;
      out.grid[0] = k.gridX, out.grid[1] = k.gridY, out.grid[2] = k.gridZ;
      out.block[0] = k.blockX, out.block[1] = k.blockY, out.block[2] = k.blockZ;
      out.registers = int32_t(k.registersPerThread);
      out.shared_memory = k.staticSharedMemory + k.dynamicSharedMemory;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      out.kind = GpuActivityKind::Memcpy;
      if (!times(out, c, m.start, m.end)) return false;
      out.device = int32_t(m.deviceId);
      out.stream = int32_t(m.streamId);
      out.name = strings.intern(memcpy_name(m.copyKind));
      out.correlation_id = m.correlationId;
      out.bytes = m.bytes;
      out.copy_kind = m.copyKind;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      out.kind = GpuActivityKind::Memset;
      if (!times(out, c, m.start, m.end)) return false;
      out.device = int32_t(m.deviceId);
      out.stream = int32_t(m.streamId);
      out.name = strings.intern("Memset");
      out.correlation_id = m.correlationId;
      out.bytes = m.bytes;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      const bool runtime = record.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      out.kind = runtime ? GpuActivityKind::Runtime : GpuActivityKind::Driver;
      if (!times(out, c, a.start, a.end)) return false;
      out.device = -1;
      out.stream = -1;
      out.thread = a.threadId;
      const char* name = c.api_name ? c.api_name(record.kind, a.cbid) : nullptr;
      out.name = name ? strings.intern(name)
                      : strings.intern(fmt::format("{} API {}", runtime ? "CUDA runtime" : "CUDA driver", a.cbid));
      out.correlation_id = a.correlationId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      out.kind = GpuActivityKind::Synchronization;
      if (!times(out, c, s.start, s.end)) return false;
      out.device = -1;
      out.stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : int32_t(s.streamId);
      out.name = strings.intern(sync_name(s.type));
      out.correlation_id = s.correlationId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& e = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      if (e.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) links[e.correlationId] = e.externalId;
      return false;
    }
    default:
      return false;
  }
}

void link_external_ids(std::vector<GpuActivityRecord>& records, const ExternalLinks& links) {
  for (auto& r : records)
    if (auto it = links.find(r.correlation_id); it != links.end()) r.external_id = it->second;
}

void map_api_threads(std::vector<GpuActivityRecord>& records, const std::vector<ThreadRecord>& threads) {
  std::unordered_map<uint64_t, uint64_t> by_os_tid;
  for (const auto& t : threads) by_os_tid[t.os_tid] = t.thread;
  for (auto& r : records) {
    if (r.kind != GpuActivityKind::Runtime && r.kind != GpuActivityKind::Driver) continue;
    if (auto it = by_os_tid.find(r.thread); it != by_os_tid.end()) r.thread = it->second;
  }
}

}  // namespace rt::prof::cupti
