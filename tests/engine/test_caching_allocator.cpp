// The CUDA caching allocator's bookkeeping, driven by a host-memory SegmentSource: block
// sizes and pools, splitting and merging, best fit, statistics, empty_cache, the out-of-memory
// retry and message, memory events, and concurrent use.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "memory/caching_allocator.h"
#include "host_segment_source.h"
#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/op_observer.h"

using rt::cuda::CachingAllocator;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;
constexpr size_t kPlenty = size_t(1) << 30;

char* as_bytes(void* p) { return static_cast<char*>(p); }

// Fills [p, p + bytes) so that later writes through another block would show.
void fill(void* p, size_t bytes, unsigned char tag) { std::memset(p, tag, bytes); }
bool holds(const void* p, size_t bytes, unsigned char tag) {
  const auto* c = static_cast<const unsigned char*>(p);
  return std::all_of(c, c + bytes, [tag](unsigned char v) { return v == tag; });
}

struct EventLog : rt::MemoryObserver {
  std::mutex mu;
  std::vector<rt::MemoryEvent> events;
  void on_memory_event(const rt::MemoryEvent& e) override {
    std::lock_guard<std::mutex> lk(mu);
    events.push_back(e);
  }
};

// Records total_after, which only the event recorder receives. A recorder must outlive every
// event it may get (Note [Event recorder]), hence a function-local static.
struct TotalsRecorder : rt::EventRecorder {
  std::vector<int64_t> totals;
  void* op_begin(const char*, const rt::Tensor* const*, size_t, int64_t) noexcept override { return nullptr; }
  void op_end(void*) noexcept override {}
  void node_begin(std::string_view, int64_t) noexcept override {}
  void node_end() noexcept override {}
  void memory_event(const rt::MemoryEvent& e, int64_t total_after) noexcept override {
    if (e.device.is_cuda()) totals.push_back(total_after);
  }
  void collective_event(const rt::CollectiveEvent&) noexcept override {}
};
TotalsRecorder& totals_recorder() {
  static TotalsRecorder r;
  return r;
}

}  // namespace

TEST_CASE("requests round up to 512 bytes and choose their segment size") {
  CHECK(rt::cuda::round_request(1) == 512);
  CHECK(rt::cuda::round_request(512) == 512);
  CHECK(rt::cuda::round_request(513) == 1024);
  CHECK(rt::cuda::round_request(MiB) == MiB);

  CHECK(rt::cuda::segment_size_for(512) == 2 * MiB);
  CHECK(rt::cuda::segment_size_for(MiB) == 2 * MiB);
  CHECK(rt::cuda::segment_size_for(MiB + 512) == 20 * MiB);
  CHECK(rt::cuda::segment_size_for(10 * MiB - 512) == 20 * MiB);
  CHECK(rt::cuda::segment_size_for(10 * MiB) == 10 * MiB);
  CHECK(rt::cuda::segment_size_for(10 * MiB + 512) == 12 * MiB);
  CHECK(rt::cuda::segment_size_for(12 * MiB) == 12 * MiB);

  SECTION("small requests share a 2 MiB segment; just over 1 MiB goes to a 20 MiB one") {
    HostSegmentSource source(kPlenty);
    CachingAllocator alloc(source);
    void* a = alloc.allocate(1);
    void* b = alloc.allocate(MiB);
    CHECK(as_bytes(b) == as_bytes(a) + 512);
    CHECK(source.requests() == std::vector<size_t>{2 * MiB});
    void* c = alloc.allocate(MiB + 1);
    CHECK(source.requests() == std::vector<size_t>{2 * MiB, 20 * MiB});
    CHECK(alloc.stats().allocated_bytes == 512 + MiB + (MiB + 512));
    for (void* p : {a, b, c}) alloc.deallocate(p, 0);
  }

  SECTION("from 10 MiB a request gets its own segment, rounded up to 2 MiB") {
    HostSegmentSource source(kPlenty);
    CachingAllocator alloc(source);
    void* a = alloc.allocate(10 * MiB);
    void* b = alloc.allocate(11 * MiB + 3);
    CHECK(source.requests() == std::vector<size_t>{10 * MiB, 12 * MiB});
    // 12 MiB - (11 MiB + 512) is under 1 MiB: too small to split off, so b holds all of it.
    CHECK(alloc.stats().allocated_bytes == 10 * MiB + 12 * MiB);
    CHECK(alloc.stats().reserved_bytes == 22 * MiB);
    alloc.deallocate(a, 0);
    alloc.deallocate(b, 0);
  }

  SECTION("a small request never takes a cached large block") {
    HostSegmentSource source(kPlenty);
    CachingAllocator alloc(source);
    alloc.deallocate(alloc.allocate(2 * MiB), 0);
    void* p = alloc.allocate(512);
    CHECK(source.requests() == std::vector<size_t>{20 * MiB, 2 * MiB});
    alloc.deallocate(p, 0);
  }

  SECTION("zero bytes give nullptr, and freeing nullptr does nothing") {
    HostSegmentSource source(kPlenty);
    CachingAllocator alloc(source);
    CHECK(alloc.allocate(0) == nullptr);
    alloc.deallocate(nullptr, 0);
    CHECK(alloc.stats().allocations == 0);
    CHECK(source.requests().empty());
  }
}

