// CUPTI record conversion (records built here, no GPU needed) and the collector's behaviour
// when CUPTI or a GPU is missing.
#include <catch2/catch.hpp>

#include "rt/prof/cupti_collector.h"
#include "rt/prof/session.h"

#ifdef RT_WITH_CUPTI
#include <cstring>

#include "cupti/activity_records.h"

using namespace rt::prof;

namespace {
const char* fake_api_name(CUpti_ActivityKind kind, CUpti_CallbackId cbid) {
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME && cbid == 211) return "cudaLaunchKernel";
  return nullptr;
}
cupti::ConversionContext context() {
  cupti::ConversionContext c;
  c.clock = {1'000'000, 50'000'000};  // CUPTI 1 ms == steady 50 ms
  c.api_name = fake_api_name;
  return c;
}
// CUPTI hands records over as CUpti_Activity*; copy ours into such a buffer, as CUPTI's would be.
template <typename Record>
const CUpti_Activity& as_activity(const Record& r) {
  alignas(8) static thread_local unsigned char buffer[1024];
  static_assert(sizeof(Record) <= sizeof(buffer));
  std::memcpy(buffer, &r, sizeof r);
  return *static_cast<const CUpti_Activity*>(static_cast<const void*>(buffer));
}
template <typename Record>
Record zeroed(CUpti_ActivityKind kind) {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}
// A record of a finished activity (CUPTI sets its times; 1 ms on its clock), the rest zero.
template <typename Record>
Record timed(CUpti_ActivityKind kind) {
  Record r = zeroed<Record>(kind);
  r.start = 1'000'000;
  r.end = 1'000'001;
  return r;
}
}  // namespace

