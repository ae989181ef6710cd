// A recording session's deltas through the EventBatch encoding: decoded batches applied by a client give the
// same session as the deltas themselves, and corrupt or hostile payloads are refused with the field named.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <random>

#include "rt/prof/gradient_histograms.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/session_delta.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/frame.h"
#include "rt/rt.h"

using namespace rt;
using rt::remote::EventBatch;

namespace {

prof::SessionOptions options() {
  prof::SessionOptions o;
  o.profile_memory = true;
  o.record_shapes = true;
  o.with_stack = true;
  o.cupti = prof::CuptiMode::Off;
  o.flush_interval = std::chrono::milliseconds(20);
  return o;
}

void train_steps(prof::Session& s, int steps) {
  auto w = rt::randn({8, 4}).requires_grad_(true);
  for (int i = 0; i < steps; ++i) {
    prof::RecordFunction range("train_step");
    auto x = rt::randn({16, 8});
    auto loss = rt::matmul(x, w).relu().sum();
    loss.backward();
    REQUIRE(prof::record_gradient_histogram("w", w.grad(), 4 + i));
    s.counter("loss", loss.item<double>());
    s.step();
  }
}

// A client's view: the session rebuilt from batches that went through bytes.
struct Mirror {
  prof::SessionData data;
  void apply(const std::string& payload) {
    EventBatch b = remote::decode_event_batch(payload, data.strings.size());
    if (b.delta.reset)
      data = std::move(b.delta.records);
    else
      prof::append_delta(data, std::move(b.delta));
  }
};

// The whole session as one reset's encoding: equal bytes, equal sessions.
std::string as_reset(const prof::SessionData& d) {
  EventBatch b;
  b.delta.reset = true;
  b.delta.records = d;
  return remote::encode_event_batch(b);
}

}  // namespace

TEST_CASE("a live session mirrored through EventBatch bytes equals the session read locally", "[remote][batch]") {
  prof::Session s(options());
  s.start();
  prof::SnapshotCursor cursor;
  prof::SessionData local;
  Mirror mirror;
  size_t batches = 0;
  for (int round = 0; round < 4; ++round) {
    train_steps(s, 3);
    prof::SessionDelta delta = s.snapshot_since(cursor);
    cursor = delta.cursor;
    const std::string payload = remote::encode_event_batch(EventBatch{delta, 0});
    // Through a frame, as the agent sends it.
    const std::string frame = remote::encode_frame(remote::FrameType::EventBatch, payload, true);
    remote::FrameReader reader;
    reader.feed(frame.data(), frame.size());
    auto f = reader.next();
    REQUIRE(f.has_value());
    mirror.apply(remote::decompressed(*f));
    if (delta.reset)
      local = std::move(delta.records);
    else
      prof::append_delta(local, std::move(delta));
    ++batches;
  }
  s.stop();
  CHECK(batches == 4);
  REQUIRE(local.ops.size() > 20);
  CHECK(mirror.data.ops.size() == local.ops.size());
  CHECK(mirror.data.memory.size() == local.memory.size());
  CHECK(mirror.data.counters.size() == 12);
  CHECK(!mirror.data.graphs.empty());
  CHECK(mirror.data.gradient_histograms.size() == 12);
  CHECK(mirror.data.gradient_histograms.size() == local.gradient_histograms.size());
  CHECK(as_reset(mirror.data) == as_reset(local));
  // The final reset after stop() (sorted records, everything) round trips too.
  prof::SessionDelta last = s.snapshot_since(cursor);
  REQUIRE(last.reset);
  mirror.apply(remote::encode_event_batch(EventBatch{last, 5}));
  CHECK(mirror.data.complete);
  CHECK(as_reset(mirror.data) == as_reset(s.data()));
}

TEST_CASE("event batch decoding refuses corrupt payloads and never over-reads", "[remote][batch]") {
  prof::Session s(options());
  s.start();
  train_steps(s, 2);
  s.stop();
  const std::string good = as_reset(s.data());
  CHECK_NOTHROW(remote::decode_event_batch(good, 0));

  SECTION("every truncation is refused") {
    for (size_t cut = 0; cut < good.size(); cut += 1 + cut / 50)
      CHECK_THROWS_AS(remote::decode_event_batch(std::string_view(good).substr(0, cut), 0), remote::ProtocolError);
  }
  SECTION("trailing bytes are refused") {
    CHECK_THROWS_WITH(remote::decode_event_batch(good + "x", 0), Catch::Contains("after its last record"));
  }
  SECTION("unknown flags are refused") {
    std::string bad = good;
    bad[0] = char(0x80);
    CHECK_THROWS_WITH(remote::decode_event_batch(bad, 0), Catch::Contains("unknown flags"));
  }
  SECTION("an increment that does not continue the client's strings is refused") {
    EventBatch inc;
    inc.delta.first_new_string = 10;
    inc.delta.new_strings = {"a"};
    CHECK_THROWS_WITH(remote::decode_event_batch(remote::encode_event_batch(inc), 3),
                      Catch::Contains("continues the strings at 10") && Catch::Contains("holds 3"));
  }
  SECTION("a string id past the table is refused") {
    EventBatch inc;
    inc.delta.first_new_string = 1;
    inc.delta.new_strings = {"matmul"};
    inc.delta.records.ops.push_back(prof::OpRecord{});
    inc.delta.records.ops.back().name = 7;
    CHECK_THROWS_WITH(remote::decode_event_batch(remote::encode_event_batch(inc), 1),
                      Catch::Contains("op name string id 7"));
  }
  SECTION("a huge record count is refused before anything is allocated") {
    EventBatch inc;
    inc.delta.first_new_string = 1;
    std::string bytes = remote::encode_event_batch(inc);
    // The thread count follows the (empty) strings; make it 2^31.
    const size_t threads_at = bytes.size() - 4 * 10;  // ten empty vectors' counts close the payload
    bytes[threads_at + 3] = char(0x80);
    CHECK_THROWS_WITH(remote::decode_event_batch(bytes, 1), Catch::Contains("threads") && Catch::Contains("claims"));
  }
  SECTION("random byte flips are refused or decode to valid ids, never crash") {
    std::mt19937 rng(11);
    int refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bad = good;
      for (int e = 0; e < 3; ++e) bad[rng() % bad.size()] = char(rng());
      try {
        (void)remote::decode_event_batch(bad, 0);
      } catch (const remote::ProtocolError&) {
        ++refused;
      }
    }
    CHECK(refused > 0);
  }
}