TEST_CASE("blocks split, freed addresses are reused, and free neighbours merge") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);

  SECTION("small pool") {
    void* a = alloc.allocate(512);
    void* b = alloc.allocate(512);
    void* c = alloc.allocate(512);
    CHECK(as_bytes(b) == as_bytes(a) + 512);
    CHECK(as_bytes(c) == as_bytes(a) + 1024);
    alloc.deallocate(b, 512);
    CHECK(alloc.allocate(512) == b);  // the exact hole, not the segment's tail

    for (void* p : {a, b, c}) alloc.deallocate(p, 512);
    // Merged back into one 2 MiB block: two 1 MiB requests fill the segment from its start.
    void* x = alloc.allocate(MiB);
    void* y = alloc.allocate(MiB);
    CHECK(x == a);
    CHECK(as_bytes(y) == as_bytes(a) + MiB);
    CHECK(alloc.stats().segments == 1);
    alloc.deallocate(x, MiB);
    alloc.deallocate(y, MiB);
  }

  SECTION("freeing in any order leaves no fragments") {
    std::vector<void*> quarters;
    for (int i = 0; i < 4; ++i) quarters.push_back(alloc.allocate(512 * KiB));
    CHECK(alloc.stats().segments == 1);
    for (int i : {2, 0, 3, 1}) alloc.deallocate(quarters[size_t(i)], 512 * KiB);
    void* whole = alloc.allocate(MiB);
    void* rest = alloc.allocate(MiB);
    CHECK(whole == quarters[0]);
    CHECK(rest == quarters[2]);
    CHECK(alloc.stats().segments == 1);
    alloc.deallocate(whole, MiB);
    alloc.deallocate(rest, MiB);
  }

  SECTION("large pool") {
    void* x = alloc.allocate(5 * MiB);
    void* y = alloc.allocate(5 * MiB);
    CHECK(as_bytes(y) == as_bytes(x) + 5 * MiB);
    alloc.deallocate(x, 0);
    alloc.deallocate(y, 0);
    void* z = alloc.allocate(18 * MiB);  // needs the whole merged segment's front
    CHECK(z == x);
    CHECK(alloc.stats().segments == 1);
    CHECK(alloc.stats().reserved_bytes == 20 * MiB);
    alloc.deallocate(z, 0);
  }

  SECTION("a large block keeps a tail of 1 MiB or less instead of splitting it off") {
    void* a = alloc.allocate(9 * MiB + 512 * KiB);
    void* b = alloc.allocate(9 * MiB + 512 * KiB);  // leaves exactly 1 MiB: not split
    CHECK(as_bytes(b) == as_bytes(a) + 9 * MiB + 512 * KiB);
    CHECK(alloc.stats().allocated_bytes == 20 * MiB);
    void* c = alloc.allocate(2 * MiB);
    CHECK(alloc.stats().segments == 2);
    for (void* p : {a, b, c}) alloc.deallocate(p, 0);

    void* d = alloc.allocate(9 * MiB);
    void* e = alloc.allocate(9 * MiB);  // leaves 2 MiB: split
    void* f = alloc.allocate(1536 * KiB);
    CHECK(as_bytes(f) == as_bytes(d) + 18 * MiB);
    CHECK(alloc.stats().allocated_bytes == 18 * MiB + 2 * MiB);  // f took the whole 2 MiB tail
    for (void* p : {d, e, f}) alloc.deallocate(p, 0);
  }

  SECTION("blocks do not overlap") {
    std::vector<void*> blocks;
    for (size_t i = 0; i < 12; ++i) {
      const size_t bytes = (i % 3 + 1) * 700;
      blocks.push_back(alloc.allocate(bytes));
      fill(blocks.back(), bytes, static_cast<unsigned char>(i + 1));
    }
    for (size_t i = 0; i < blocks.size(); ++i) CHECK(holds(blocks[i], (i % 3 + 1) * 700, static_cast<unsigned char>(i + 1)));
    for (void* p : blocks) alloc.deallocate(p, 0);
  }

  CHECK(alloc.stats().allocated_bytes == 0);
}

