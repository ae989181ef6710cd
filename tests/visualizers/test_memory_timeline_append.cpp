// MemoryTimelineModel::append (rt/viz/memory_timeline.h): a model fed a growing session's memory events chunk by
// chunk, in order, nearly in order or shuffled, equals a model built from scratch on the same data (samples,
// peaks, blocks, warnings); a late event rewinds only its device; a growth that does not continue the model is
// refused.
#include <catch2/catch.hpp>

#include "live_growth.h"
#include "rt/error.h"
#include "rt/viz/memory_timeline.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using fixtures::Arrival;
using fixtures::GrowingSession;
using fixtures::SessionBuilder;
using rt::prof::MemoryCategoryId;
using rt::prof::SessionData;

namespace {

void require_same_blocks(const std::vector<MemoryBlock>& a, const std::vector<MemoryBlock>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("block " << i);
    REQUIRE(a[i].start_ns == b[i].start_ns);
    REQUIRE(a[i].end_ns == b[i].end_ns);
    REQUIRE(a[i].bytes == b[i].bytes);
    REQUIRE(a[i].address == b[i].address);
    REQUIRE(a[i].device == b[i].device);
    REQUIRE(a[i].category == b[i].category);
    REQUIRE(a[i].op == b[i].op);
    REQUIRE(a[i].freed == b[i].freed);
  }
}

void require_same_model(const MemoryTimelineModel& a, const MemoryTimelineModel& b) {
  REQUIRE(a.devices().size() == b.devices().size());
  for (size_t k = 0; k < a.devices().size(); ++k) {
    const DeviceMemory& x = a.devices()[k];
    const DeviceMemory& y = b.devices()[k];
    INFO("device " << y.device);
    REQUIRE(x.device == y.device);
    REQUIRE(x.label == y.label);
    REQUIRE(x.times == y.times);
    REQUIRE(x.bytes == y.bytes);
    REQUIRE(x.totals == y.totals);
    REQUIRE(x.peak.time_ns == y.peak.time_ns);
    REQUIRE(x.peak.total == y.peak.total);
    REQUIRE(x.peak.bytes == y.peak.bytes);
    require_same_blocks(a.blocks().on_device(x.device), b.blocks().on_device(y.device));
  }
  REQUIRE(a.blocks().size() == b.blocks().size());
  REQUIRE(a.warnings().size() == b.warnings().size());
  for (size_t w = 0; w < a.warnings().size(); ++w) REQUIRE(a.warnings()[w].text() == b.warnings()[w].text());
}

int follow(const SessionData& all, Arrival arrival, uint64_t seed, size_t max_chunk) {
  GrowingSession growing(all, arrival, seed);
  MemoryTimelineModel model(*growing.data());
  int chunks = 0;
  while (!growing.done()) {
    model.append(*growing.data(), growing.next(max_chunk));
    ++chunks;
    INFO("chunk " << chunks);
    require_same_model(model, MemoryTimelineModel(*growing.data()));
  }
  const MemoryBlock* any = nullptr;
  for (const DeviceMemory& dev : model.devices())
    if (!model.blocks().on_device(dev.device).empty()) any = &model.blocks().on_device(dev.device).front();
  if (any) REQUIRE(model.blocks().op_name(*any) == growing.data()->strings.at(any->op));  // names grew too
  return chunks;
}

}  // namespace

TEST_CASE("a memory model appended chunk by chunk equals one built from scratch, whatever the arrival order") {
  for (bool imperfect : {false, true}) {
    SessionData all = fixtures::generate_memory(6000, imperfect ? 21 : 22, imperfect);
    all.memory.push_back({.time_ns = 500, .address = 0x77, .bytes = 0, .device = 0});  // a zero-byte record
    for (Arrival arrival : {Arrival::RecordOrder, Arrival::Jittered, Arrival::Shuffled}) {
      for (size_t max_chunk : {size_t(30), size_t(900)}) {
        INFO((imperfect ? "imperfect" : "clean") << ", arrival " << int(arrival) << ", chunks of up to " << max_chunk);
        REQUIRE(follow(all, arrival, max_chunk + size_t(arrival), max_chunk) > 3);
      }
    }
  }
}

TEST_CASE("a late event rewinds its device only, and the replay goes on from there") {
  SessionBuilder b;
  b.memory(10, 0xA, 100, MemoryCategoryId::Activation, 0, "aten::relu");
  b.memory(30, 0xA, -100, MemoryCategoryId::Activation, 0);
  b.memory(40, 0xB, 50, MemoryCategoryId::Gradient, 0);
  b.memory(20, 0xC, 7, MemoryCategoryId::Other, -1);
  SessionData& live = b.data();
  MemoryTimelineModel model(live);
  REQUIRE(model.device(0)->times == std::vector<int64_t>{10, 30, 40});
  REQUIRE(model.device(0)->peak.total == 100);

  rt::prof::SessionGrowth growth;
  growth.memory = live.memory.size();
  live.memory.push_back({.time_ns = 20,
                         .address = 0xD,
                         .bytes = 400,
                         .device = 0,
                         .category = MemoryCategoryId::Temporary});  // older than what device 0 replayed
  live.memory.push_back({.time_ns = 35, .address = 0xD, .bytes = -400, .device = 0});
  live.memory.push_back({.time_ns = 25, .address = 0xC, .bytes = -7, .device = -1});  // device -1, in order
  model.append(live, growth);
  const DeviceMemory& dev = *model.device(0);
  REQUIRE(dev.times == std::vector<int64_t>{10, 20, 30, 35, 40});
  REQUIRE(dev.totals == std::vector<int64_t>{100, 500, 400, 0, 50});
  REQUIRE(dev.peak.time_ns == 20);
  REQUIRE(dev.peak.total == 500);
  REQUIRE(model.device(-1)->totals == std::vector<int64_t>{7, 0});
  REQUIRE(model.blocks().on_device(0).size() == 3);
  REQUIRE(model.blocks().on_device(0)[1].address == 0xD);  // by start time
  REQUIRE(model.blocks().on_device(0)[1].end_ns == 35);
  require_same_model(model, MemoryTimelineModel(live));
}

TEST_CASE("a memory growth that does not continue the model is refused") {
  SessionBuilder b;
  b.memory(10, 0xA, 100, MemoryCategoryId::Activation, 0);
  MemoryTimelineModel model(b.data());
  rt::prof::SessionGrowth growth;  // claims nothing was replayed
  REQUIRE_THROWS_AS(model.append(b.data(), growth), rt::ValueError);
  REQUIRE_THROWS_WITH(model.append(b.data(), growth), Catch::Contains("first new memory event is 0, but the model "
                                                                      "replayed 1"));
  growth.memory = 5;
  REQUIRE_THROWS_WITH(model.append(b.data(), growth), Catch::Contains("the data holds 1"));
  growth.memory = 1;
  model.append(b.data(), growth);  // nothing new: nothing changes
  REQUIRE(model.device(0)->totals == std::vector<int64_t>{100});
}