TEST_CASE("kernel records convert with steady-clock times, launch config and demangled name") {
  auto k = timed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 1'000'500;
  k.end = 1'002'500;
  k.deviceId = 1;
  k.streamId = 7;
  k.gridX = 64, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.correlationId = 42;
  k.name = "_Z10add_kernelPKfS0_Pfi";
  StringTable strings;
  cupti::ExternalLinks links;
  GpuActivityRecord out;
  REQUIRE(cupti::convert_activity(as_activity(k), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Kernel);
  CHECK(out.start_ns == 50'000'500);
  CHECK(out.end_ns == 50'002'500);
  CHECK(out.device == 1);
  CHECK(out.stream == 7);
  CHECK(out.grid[0] == 64);
  CHECK(out.grid[1] == 2);
  CHECK(out.block[0] == 256);
  CHECK(out.registers == 32);
  CHECK(out.shared_memory == 3072);
  CHECK(out.correlation_id == 42);
  CHECK(strings.at(out.name) == "add_kernel(float const*, float const*, float*, int)");
}

TEST_CASE("a record flushed before its activity finished (times unset) is dropped") {
  StringTable strings;
  cupti::ExternalLinks links;
  GpuActivityRecord out;
  auto k = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "pending";
  CHECK_FALSE(cupti::convert_activity(as_activity(k), context(), strings, out, links));
  k.start = 1'000'500;  // started, end not yet written
  CHECK_FALSE(cupti::convert_activity(as_activity(k), context(), strings, out, links));
  auto m = zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  CHECK_FALSE(cupti::convert_activity(as_activity(m), context(), strings, out, links));
  m.start = 1'000'000, m.end = 1'000'100;
  CHECK(cupti::convert_activity(as_activity(m), context(), strings, out, links));
}

TEST_CASE("memcpy, memset, API and synchronization records convert") {
  StringTable strings;
  cupti::ExternalLinks links;
  GpuActivityRecord out;

  auto m = timed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.bytes = 4096;
  m.start = 1'000'000;
  m.end = 1'000'100;
  m.streamId = 3;
  m.correlationId = 5;
  REQUIRE(cupti::convert_activity(as_activity(m), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Memcpy);
  CHECK(strings.at(out.name) == "Memcpy HtoD");
  CHECK(out.bytes == 4096);
  CHECK(out.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(out.stream == 3);
  CHECK(out.end_ns - out.start_ns == 100);

  auto s = timed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.bytes = 512;
  s.correlationId = 6;
  REQUIRE(cupti::convert_activity(as_activity(s), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Memset);
  CHECK(strings.at(out.name) == "Memset");
  CHECK(out.bytes == 512);

  auto api = timed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.cbid = 211;
  api.threadId = 4321;
  api.correlationId = 42;
  api.start = 1'000'010;
  api.end = 1'000'020;
  REQUIRE(cupti::convert_activity(as_activity(api), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Runtime);
  CHECK(strings.at(out.name) == "cudaLaunchKernel");
  CHECK(out.thread == 4321);

  auto drv = timed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
  drv.cbid = 9999;
  REQUIRE(cupti::convert_activity(as_activity(drv), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Driver);
  CHECK(strings.at(out.name) == "CUDA driver API 9999");

  auto sync = timed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  REQUIRE(cupti::convert_activity(as_activity(sync), context(), strings, out, links));
  CHECK(out.kind == GpuActivityKind::Synchronization);
  CHECK(strings.at(out.name) == "cudaStreamSynchronize");
  CHECK(out.stream == -1);

  auto other = timed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_NAME);
  CHECK_FALSE(cupti::convert_activity(as_activity(other), context(), strings, out, links));
}

TEST_CASE("external correlation records link kernels and API calls to the op that launched them") {
  StringTable strings;
  cupti::ExternalLinks links;
  GpuActivityRecord out;
  std::vector<GpuActivityRecord> records;

  auto k = timed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.correlationId = 42;
  k.name = "relu_kernel";
  REQUIRE(cupti::convert_activity(as_activity(k), context(), strings, out, links));
  records.push_back(out);
  auto api = timed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.correlationId = 42;
  api.threadId = 4321;
  REQUIRE(cupti::convert_activity(as_activity(api), context(), strings, out, links));
  records.push_back(out);
  auto unlinked = timed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  unlinked.correlationId = 43;
  REQUIRE(cupti::convert_activity(as_activity(unlinked), context(), strings, out, links));
  records.push_back(out);

  auto ext = zeroed<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ext.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  ext.externalId = (uint64_t(3) << 40) | 17;
  ext.correlationId = 42;
  CHECK_FALSE(cupti::convert_activity(as_activity(ext), context(), strings, out, links));
  auto foreign = ext;
  foreign.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC;  // not ours
  foreign.correlationId = 43;
  CHECK_FALSE(cupti::convert_activity(as_activity(foreign), context(), strings, out, links));

  cupti::link_external_ids(records, links);
  CHECK(records[0].external_id == ext.externalId);
  CHECK(records[1].external_id == ext.externalId);
  CHECK(records[2].external_id == 0);

  cupti::map_api_threads(records, {{.thread = 0xabcdef, .os_tid = 4321, .name = 0}});
  CHECK(records[1].thread == 0xabcdef);
  CHECK(records[0].thread == 0);  // kernels have no CPU thread
}

TEST_CASE("memcpy kinds have Nsight-style names") {
  CHECK(std::string(cupti::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)) == "Memcpy DtoH");
  CHECK(std::string(cupti::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD)) == "Memcpy DtoD");
  CHECK(std::string(cupti::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)) == "Memcpy PtoP");
  CHECK(std::string(cupti::memcpy_name(200)) == "Memcpy");
}
#endif  // RT_WITH_CUPTI

TEST_CASE("the collector starts on a GPU, or explains why it cannot") {
  rt::prof::CuptiCollector gpu;
  bool started = false;
  try {
    gpu.start();
    started = true;
  } catch (const rt::prof::CuptiUnavailableError& e) {
    const std::string msg = e.what();
    INFO(msg);
    if (!rt::prof::cupti_built()) CHECK_THAT(msg, Catch::Contains("CUPTI support was not built"));
    else CHECK_THAT(msg, Catch::Contains("no GPU") || Catch::Contains("CUPTI could not start"));
  }
  CHECK(gpu.running() == started);
  if (started) {
    rt::prof::SessionData d;
    gpu.stop(d);
    CHECK_FALSE(gpu.running());
  }
}

TEST_CASE("a session with cupti=auto records without a GPU and notes why, cupti=on throws") {
  rt::prof::SessionOptions automatic, strict_options;
  strict_options.cupti = rt::prof::CuptiMode::On;
  rt::prof::Session s(automatic);
  s.start();
  s.stop();
  const std::string state = s.data().metadata.at("cupti");
  if (state != "on") {
    CHECK_THAT(state, Catch::StartsWith("off: "));
    rt::prof::Session strict(strict_options);
    CHECK_THROWS_AS(strict.start(), rt::prof::CuptiUnavailableError);
    CHECK_FALSE(rt::prof::profiling_active());
  }
}