TEST_CASE("a request takes the smallest free block that fits, the lowest address among equals") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  // Holes of 4, 1, 2 and 2 KiB in one small segment, kept apart by live 512-byte separators.
  const size_t hole_sizes[] = {4 * KiB, 1 * KiB, 2 * KiB, 2 * KiB};
  std::vector<void*> holes, separators;
  for (size_t bytes : hole_sizes) {
    holes.push_back(alloc.allocate(bytes));
    separators.push_back(alloc.allocate(512));
  }
  for (void* h : holes) alloc.deallocate(h, 0);

  CHECK(alloc.allocate(1536) == holes[2]);                  // 2 KiB fits best; the first of the two
  CHECK(alloc.allocate(512) == as_bytes(holes[2]) + 1536);  // what the split left over
  CHECK(alloc.allocate(2 * KiB) == holes[3]);
  CHECK(alloc.allocate(1 * KiB) == holes[1]);
  CHECK(alloc.allocate(3 * KiB) == holes[0]);
  CHECK(alloc.stats().segments == 1);
}

TEST_CASE("stats: allocated, reserved, their peaks, segments and live allocations") {
  HostSegmentSource source(kPlenty, rt::Device::cuda(3));
  CachingAllocator alloc(source);
  CHECK(alloc.device() == rt::Device::cuda(3));

  void* a = alloc.allocate(1000);
  auto s = alloc.stats();
  CHECK(s.allocated_bytes == 1024);
  CHECK(s.reserved_bytes == 2 * MiB);
  CHECK(s.peak_allocated_bytes == 1024);
  CHECK(s.segments == 1);
  CHECK(s.allocations == 1);

  void* b = alloc.allocate(3 * MiB);
  s = alloc.stats();
  CHECK(s.allocated_bytes == 1024 + 3 * MiB);
  CHECK(s.reserved_bytes == 22 * MiB);
  CHECK(s.segments == 2);
  CHECK(s.allocations == 2);

  alloc.deallocate(b, 3 * MiB);
  s = alloc.stats();
  CHECK(s.allocated_bytes == 1024);
  CHECK(s.peak_allocated_bytes == 1024 + 3 * MiB);
  CHECK(s.reserved_bytes == 22 * MiB);  // cached, not returned
  CHECK(s.peak_reserved_bytes == 22 * MiB);
  CHECK(s.allocations == 1);
  alloc.empty_cache();
  CHECK(alloc.stats().reserved_bytes == 2 * MiB);
  CHECK(alloc.stats().peak_reserved_bytes == 22 * MiB);

  alloc.reset_peak();
  CHECK(alloc.stats().peak_allocated_bytes == 1024);
  CHECK(alloc.stats().peak_reserved_bytes == 2 * MiB);
  void* c = alloc.allocate(512);
  CHECK(alloc.stats().peak_allocated_bytes == 1536);
  alloc.deallocate(c, 512);
  CHECK(alloc.stats().peak_allocated_bytes == 1536);
  alloc.deallocate(a, 1000);
  CHECK(alloc.stats().allocated_bytes == 0);
  CHECK(alloc.stats().alloc_retries == 0);
  CHECK(alloc.stats().ooms == 0);
}

TEST_CASE("freeing a pointer the allocator does not own is an error") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  void* p = alloc.allocate(100);
  int local = 0;
  CHECK_THROWS_AS(alloc.deallocate(&local, 4), rt::ValueError);
  CHECK_THROWS_AS(alloc.deallocate(as_bytes(p) + 512, 100), rt::ValueError);  // inside the segment, not a block
  alloc.deallocate(p, 100);
  CHECK_THROWS_WITH(alloc.deallocate(p, 100), Catch::Contains("did not hand out or already took back"));
  CHECK(alloc.stats().allocated_bytes == 0);
}

