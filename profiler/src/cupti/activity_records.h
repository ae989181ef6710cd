// CUPTI activity records -> GpuActivityRecord: pure functions, unit-tested with records built
// in the test (tests/profiler/test_cupti_records.cpp). CUDA 13 record versions: Kernel10,
// Memcpy6, Memset4, API, Synchronization2, ExternalCorrelation.
#pragma once
#include <cupti_activity.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rt/prof/events.h"

namespace rt::prof::cupti {

// CUPTI timestamps -> steady-clock ns: a pair of readings taken together at start.
struct GpuClock {
  int64_t cupti_origin_ns = 0;
  int64_t steady_origin_ns = 0;
  int64_t to_steady(uint64_t cupti_ns) const { return steady_origin_ns + (int64_t(cupti_ns) - cupti_origin_ns); }
};

// Name of a CUDA runtime/driver API function ("cudaLaunchKernel"), or nullptr when unknown.
using ApiNameLookup = const char* (*)(CUpti_ActivityKind kind, CUpti_CallbackId cbid);

struct ConversionContext {
  GpuClock clock;
  ApiNameLookup api_name = nullptr;
};

// CUPTI correlation id -> our external id (OpRecord::correlation_id), from
// EXTERNAL_CORRELATION records.
using ExternalLinks = std::unordered_map<uint64_t, uint64_t>;

// Converts one record. Returns true and fills `out` for kernels, memcpy, memset, runtime and
// driver API calls and synchronisation; records an EXTERNAL_CORRELATION record into `links`
// and returns false; returns false for every other kind, and for a record whose times are unset
// (the activity had not finished when the buffer was flushed). API records keep the calling
// thread's OS id in `out.thread` until map_api_threads().
bool convert_activity(const CUpti_Activity& record, const ConversionContext& context, StringTable& strings,
                      GpuActivityRecord& out, ExternalLinks& links);

// Sets external_id on every record whose CUPTI correlation id has a link.
void link_external_ids(std::vector<GpuActivityRecord>& records, const ExternalLinks& links);

// Replaces OS thread ids in Runtime/Driver records with the engine thread ids of `threads`.
void map_api_threads(std::vector<GpuActivityRecord>& records, const std::vector<ThreadRecord>& threads);

// "Memcpy HtoD", "Memcpy DtoD", ... for a CUpti_ActivityMemcpyKind.
const char* memcpy_name(uint8_t copy_kind);

}  // namespace rt::prof::cupti
