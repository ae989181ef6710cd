// StreamAccumulator: merging chunks, carriage returns, the size cap, UTF-8 across chunks.
#include "notebook/outputs.h"
#include "notebook/stream_accumulator.h"

#include <catch2/catch.hpp>

using namespace rt::studio;

namespace {
std::string text_of(const std::vector<nlohmann::json>& outputs, std::size_t i) { return stream_text(outputs.at(i)); }
}  // namespace

TEST_CASE("consecutive chunks of one stream merge, another stream starts a new output", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc;
  acc.append(outputs, "stdout", "a");
  acc.append(outputs, "stdout", "b\nc");
  acc.append(outputs, "stderr", "warn\n");
  acc.append(outputs, "stdout", "d\n");
  REQUIRE(outputs.size() == 3);
  CHECK(stream_name(outputs[0]) == "stdout");
  CHECK(text_of(outputs, 0) == "ab\nc");
  CHECK(text_of(outputs, 1) == "warn\n");
  CHECK(text_of(outputs, 2) == "d\n");
  outputs.push_back(make_display_data({{"text/plain", "x"}}));
  acc.append(outputs, "stdout", "after");
  REQUIRE(outputs.size() == 5);
  CHECK(text_of(outputs, 4) == "after");
}

TEST_CASE("carriage return overwrites the line like a terminal", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc;
  acc.append(outputs, "stdout", "epoch 1\n");
  for (int p = 0; p <= 100; p += 10) acc.append(outputs, "stdout", std::string("\r").append(std::to_string(p)).append("%"));
  CHECK(text_of(outputs, 0) == "epoch 1\n100%");
  acc.append(outputs, "stdout", "\rab");  // shorter: the rest of the old line stays
  CHECK(text_of(outputs, 0) == "epoch 1\nab0%");
  acc.append(outputs, "stdout", "\n");
  acc.append(outputs, "stdout", "x\r\ny\n");  // \r\n is a newline
  CHECK(text_of(outputs, 0) == "epoch 1\nab0%\nx\ny\n");
  acc.append(outputs, "stdout", "50%|#####     |\r");  // a '\r' at the end waits for the next chunk
  acc.append(outputs, "stdout", "60%|######    |\r");
  acc.append(outputs, "stdout", "done         \n");  // shorter than the bar: its last " |" stays, as in a terminal
  CHECK(text_of(outputs, 0) == "epoch 1\nab0%\nx\ny\ndone          |\n");
  acc.append(outputs, "stdout", "héllo\rH");  // overwrite counts characters, not bytes
  CHECK(text_of(outputs, 0).ends_with("\nHéllo"));
  acc.append(outputs, "stdout", "\r\xc3\xa9\xc3\xa9");
  CHECK(text_of(outputs, 0).ends_with("\nééllo"));
}

TEST_CASE("the size cap truncates with a marker that counts dropped bytes", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc({.max_text_bytes = 100});
  const std::string line(30, 'x');
  for (int i = 0; i < 3; ++i) acc.append(outputs, "stdout", line + "\n");  // 93 bytes
  CHECK(!acc.truncated());
  acc.append(outputs, "stdout", line + "\n");  // 7 fit, 24 dropped
  CHECK(acc.truncated());
  CHECK(acc.stored_bytes() == 100);
  CHECK(acc.dropped_bytes() == 24);
  const std::string marker = StreamAccumulator::truncation_marker(24, 100);
  CHECK(text_of(outputs, 0) == line + "\n" + line + "\n" + line + "\n" + "xxxxxxx\n" + marker);
  acc.append(outputs, "stderr", "12345");  // the cap is per cell, both streams
  acc.append(outputs, "stdout", "67890");
  REQUIRE(outputs.size() == 1);
  CHECK(acc.dropped_bytes() == 34);
  CHECK(text_of(outputs, 0).ends_with(StreamAccumulator::truncation_marker(34, 100)));
  CHECK(text_of(outputs, 0).find(marker) == std::string::npos);  // rewritten, not repeated
}

TEST_CASE("a progress bar never reaches the cap", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc({.max_text_bytes = 1000});
  for (int i = 0; i < 10000; ++i) acc.append(outputs, "stderr", std::string("\r").append(std::to_string(i)).append("/10000 [=====>    ]"));
  CHECK(!acc.truncated());
  CHECK(text_of(outputs, 0) == "9999/10000 [=====>    ]");
}

TEST_CASE("a flood is cut at a character boundary and stays cheap", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc({.max_text_bytes = 1 << 20});
  const std::string chunk = std::string(1000, 'y') + "é\n";
  for (int i = 0; i < 5000; ++i) acc.append(outputs, "stdout", chunk);  // 5 MB offered
  CHECK(acc.truncated());
  const std::string text = text_of(outputs, 0);
  CHECK(text.size() < (1 << 20) + 200);
  CHECK(acc.stored_bytes() <= (1u << 20));
  CHECK(acc.stored_bytes() + acc.dropped_bytes() == 5000 * chunk.size());
  CHECK(text.find("... output truncated: ") != std::string::npos);
  // Never half a character before the marker.
  const std::size_t marker = text.find("\n... output truncated");
  REQUIRE(marker != std::string::npos);
  CHECK(static_cast<unsigned char>(text[marker - 1]) != 0xC3);
}

TEST_CASE("UTF-8 split across chunks is joined, invalid bytes become U+FFFD", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc;
  acc.append(outputs, "stdout", "caf\xc3");
  CHECK(text_of(outputs, 0) == "caf");
  acc.append(outputs, "stdout", "\xa9 \xf0\x9f");
  acc.append(outputs, "stdout", "\x98\x80!");
  CHECK(text_of(outputs, 0) == "café 😀!");
  acc.append(outputs, "stdout", "bad \xff byte");
  CHECK(text_of(outputs, 0).ends_with("bad \xEF\xBF\xBD byte"));
}

TEST_CASE("clearing the outputs starts over", "[studio][stream]") {
  std::vector<nlohmann::json> outputs;
  StreamAccumulator acc({.max_text_bytes = 10});
  acc.append(outputs, "stdout", "0123456789abc");
  CHECK(acc.truncated());
  outputs.clear();  // IPython.display.clear_output()
  acc.append(outputs, "stdout", "fresh");
  REQUIRE(outputs.size() == 1);
  CHECK(text_of(outputs, 0) == "fresh");
  CHECK(!acc.truncated());
  outputs[0]["text"] = "edited elsewhere\npartial";  // someone else changed the text: re-derive the line
  acc.append(outputs, "stdout", "\rP");
  CHECK(text_of(outputs, 0) == "edited elsewhere\nPartial");
}