TEST_CASE("empty_cache returns unused segments and keeps those in use") {
  HostSegmentSource source(kPlenty);
  {
    CachingAllocator alloc(source);
    void* live = alloc.allocate(4 * KiB);
    alloc.deallocate(alloc.allocate(3 * MiB), 0);   // a cached 20 MiB segment
    alloc.deallocate(alloc.allocate(12 * MiB), 0);  // served from that same cached segment
    alloc.deallocate(alloc.allocate(24 * MiB), 0);  // a cached 24 MiB segment of its own
    CHECK(alloc.stats().reserved_bytes == 2 * MiB + 20 * MiB + 24 * MiB);
    CHECK(source.live_segments() == 3);

    alloc.empty_cache();
    CHECK(alloc.stats().reserved_bytes == 2 * MiB);
    CHECK(alloc.stats().segments == 1);
    CHECK(source.live_segments() == 1);
    CHECK(source.used() == 2 * MiB);
    fill(live, 4 * KiB, 0x5a);  // still usable
    CHECK(holds(live, 4 * KiB, 0x5a));

    alloc.deallocate(live, 0);
    alloc.empty_cache();
    CHECK(alloc.stats().reserved_bytes == 0);
    CHECK(source.live_segments() == 0);

    alloc.deallocate(alloc.allocate(100), 0);
    CHECK(source.live_segments() == 1);
  }
  CHECK(source.live_segments() == 0);  // the destructor returned the cached segment

  {
    CachingAllocator alloc(source);
    alloc.allocate(100);  // outlives the allocator
  }
  CHECK(source.live_segments() == 1);  // left to its owner, not pulled from under it
}

TEST_CASE("a refused segment empties the cache and asks once more") {
  SECTION("the cached segments make room") {
    HostSegmentSource source(20 * MiB);
    CachingAllocator alloc(source);
    alloc.deallocate(alloc.allocate(5 * MiB), 0);  // the whole capacity, cached
    void* p = alloc.allocate(512);
    CHECK(source.refusals() == 1);
    CHECK(source.requests() == std::vector<size_t>{20 * MiB, 2 * MiB, 2 * MiB});
    const auto s = alloc.stats();
    CHECK(s.alloc_retries == 1);
    CHECK(s.ooms == 0);
    CHECK(s.reserved_bytes == 2 * MiB);
    alloc.deallocate(p, 512);
  }

  SECTION("segments in use stay; still refused -> OutOfMemoryError, and the allocator carries on") {
    HostSegmentSource source(22 * MiB);
    CachingAllocator alloc(source);
    void* y = alloc.allocate(5 * MiB);
    alloc.deallocate(alloc.allocate(512), 0);  // a cached small segment: 22 MiB reserved
    fill(y, 5 * MiB, 0x11);
    CHECK_THROWS_AS(alloc.allocate(16 * MiB), rt::OutOfMemoryError);
    const auto s = alloc.stats();
    CHECK(s.alloc_retries == 1);
    CHECK(s.ooms == 1);
    CHECK(s.reserved_bytes == 20 * MiB);  // the small segment went back, y's stayed
    CHECK(holds(y, 5 * MiB, 0x11));
    void* z = alloc.allocate(2 * MiB);  // fits the rest of y's segment
    CHECK(as_bytes(z) == as_bytes(y) + 5 * MiB);
    alloc.deallocate(y, 0);
    alloc.deallocate(z, 0);
  }
}

TEST_CASE("OutOfMemoryError says what was asked, what is free, what is held, and the fix") {
  HostSegmentSource source(8 * MiB, rt::Device::cuda(1));
  CachingAllocator alloc(source);
  void* keep = alloc.allocate(MiB);
  std::string message;
  try {
    alloc.allocate(30 * MiB);
  } catch (const rt::OutOfMemoryError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Contains("cuda:1 out of memory"));
  CHECK_THAT(message, Catch::Contains("tried to allocate 30.00 MiB"));
  CHECK_THAT(message, Catch::Contains("6.00 MiB free of 8.00 MiB total"));
  CHECK_THAT(message, Catch::Contains("1.00 MiB allocated"));
  CHECK_THAT(message, Catch::Contains("2.00 MiB reserved"));
  CHECK_THAT(message, Catch::Contains("smaller batch size"));
  CHECK_THAT(message, Catch::Contains("free tensors you no longer need"));
  CHECK_THAT(message, Catch::Contains("rt.cuda.empty_cache()"));

  // An absurd size is refused without wrapping around in the rounding.
  CHECK_THROWS_AS(alloc.allocate(std::numeric_limits<size_t>::max()), rt::OutOfMemoryError);
  CHECK_THROWS_AS(alloc.allocate(std::numeric_limits<size_t>::max() - 100), rt::Error);
  CHECK(alloc.stats().ooms == 3);
  alloc.deallocate(keep, MiB);

  CHECK(rt::cuda::format_bytes(0) == "0 B");
  CHECK(rt::cuda::format_bytes(1023) == "1023 B");
  CHECK(rt::cuda::format_bytes(1536) == "1.50 KiB");
  CHECK(rt::cuda::format_bytes(20 * MiB) == "20.00 MiB");
  CHECK(rt::cuda::format_bytes(size_t(3.25 * 1024) * MiB) == "3.25 GiB");
}

