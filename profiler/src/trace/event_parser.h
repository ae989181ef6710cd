// Parses one Chrome trace event object (simdjson On Demand, one object at a time) into the fields the
// importer uses. Field names are Kineto's; unknown fields are skipped. String views point into the
// parser and stay valid until the next parse().
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "trace/event_stream.h"

namespace rt::prof::trace {

struct ParsedEvent {
  std::string_view ph, name, cat;
  std::string_view pid, tid;  // string content, or the number's text
  bool pid_numeric = false, tid_numeric = false;
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;

  // args
  std::string_view input_dims, module, category, op, arg_name, value_text;
  std::string input_types;
  bool has_input_types = false;
  int64_t sequence_nr = -1;
  uint64_t external_id = 0, correlation = 0, addr = 0, bytes = 0;
  int64_t device = 0, stream = 0, device_type = 0, device_id = -1, mem_bytes = 0, total_allocated = 0;
  bool has_device = false, has_stream = false;
  int64_t registers = 0, shared_memory = 0, copy_kind = 0;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  // collectives (cat "collective")
  std::string_view group, shape, dtype, call_site;
  uint64_t seq = 0;
  int64_t numel = 0, peer = -1, point_to_point = 0, queued_ns = 0, issuing_tid = 0;
  bool has_issuing_tid = false;
  std::vector<std::pair<std::string_view, double>> numbers;  // every numeric arg, for "C" events
};

// "1234.5678" -> 1234568 ns (micro- to nanoseconds, rounded); false when not a number or out of range.
bool parse_micros(std::string_view text, int64_t& ns);

class EventParser {
 public:
  explicit EventParser(std::string source_name) : name_(std::move(source_name)) {}
  // Throws TraceError naming the byte offset and the field when the event is malformed.
  void parse(const EventText& text, ParsedEvent& out);
  // Parses a top-level value of the object form: the callback receives the On Demand document.
  template <class Fn>
  void parse_value(const EventText& text, Fn&& fn) {
    begin(text);
    fn(doc_);
  }
  [[noreturn]] void fail(const std::string& what) const;
  void check(simdjson::error_code error, std::string_view field) const;

 private:
  void begin(const EventText& text);
  void parse_args(simdjson::ondemand::object args, ParsedEvent& out);
  int64_t time_field(simdjson::ondemand::value v, std::string_view field);

  std::string name_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document doc_;
  bool doc_valid_ = false;
  const EventText* text_ = nullptr;
};

}  // namespace rt::prof::trace
