// The framing between the host and its trace-plugin child (trace_wire.h): round trips, byte-by-byte feeding,
// and garbage, which must give a WireError (or a wait for more bytes), never a crash or a bogus record.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "trace/trace_wire.h"

namespace wire = rt::plugin::wire;

namespace {

std::string sample_stream() {
  std::string out;
  wire::put_hello(out, "org.example.x", "fmt");
  wire::put_metadata(out, "key", "value");
  const RtTraceSlice s = {.struct_size = sizeof(RtTraceSlice), .thread = 0xfedcba9876543210ull,
                          .thread_name = "main", .name = "matmul", .category = nullptr,
                          .start_ns = -5, .end_ns = INT64_MAX, .depth = 3};
  wire::put_slice(out, s);
  wire::put_detect(out, 77);
  wire::put_bytes(out, std::string("a\0b", 3).substr(0, 1));
  wire::put_result(out, RT_STATUS_INVALID_ARGUMENT, "line 3: bad count");
  wire::put_end(out);
  return out;
}

std::vector<wire::Record> read_all(const std::string& bytes, size_t step) {
  wire::RecordReader reader(1024);
  std::vector<wire::Record> out;
  for (size_t i = 0; i < bytes.size(); i += step) {
    reader.feed(std::string_view(bytes).substr(i, step));
    while (auto r = reader.next()) out.push_back(std::move(*r));
  }
  REQUIRE_FALSE(reader.holds_partial_record());
  return out;
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

std::string raw_record(uint32_t type, const std::string& payload) {
  std::string out;
  put_u32(out, type);
  put_u32(out, uint32_t(payload.size()));
  return out + payload;
}

std::string string_field(const std::string& s) {
  std::string out;
  put_u32(out, uint32_t(s.size()));
  return out + s;
}

std::string wire_error(const std::string& bytes) {
  wire::RecordReader reader(1024);
  reader.feed(bytes);
  try {
    while (reader.next()) {
    }
  } catch (const wire::WireError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("every record type survives the framing, fed whole or a byte at a time") {
  const std::string bytes = sample_stream();
  for (size_t step : {bytes.size(), size_t(1), size_t(7)}) {
    const std::vector<wire::Record> r = read_all(bytes, step);
    REQUIRE(r.size() == 7);
    CHECK(r[0].type == wire::RecordType::Hello);
    CHECK(r[0].number == wire::kProtocolVersion);
    CHECK(r[0].text[0] == "org.example.x");
    CHECK(r[0].text[1] == "fmt");
    CHECK(r[1].text[0] == "key");
    CHECK(r[1].text[1] == "value");
    CHECK(r[2].type == wire::RecordType::Slice);
    CHECK(r[2].thread == 0xfedcba9876543210ull);
    CHECK(r[2].start_ns == -5);
    CHECK(r[2].end_ns == INT64_MAX);
    CHECK(r[2].depth == 3);
    CHECK(r[2].text[0] == "main");
    CHECK(r[2].text[1] == "matmul");
    CHECK(r[2].text[2].empty());
    const RtTraceSlice s = r[2].slice();
    CHECK(std::string(s.name) == "matmul");
    CHECK(r[3].number == 77);
    CHECK(r[4].text[0] == "a");
    CHECK(r[5].type == wire::RecordType::Result);
    CHECK(r[5].number == RT_STATUS_INVALID_ARGUMENT);
    CHECK(r[5].text[0] == "line 3: bad count");
    CHECK(r[6].type == wire::RecordType::End);
  }
}

TEST_CASE("malformed records are WireErrors that say what is wrong and where") {
  CHECK(wire_error(raw_record(99, "")).find("unknown record type 99 at byte 0") != std::string::npos);
  CHECK(wire_error(raw_record(2, std::string(5000, 'x'))).find("claims 5000 bytes") != std::string::npos);
  CHECK(wire_error(raw_record(7, "x")).find("claims 1 bytes") != std::string::npos);
  // A string running past its payload.
  std::string past;
  put_u32(past, 50);
  CHECK(wire_error(raw_record(2, past + "abc")).find("runs past the record's end") != std::string::npos);
  // A NUL inside a string.
  CHECK(wire_error(raw_record(2, string_field(std::string("a\0b", 3)) + string_field("v"))).find("NUL") !=
        std::string::npos);
  // Bytes left over after the last field.
  CHECK(wire_error(raw_record(4, "12345678")).find("claims 8 bytes") != std::string::npos);
  CHECK(wire_error(raw_record(6, std::string(4, '\0') + string_field("m") + "zz")).find("2 bytes are left over") !=
        std::string::npos);
  // A string longer than the limit.
  CHECK(wire_error(raw_record(2, string_field(std::string(1020, 'k')) + string_field("v"))).empty());  // within 1024
  wire::RecordReader small(16);
  small.feed(raw_record(2, string_field(std::string(20, 'k')) + string_field("v")));
  CHECK_THROWS_WITH(small.next(), Catch::Contains("more than the 16 allowed"));
  // The second record is the bad one: its offset is named.
  std::string two;
  wire::put_end(two);
  two += raw_record(42, "");
  CHECK(wire_error(two).find("at byte 8") != std::string::npos);
}

TEST_CASE("random bytes and random mutations of a valid stream never crash the reader") {
  std::mt19937 random(7);
  const std::string valid = sample_stream();
  for (int round = 0; round < 2000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(std::uniform_int_distribution<size_t>(0, 200)(random));
      for (char& c : bytes) c = char(random());
    } else {
      bytes = valid;
      const int flips = std::uniform_int_distribution<int>(1, 4)(random);
      for (int i = 0; i < flips; ++i) bytes[random() % bytes.size()] = char(random());
    }
    wire::RecordReader reader(1024);
    reader.feed(bytes);
    try {
      while (auto r = reader.next()) {
        for (const std::string& t : r->text) REQUIRE(t.find('\0') == std::string::npos);
        REQUIRE(r->text[0].size() <= wire::kMaxBytesChunk);
      }
    } catch (const wire::WireError&) {
    }
  }
}