TEST_CASE("memory events carry the device, category, block size and running total") {
  HostSegmentSource source(kPlenty, rt::Device::cuda(1));
  CachingAllocator alloc(source);
  EventLog log;
  TotalsRecorder& recorder = totals_recorder();
  recorder.totals.clear();
  rt::set_event_recorder(&recorder);
  rt::add_memory_observer(&log);

  void* p = nullptr;
  void* q = nullptr;
  {
    rt::MemoryCategoryGuard g(rt::MemoryCategory::Parameter);
    p = alloc.allocate(1000);
  }
  {
    rt::MemoryCategoryGuard g(rt::MemoryCategory::Gradient);
    q = alloc.allocate(3 * MiB);
  }
  {
    rt::MemoryCategoryGuard g(rt::MemoryCategory::Temporary);
    alloc.deallocate(p, 1000);  // reported under the category it was allocated with
  }
  alloc.deallocate(q, 3 * MiB);
  void* act = nullptr;
  void* tmp = nullptr;
  {
    rt::EnableGradGuard grad;
    act = alloc.allocate(64);  // no explicit category: grad mode on -> activation
  }
  {
    rt::NoGradGuard no_grad;
    tmp = alloc.allocate(64);
  }
  alloc.deallocate(act, 64);
  alloc.deallocate(tmp, 64);

  rt::remove_memory_observer(&log);
  rt::set_event_recorder(nullptr);

  using C = rt::MemoryCategory;
  struct Expected {
    bool is_alloc;
    const void* ptr;
    size_t bytes;
    C category;
  };
  const std::vector<Expected> expected = {
      {true, p, 1024, C::Parameter},       {true, q, 3 * MiB, C::Gradient},    {false, p, 1024, C::Parameter},
      {false, q, 3 * MiB, C::Gradient},    {true, act, 512, C::Activation},    {true, tmp, 512, C::Temporary},
      {false, act, 512, C::Activation},    {false, tmp, 512, C::Temporary},
  };
  REQUIRE(log.events.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("event " << i);
    const rt::MemoryEvent& e = log.events[i];
    CHECK(e.is_alloc == expected[i].is_alloc);
    CHECK(e.ptr == expected[i].ptr);
    CHECK(e.bytes == expected[i].bytes);
    CHECK(e.category == expected[i].category);
    CHECK(e.device == rt::Device::cuda(1));
    CHECK(e.time_ns > 0);
  }
  CHECK(recorder.totals == std::vector<int64_t>{1024, 1024 + 3 * MiB, 3 * MiB, 0, 512, 1024, 512, 0});
}

