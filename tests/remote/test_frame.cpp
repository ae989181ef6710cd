// The remote protocol's framing: round trips at any split, and every kind of bad header refused with a
// message that names it (docs/remote-protocol.md). The libFuzzer target (fuzz/fuzz_remote.cpp) explores the
// same reader with the corpus in tests/remote/corpus.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "rt/remote/frame.h"

using namespace rt::remote;

namespace {

std::string header(const char* magic, uint16_t version, uint8_t type, uint8_t flags, uint32_t length, uint32_t raw) {
  std::string h(kFrameHeaderBytes, '\0');
  std::memcpy(h.data(), magic, 4);
  std::memcpy(h.data() + 4, &version, 2);
  h[6] = char(type);
  h[7] = char(flags);
  std::memcpy(h.data() + 8, &length, 4);
  std::memcpy(h.data() + 12, &raw, 4);
  return h;
}

std::string error_of(const std::string& bytes) {
  FrameReader r;
  r.feed(bytes.data(), bytes.size());
  try {
    while (r.next()) {
    }
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("frames round trip whatever the read sizes", "[remote][frame]") {
  std::string stream;
  stream += encode_frame(FrameType::Hello, R"({"protocol":1})");
  std::string big(300000, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char('a' + (i * 7919 % 26));
  stream += encode_frame(FrameType::EventBatch, big, true);
  stream += encode_frame(FrameType::Reply, "");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    FrameReader r;
    std::vector<Frame> got;
    for (size_t at = 0; at < stream.size();) {
      const size_t n = std::min(stream.size() - at, size_t(1 + rng() % 5000));
      r.feed(stream.data() + at, n);
      at += n;
      while (auto f = r.next()) got.push_back(std::move(*f));
    }
    REQUIRE(got.size() == 3);
    CHECK(got[0].type == FrameType::Hello);
    CHECK(decompressed(got[0]) == R"({"protocol":1})");
    CHECK(got[1].type == FrameType::EventBatch);
    CHECK(got[1].flags == kFlagLz4);
    CHECK(got[1].payload.size() < big.size());
    CHECK(decompressed(got[1]) == big);
    CHECK(got[2].type == FrameType::Reply);
    CHECK(got[2].payload.empty());
    CHECK(r.buffered() == 0);
  }
}

TEST_CASE("a truncated frame waits for the rest and never returns a partial one", "[remote][frame]") {
  const std::string f = encode_frame(FrameType::Request, R"({"id":1,"method":"status"})");
  for (size_t cut = 0; cut < f.size(); ++cut) {
    FrameReader r;
    r.feed(f.data(), cut);
    CHECK_FALSE(r.next().has_value());
    r.feed(f.data() + cut, f.size() - cut);
    auto got = r.next();
    REQUIRE(got.has_value());
    CHECK(got->payload == R"({"id":1,"method":"status"})");
  }
}

TEST_CASE("bad headers are refused with what was wrong", "[remote][frame]") {
  CHECK_THAT(error_of(header("HTTP", 1, 4, 0, 0, 0)), Catch::Contains("wrong magic"));
  CHECK_THAT(error_of("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Catch::Contains("wrong magic"));
  const std::string v2 = error_of(header("RTRA", 2, 4, 0, 0, 0));
  CHECK_THAT(v2, Catch::Contains("version mismatch") && Catch::Contains("version 2") && Catch::Contains("version 1"));
  CHECK_THAT(error_of(header("RTRA", 1, 0, 0, 0, 0)), Catch::Contains("unknown frame type 0"));
  CHECK_THAT(error_of(header("RTRA", 1, 99, 0, 0, 0)), Catch::Contains("unknown frame type 99"));
  CHECK_THAT(error_of(header("RTRA", 1, 4, 0x80, 0, 0)), Catch::Contains("unknown flags"));
  CHECK_THAT(error_of(header("RTRA", 1, 4, kFlagLz4, 0, 10)), Catch::Contains("may not be compressed"));
  CHECK_THAT(error_of(header("RTRA", 1, 4, 0, 0, 10)), Catch::Contains("announces 10 decompressed"));
  // Oversized: refused from the header alone, before any payload is buffered.
  CHECK_THAT(error_of(header("RTRA", 1, 4, 0, kMaxControlBytes + 1, 0)), Catch::Contains("over the limit"));
  CHECK_THAT(error_of(header("RTRA", 1, 6, kFlagLz4, 0xffffffffu, 100)), Catch::Contains("over the limit"));
  CHECK_THAT(error_of(header("RTRA", 1, 6, kFlagLz4, 10, kMaxRawBatchBytes + 1)), Catch::Contains("over the limit"));
}

TEST_CASE("a corrupt LZ4 payload is refused, not trusted", "[remote][frame]") {
  std::string payload(5000, 'q');
  std::string f = encode_frame(FrameType::EventBatch, payload, true);
  FrameReader r;
  // Claim a larger decompressed size than the block holds.
  std::string lying = f;
  const uint32_t raw = 6000;
  std::memcpy(lying.data() + 12, &raw, 4);
  r.feed(lying.data(), lying.size());
  auto got = r.next();
  REQUIRE(got.has_value());
  CHECK_THROWS_WITH(decompressed(*got), Catch::Contains("LZ4 payload is corrupt"));
  // Garbage instead of an LZ4 block.
  for (size_t i = kFrameHeaderBytes; i < f.size(); ++i) f[i] = char(0xff);
  FrameReader r2;
  r2.feed(f.data(), f.size());
  auto bad = r2.next();
  REQUIRE(bad.has_value());
  CHECK_THROWS_AS(decompressed(*bad), ProtocolError);
}

TEST_CASE("encode_frame refuses what a reader would refuse", "[remote][frame]") {
  CHECK_THROWS_WITH(encode_frame(FrameType::Reply, std::string(kMaxControlBytes + 1, 'x')),
                    Catch::Contains("over the limit"));
  CHECK_THROWS_WITH(encode_frame(FrameType::Reply, "{}", true), Catch::Contains("only EventBatch"));
}

TEST_CASE("random mutations of valid frames never crash the reader", "[remote][frame][fuzz]") {
  std::string base = encode_frame(FrameType::Hello, R"({"protocol":1,"client":"x"})") +
                     encode_frame(FrameType::EventBatch, std::string(2000, 'z'), true);
  std::mt19937 rng(20261207);
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string s = base;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 3) {
        case 0: s[rng() % s.size()] = char(rng()); break;
        case 1: s.resize(rng() % (s.size() + 1)); if (s.empty()) s = "R"; break;
        default: s.insert(rng() % s.size(), 1, char(rng())); break;
      }
    }
    FrameReader r;
    r.feed(s.data(), s.size());
    try {
      while (auto f = r.next()) {
        try {
          (void)decompressed(*f);
        } catch (const ProtocolError&) {
        }
      }
      ++accepted;
    } catch (const ProtocolError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(accepted > 0);
}
