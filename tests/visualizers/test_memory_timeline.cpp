// The memory timeline: stacked bytes by category equal a replay of the events, the peak is exact,
// per-pixel columns keep every peak, blocks add up to the series, and hit-testing finds the block
// under the cursor.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <map>
#include <numeric>

#include "rt/error.h"
#include "rt/viz/memory_timeline.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using rt::prof::MemoryCategoryId;
using fixtures::SessionBuilder;

namespace {

// The contract of memory_timeline.h replayed naively: a map of live blocks per device.
std::map<int32_t, std::vector<MemorySample>> replay(const rt::prof::SessionData& d) {
  std::vector<size_t> order(d.memory.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return d.memory[a].time_ns < d.memory[b].time_ns; });
  std::map<std::pair<int32_t, uint64_t>, std::pair<int64_t, size_t>> live;  // -> bytes, category
  std::map<int32_t, CategoryBytes> now;
  std::map<int32_t, std::vector<MemorySample>> out;
  for (size_t k : order) {
    const auto& e = d.memory[k];
    if (e.bytes == 0) continue;
    const std::pair<int32_t, uint64_t> key{e.device, e.address};
    if (e.bytes > 0) {
      live[key] = {e.bytes, size_t(e.category)};
      now[e.device][size_t(e.category)] += e.bytes;
    } else {
      auto it = live.find(key);
      if (it == live.end()) continue;
      now[e.device][it->second.second] -= it->second.first;
      live.erase(it);
    }
    auto& samples = out[e.device];
    const MemorySample s{e.time_ns, total_of(now[e.device]), now[e.device]};
    if (!samples.empty() && samples.back().time_ns == e.time_ns) samples.back() = s;
    else samples.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("every sample equals a replay of the events and the peak is exact") {
  for (bool imperfect : {false, true}) {
    const rt::prof::SessionData d = fixtures::generate_memory(20000, imperfect ? 3 : 4, imperfect);
    const MemoryTimelineModel model(d);
    const auto expected = replay(d);
    REQUIRE(model.devices().size() == expected.size());
    REQUIRE(model.devices().front().label == "CPU");
    REQUIRE(model.devices().back().label == "cuda:0");
    REQUIRE(model.warnings().empty() == !imperfect);
    for (const DeviceMemory& dev : model.devices()) {
      const auto& samples = expected.at(dev.device);
      REQUIRE(dev.times.size() == samples.size());
      MemorySample peak;
      for (size_t i = 0; i < samples.size(); ++i) {
        INFO("device " << dev.device << " sample " << i);
        REQUIRE(dev.times[i] == samples[i].time_ns);
        REQUIRE(dev.bytes[i] == samples[i].bytes);
        REQUIRE(dev.totals[i] == samples[i].total);
        if (samples[i].total > peak.total) peak = samples[i];
      }
      REQUIRE(dev.peak.total == peak.total);
      REQUIRE(dev.peak.time_ns == peak.time_ns);
      REQUIRE(dev.peak.bytes == peak.bytes);
      REQUIRE(dev.at(dev.times[10]).total == dev.totals[10]);
      REQUIRE(dev.at(dev.times.front() - 1).total == 0);
    }
  }
}

TEST_CASE("imperfect records are repaired and counted") {
  SessionBuilder b;
  b.memory(10, 0xA, 100, MemoryCategoryId::Activation, 0, "aten::relu");
  b.memory(20, 0xB, -50, MemoryCategoryId::Activation, 0);      // never allocated here
  b.memory(30, 0xA, 200, MemoryCategoryId::Gradient, 0);        // 0xA is still live
  b.memory(40, 0xA, -150, MemoryCategoryId::Other, 0);          // frees the gradient, wrong size
  b.memory(50, 0xC, 0, MemoryCategoryId::Other, 0);
  const MemoryTimelineModel model(b.data());
  std::vector<std::string> texts;
  for (const MemoryWarning& w : model.warnings()) texts.push_back(w.text());
  REQUIRE(texts == std::vector<std::string>{"1 free without an allocation ignored",
                                            "1 allocation at an address already in use",
                                            "1 free whose size differs from the allocation",
                                            "1 zero-byte record ignored"});
  const DeviceMemory& dev = *model.device(0);
  REQUIRE(dev.times == std::vector<int64_t>{10, 30, 40});
  REQUIRE(dev.totals == std::vector<int64_t>{100, 300, 100});
  REQUIRE(dev.bytes.back()[size_t(MemoryCategoryId::Activation)] == 100);  // the first block leaked
  REQUIRE(dev.bytes.back()[size_t(MemoryCategoryId::Gradient)] == 0);
  REQUIRE(model.blocks().size() == 2);
  REQUIRE_FALSE(model.blocks().on_device(0)[0].freed);
  REQUIRE(model.device(3) == nullptr);
}

TEST_CASE("each column holds the largest state during its pixel, so peaks are never lost") {
  const rt::prof::SessionData d = fixtures::generate_memory(20000, 8, false);
  const MemoryTimelineModel model(d);
  const DeviceMemory& dev = *model.device(-1);
  std::vector<MemoryColumn> columns;
  const int64_t span = dev.times.back() - dev.times.front();
  for (const auto& [t0, t1, width] : {std::tuple{dev.times.front(), dev.times.back(), 700.0},
                                      std::tuple{dev.times.front() + span / 3, dev.times.front() + span / 3 + span / 50, 333.5},
                                      std::tuple{dev.times.front() - 1000, dev.times.back() + 1000, 64.0}}) {
    model.columns(-1, t0, t1, width, columns);
    REQUIRE(columns.size() == size_t(std::ceil(width)));
    const double ns_per_px = double(t1 - t0) / width;
    int64_t largest = 0;
    for (size_t p = 0; p < columns.size(); ++p) {
      const int64_t lo = t0 + int64_t(std::floor(double(p) * ns_per_px));
      const int64_t hi = p + 1 == columns.size() ? t1 + 1 : t0 + int64_t(std::floor(double(p + 1) * ns_per_px));
      int64_t expected = dev.at(lo).total;  // the state entering the pixel
      for (size_t i = 0; i < dev.times.size(); ++i)
        if (dev.times[i] >= lo && dev.times[i] < hi) expected = std::max(expected, dev.totals[i]);
      INFO("pixel " << p << " of " << columns.size());
      REQUIRE(columns[p].pixel == int64_t(p));
      REQUIRE(columns[p].total == expected);
      REQUIRE(total_of(columns[p].bytes) == columns[p].total);
      largest = std::max(largest, columns[p].total);
    }
    if (t0 <= dev.peak.time_ns && dev.peak.time_ns <= t1) REQUIRE(largest == dev.peak.total);
  }
  REQUIRE_THROWS_AS(model.columns(-1, 10, 5, 100, columns), rt::ValueError);
  REQUIRE_THROWS_AS(model.columns(-1, 0, 5, 0, columns), rt::ValueError);
  REQUIRE_THROWS_AS(model.columns(7, 0, 5, 100, columns), rt::ValueError);
}

TEST_CASE("blocks alive at a time add up to the series, per category") {
  const rt::prof::SessionData d = fixtures::generate_memory(6000, 5, true);
  const MemoryTimelineModel model(d);
  for (const DeviceMemory& dev : model.devices()) {
    for (size_t i = 0; i < dev.times.size(); i += 97) {
      CategoryBytes sum{};
      for (const MemoryBlock* b : model.blocks().alive_at(dev.device, dev.times[i])) sum[size_t(b->category)] += b->bytes;
      INFO("device " << dev.device << " time " << dev.times[i]);
      REQUIRE(sum == dev.bytes[i]);
    }
  }
}

TEST_CASE("hit-testing the stack finds the block and its allocating op, largest blocks come first") {
  SessionBuilder b;
  b.data().start_ns = 0;
  b.memory(1000, 0x1, 4096, MemoryCategoryId::Parameter, 0, "nn.Linear");
  b.memory(2000, 0x2, 1 << 20, MemoryCategoryId::Activation, 0, "aten::addmm");
  b.memory(3000, 0x3, 512, MemoryCategoryId::Activation, 0, "aten::relu");
  b.memory(4000, 0x2, -(1 << 20), MemoryCategoryId::Activation, 0);
  const MemoryTimelineModel model(b.data());
  const MemoryBlocks& blocks = model.blocks();

  REQUIRE(blocks.hit_test(0, 3500, 0)->address == 0x1);             // parameters at the bottom
  REQUIRE(blocks.hit_test(0, 3500, 4095)->address == 0x1);
  REQUIRE(blocks.hit_test(0, 3500, 4096)->address == 0x2);          // then activations by start
  REQUIRE(blocks.hit_test(0, 3500, 4096 + (1 << 20))->address == 0x3);
  REQUIRE(blocks.hit_test(0, 3500, 4096 + (1 << 20) + 512) == nullptr);
  REQUIRE(blocks.hit_test(0, 4000, 4096)->address == 0x3);          // freed at 4000
  REQUIRE(blocks.hit_test(0, 500, 0) == nullptr);
  REQUIRE(blocks.hit_test(0, 3500, -1) == nullptr);

  const auto largest = blocks.largest_at(0, 3500, 2);
  REQUIRE(largest.size() == 2);
  REQUIRE(largest[0]->address == 0x2);
  REQUIRE(largest[1]->address == 0x1);
  REQUIRE(blocks.largest_at(0, 3500, 10).size() == 3);

  const MemoryBlock& mm = *blocks.hit_test(0, 3500, 4096);
  REQUIRE(blocks.op_name(mm) == "aten::addmm");
  REQUIRE(blocks.hover_text(mm) == "aten::addmm: 1.00 MiB activation, allocated at 2.000us, freed at 4.000us");
  REQUIRE(blocks.hover_text(*blocks.hit_test(0, 3500, 0)) ==
          "nn.Linear: 4.00 KiB parameter, allocated at 1.000us, never freed");
  REQUIRE(format_bytes(512) == "512 B");
  REQUIRE(format_bytes(3LL << 30) == "3.00 GiB");
}

TEST_CASE("a session without memory events has no devices") {
  const MemoryTimelineModel model(rt::prof::SessionData{});
  REQUIRE(model.devices().empty());
  REQUIRE(model.blocks().size() == 0);
  REQUIRE(model.blocks().on_device(-1).empty());
  REQUIRE(model.blocks().hit_test(0, 0, 0) == nullptr);
}