TEST_CASE("concurrent allocations and frees from several threads keep the books straight") {
  HostSegmentSource source(4 * kPlenty);  // untouched pages of a malloc cost nothing
  CachingAllocator alloc(source);
  EventLog log;
  rt::add_memory_observer(&log);

  constexpr int kThreads = 4;
  constexpr int kSteps = 3000;
  std::atomic<int> corrupted{0};  // Catch2's assertions are not thread-safe: count, check after
  auto worker = [&](int id) {
    std::mt19937 rng(1234u + unsigned(id));
    struct Live {
      char* p;
      size_t bytes;
      unsigned char tag;
    };
    std::vector<Live> live;
    // A bounded window at each end is tagged: enough to see another block written over this one.
    auto window = [](size_t bytes) { return std::min<size_t>(bytes, 4 * KiB); };
    auto release = [&](size_t i) {
      const Live b = live[i];
      const size_t w = window(b.bytes);
      if (!holds(b.p, w, b.tag) || !holds(b.p + b.bytes - w, w, b.tag)) ++corrupted;
      alloc.deallocate(b.p, b.bytes);
      live[i] = live.back();
      live.pop_back();
    };
    for (int step = 0; step < kSteps; ++step) {
      if (!live.empty() && (live.size() >= 24 || rng() % 2 == 0)) {
        release(rng() % live.size());
        continue;
      }
      const unsigned kind = rng() % 100;
      const size_t bytes = kind < 85 ? 1 + rng() % (64 * KiB) : kind < 99 ? MiB + rng() % (4 * MiB) : 12 * MiB + rng() % MiB;
      const auto tag = static_cast<unsigned char>(1 + (id * 61 + step) % 250);
      char* p = as_bytes(alloc.allocate(bytes));
      const size_t w = window(bytes);
      fill(p, w, tag);
      fill(p + bytes - w, w, tag);
      live.push_back({p, bytes, tag});
    }
    while (!live.empty()) release(live.size() - 1);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  rt::remove_memory_observer(&log);

  CHECK(corrupted.load() == 0);
  const auto s = alloc.stats();
  CHECK(s.allocated_bytes == 0);
  CHECK(s.allocations == 0);
  CHECK(s.peak_allocated_bytes > 0);
  CHECK(s.peak_allocated_bytes <= s.reserved_bytes);
  size_t allocs = 0, frees = 0;
  for (const auto& e : log.events) (e.is_alloc ? allocs : frees)++;
  CHECK(allocs == frees);
  CHECK(allocs > size_t(kThreads * kSteps / 3));

  alloc.empty_cache();  // every segment is whole again once everything is freed
  CHECK(alloc.stats().reserved_bytes == 0);
  CHECK(alloc.stats().segments == 0);
  CHECK(source.live_segments() == 0);
}

// ---- streams -------------------------------------------------------------------------------
namespace {
// Two user streams; any distinct pointers name streams for the allocator.
int g_stream_tags[2];
rt::cuda::StreamId const kS1 = &g_stream_tags[0];
rt::cuda::StreamId const kS2 = &g_stream_tags[1];
}  // namespace

TEST_CASE("blocks belong to the stream they were allocated on") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  void* a = alloc.allocate(4 * KiB, kS1);
  alloc.deallocate(a, 4 * KiB);
  void* b = alloc.allocate(4 * KiB, kS2);  // s1's cached block is not handed to s2 ...
  CHECK(b != a);
  CHECK(source.live_segments() == 2);      // ... which gets a segment of its own
  void* c = alloc.allocate(4 * KiB, kS1);  // s1 reuses its block at once (the stream orders it)
  CHECK(c == a);
  alloc.deallocate(c, 4 * KiB);
  alloc.deallocate(b, 4 * KiB);
  void* d = alloc.allocate(4 * KiB, nullptr);  // neither is handed to the legacy stream
  CHECK((d != a && d != b));
  alloc.deallocate(d, 4 * KiB);
  CHECK(alloc.allocate(4 * KiB, kS2) == b);
  c = alloc.allocate(4 * KiB, kS1);
  CHECK(c == a);
  CHECK(source.live_segments() == 3);

  source.set_current_stream(kS2);  // allocate() without a stream takes the source's current one
  alloc.deallocate(b, 4 * KiB);
  CHECK(alloc.allocate(4 * KiB) == b);
  alloc.deallocate(b, 4 * KiB);
  alloc.deallocate(c, 4 * KiB);

  alloc.empty_cache();  // segments of every stream go back
  CHECK(source.live_segments() == 0);
  CHECK(alloc.stats().reserved_bytes == 0);
}