TEST_CASE("batches written by hand from docs/remote-protocol.md decode (the fuzz corpus seeds)", "[remote][batch]") {
  // tests/remote/corpus/batch_*_payload were written byte by byte from the protocol page (the generator is in
  // the commit that added them); the first byte is the fuzz target's selector.
  auto read = [](const char* name) {
    std::ifstream in(std::string(RT_SOURCE_DIR) + "/tests/remote/corpus/" + name, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 1);
    return bytes.substr(1);
  };
  const EventBatch reset = remote::decode_event_batch(read("batch_reset_payload"), 0);
  CHECK(reset.delta.reset);
  CHECK(reset.dropped_by_agent == 3);
  const auto& d = reset.delta.records;
  CHECK(d.name == "job rank 0");
  CHECK(d.metadata.at("rank") == "0");
  REQUIRE(d.ops.size() == 1);
  CHECK(d.strings.at(d.ops[0].name) == "matmul");
  CHECK(d.ops[0].end_ns == 150);
  REQUIRE(d.memory.size() == 1);
  CHECK(d.memory[0].category == prof::MemoryCategoryId::Activation);
  CHECK(d.counters.at(0).value == 0.5);
  CHECK(d.steps.at(0).end_ns == 200);
  const EventBatch inc = remote::decode_event_batch(read("batch_increment_payload"), 1);
  CHECK_FALSE(inc.delta.reset);
  CHECK(inc.delta.new_strings == std::vector<std::string>{"matmul"});
  const EventBatch grads = remote::decode_event_batch(read("batch_gradients_payload"), 1);
  CHECK(grads.delta.new_strings == std::vector<std::string>{"fc.weight"});
  REQUIRE(grads.delta.records.gradient_histograms.size() == 1);
  const prof::GradientHistogramRecord& h = grads.delta.records.gradient_histograms[0];
  CHECK(h.name == 1);
  CHECK(h.time_ns == 250);
  CHECK(h.numel == 6);
  CHECK(h.norm == 2.5);
  CHECK(h.lo == -1);
  CHECK(h.hi == 2);
  CHECK(h.nan_count == 1);
  CHECK(h.counts == std::vector<int64_t>{2, 0, 3});
}

TEST_CASE("gradient histograms in event batches: every count and id is checked", "[remote][batch]") {
  EventBatch inc;
  inc.delta.first_new_string = 1;
  inc.delta.new_strings = {"fc.weight"};
  prof::GradientHistogramRecord h;
  h.name = 1;
  h.numel = 6;
  h.norm = 2.5;
  h.lo = -1;
  h.hi = 2;
  h.nan_count = 1;
  h.counts = {2, 0, 3};
  inc.delta.records.gradient_histograms = {h};
  CHECK(remote::decode_event_batch(remote::encode_event_batch(inc), 1).delta.records.gradient_histograms.size() == 1);
  auto refused = [&](auto change) {
    EventBatch bad = inc;
    change(bad.delta.records.gradient_histograms[0]);
    try {
      (void)remote::decode_event_batch(remote::encode_event_batch(bad), 1);
    } catch (const remote::ProtocolError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused([](auto& r) { r.name = 9; }), Catch::Contains("gradient histogram name string id 9"));
  CHECK_THAT(refused([](auto& r) { r.counts[0] = 5; }), Catch::Contains("inconsistent gradient histogram") &&
                                                            Catch::Contains("exceed"));
  CHECK_THAT(refused([](auto& r) { r.counts[1] = -1; }), Catch::Contains("negative"));
  CHECK_THAT(refused([](auto& r) { r.nan_count = 9; }), Catch::Contains("9 NaN"));
  CHECK_THAT(refused([](auto& r) { r.lo = std::nan(""); }), Catch::Contains("not a finite interval"));
  CHECK_THAT(refused([](auto& r) { r.counts.assign(prof::kMaxGradientBins + 1, 0); r.counts[0] = 5; }),
             Catch::Contains("4097 bins"));
  // A bin count claiming more bins than the bytes left is refused before allocating.
  std::string bytes = remote::encode_event_batch(inc);
  const size_t bins_at = bytes.size() - 3 * 8 - 4;
  bytes[bins_at + 3] = char(0x7f);
  CHECK_THROWS_WITH(remote::decode_event_batch(bytes, 1), Catch::Contains("gradient histogram bins"));
}