TEST_CASE("a block used on another stream is reused only after that stream's event") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  EventLog log;
  rt::add_memory_observer(&log);
  void* p = alloc.allocate(4 * KiB, kS1);
  alloc.record_stream(p, kS2);
  alloc.record_stream(p, kS2);  // twice: one use
  alloc.record_stream(p, kS1);  // its own stream: nothing to wait for
  alloc.deallocate(p, 4 * KiB);
  rt::remove_memory_observer(&log);

  CHECK(source.events_recorded() == 1);
  auto s = alloc.stats();
  CHECK(s.allocated_bytes == 0);  // the tensor is gone: its bytes leave the count at once
  CHECK(s.allocations == 0);
  CHECK(s.pending_events == 1);
  REQUIRE(log.events.size() == 2);
  CHECK_FALSE(log.events[1].is_alloc);

  void* q = alloc.allocate(4 * KiB, kS1);  // s2 may still be reading p
  CHECK(q != p);
  CHECK(alloc.stats().pending_events == 1);
  alloc.deallocate(q, 4 * KiB);  // q merges with the free rest of the segment; p stays out

  source.complete(kS2);
  void* r = alloc.allocate(4 * KiB, kS1);  // the event completed: p is free again, lowest address
  CHECK(r == p);
  CHECK(alloc.stats().pending_events == 0);
  CHECK(source.events_alive() == 0);
  CHECK(source.host_waits() == 0);  // found by polling, no host wait
  alloc.deallocate(r, 4 * KiB);
  alloc.empty_cache();
  CHECK(source.live_segments() == 0);  // p merged back: the segment was whole
}

TEST_CASE("a block used on two other streams waits for both events") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  void* p = alloc.allocate(3 * MiB, nullptr);
  alloc.record_stream(p, kS1);
  alloc.record_stream(p, kS2);
  alloc.deallocate(p, 3 * MiB);
  CHECK(alloc.stats().pending_events == 2);
  source.complete(kS1);
  void* q = alloc.allocate(3 * MiB, nullptr);
  CHECK(q != p);  // s2 has not got there yet
  CHECK(alloc.stats().pending_events == 1);
  source.complete(kS2);
  void* r = alloc.allocate(3 * MiB, nullptr);
  CHECK(r == p);
  CHECK(source.events_alive() == 0);
  alloc.deallocate(q, 0);
  alloc.deallocate(r, 0);
}

TEST_CASE("empty_cache and the out-of-memory retry wait for pending events") {
  SECTION("empty_cache") {
    HostSegmentSource source(kPlenty);
    CachingAllocator alloc(source);
    void* p = alloc.allocate(12 * MiB, kS1);
    alloc.record_stream(p, kS2);
    alloc.deallocate(p, 12 * MiB);
    alloc.empty_cache();
    CHECK(source.host_waits() == 1);
    CHECK(source.events_alive() == 0);
    CHECK(alloc.stats().pending_events == 0);
    CHECK(source.live_segments() == 0);
  }
  SECTION("the retry") {
    HostSegmentSource source(20 * MiB);
    CachingAllocator alloc(source);
    void* p = alloc.allocate(12 * MiB, kS1);  // a 12 MiB segment of its own
    alloc.record_stream(p, kS2);
    alloc.deallocate(p, 12 * MiB);
    void* q = alloc.allocate(12 * MiB, kS2);  // no room beside it: wait, return it, ask again
    CHECK(q != nullptr);
    CHECK(source.host_waits() == 1);
    CHECK(alloc.stats().alloc_retries == 1);
    CHECK(alloc.stats().ooms == 0);
    alloc.deallocate(q, 12 * MiB);
  }
}

TEST_CASE("record_stream needs a live block, the destructor destroys pending events") {
  HostSegmentSource source(kPlenty);
  {
    CachingAllocator alloc(source);
    void* p = alloc.allocate(100, kS1);
    CHECK_THROWS_WITH(alloc.record_stream(as_bytes(p) + 512, kS2), Catch::Contains("not a live block"));
    alloc.record_stream(p, kS2);
    alloc.deallocate(p, 100);
    CHECK_THROWS_AS(alloc.record_stream(p, kS2), rt::ValueError);  // freed already
    CHECK(source.events_alive() == 1);
  }
  CHECK(source.events_alive() == 0);
}

TEST_CASE("a failed event query leaves the books straight: nothing released twice, nothing lost") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source);
  void* a = alloc.allocate(4 * KiB, nullptr);
  void* b = alloc.allocate(4 * KiB, nullptr);
  alloc.record_stream(a, kS1);
  alloc.record_stream(b, kS2);
  alloc.deallocate(a, 4 * KiB);
  alloc.deallocate(b, 4 * KiB);
  source.complete(kS1);
  source.fail_queries_on(kS2);
  CHECK_THROWS_AS(alloc.allocate(4 * KiB, nullptr), std::runtime_error);  // a's event was handled first
  CHECK(alloc.stats().pending_events == 1);
  CHECK(source.events_alive() == 1);
  source.fail_queries_on(nullptr);
  source.complete(kS2);
  void* c = alloc.allocate(4 * KiB, nullptr);  // no event is queried or destroyed twice
  CHECK(c == a);
  CHECK(source.events_alive() == 0);
  CHECK(alloc.stats().pending_events == 0);
  alloc.deallocate(c, 4 * KiB);
  alloc.empty_cache();
  CHECK(source.live_segments() == 0);  // every block merged back once: the segment is whole
  CHECK(alloc.stats().reserved_bytes == 0);
}

TEST_CASE("without caching every request is a segment of its exact size, freed with its block") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source, {.caching = false});
  CHECK_FALSE(alloc.caching());
  EventLog log;
  rt::add_memory_observer(&log);
  void* a = alloc.allocate(1000, kS1);
  void* b = alloc.allocate(1000, kS1);
  CHECK(source.requests() == std::vector<size_t>{1000, 1000});  // no rounding, no shared segment
  CHECK(alloc.stats().allocated_bytes == 2000);
  CHECK(alloc.stats().reserved_bytes == 2000);
  CHECK(alloc.stats().segments == 2);
  fill(a, 1000, 0xAA);
  fill(b, 1000, 0xBB);
  CHECK(holds(a, 1000, 0xAA));
  alloc.deallocate(a, 1000);
  CHECK(source.live_segments() == 1);  // back to the source at once, nothing cached
  CHECK(alloc.stats().reserved_bytes == 1000);
  void* c = alloc.allocate(1000, kS1);
  CHECK(source.requests().size() == 3);  // asked again, not served from a cache
  alloc.deallocate(b, 1000);
  alloc.deallocate(c, 1000);
  rt::remove_memory_observer(&log);
  CHECK(source.live_segments() == 0);
  CHECK(alloc.stats().reserved_bytes == 0);
  CHECK(alloc.stats().allocated_bytes == 0);
  CHECK(alloc.stats().peak_reserved_bytes == 2000);
  REQUIRE(log.events.size() == 6);  // the same events as with caching, with the exact sizes
  CHECK(log.events[0].bytes == 1000);

  void* big = alloc.allocate(30 * MiB + 3, kS1);  // large requests too: no 2 MiB rounding
  CHECK(source.requests().back() == 30 * MiB + 3);
  alloc.deallocate(big, 30 * MiB + 3);
  CHECK(source.used() == 0);
}

TEST_CASE("without caching a block another stream uses goes back to the source after its event") {
  HostSegmentSource source(kPlenty);
  CachingAllocator alloc(source, {.caching = false});
  void* p = alloc.allocate(4 * KiB, kS1);
  alloc.record_stream(p, kS2);
  alloc.deallocate(p, 4 * KiB);
  CHECK(source.live_segments() == 1);  // s2 may still read it
  CHECK(alloc.stats().pending_events == 1);
  void* q = alloc.allocate(4 * KiB, kS1);
  CHECK(source.live_segments() == 2);
  source.complete(kS2);
  alloc.deallocate(q, 4 * KiB);
  void* r = alloc.allocate(512, kS1);  // each allocation polls the events: p's segment is freed
  CHECK(alloc.stats().pending_events == 0);
  CHECK(source.live_segments() == 1);
  alloc.deallocate(r, 512);
  CHECK(source.live_segments() == 0);
  CHECK(source.events_alive() == 0);
}

TEST_CASE("without caching a refused request is an OutOfMemoryError") {
  HostSegmentSource source(4 * MiB);
  CachingAllocator alloc(source, {.caching = false});
  void* keep = alloc.allocate(3 * MiB);
  CHECK_THROWS_AS(alloc.allocate(2 * MiB), rt::OutOfMemoryError);
  alloc.deallocate(keep, 3 * MiB);
  void* fits = alloc.allocate(2 * MiB);  // the memory came back with the block
  alloc.deallocate(fits, 2 * MiB);
  CHECK(alloc.stats().ooms == 1);
}

TEST_CASE("PYTORCH_NO_CUDA_MEMORY_CACHING turns caching off when set to anything but empty or 0") {
  CHECK_FALSE(rt::cuda::no_caching_requested(nullptr));
  CHECK_FALSE(rt::cuda::no_caching_requested(""));
  CHECK_FALSE(rt::cuda::no_caching_requested("0"));
  CHECK(rt::cuda::no_caching_requested("1"));
  CHECK(rt::cuda::no_caching_requested("true"));
}
