#include "trace/event_parser.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "rt/prof/chrome_trace.h"

namespace rt::prof::trace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::value;

static_assert(kEventPadding >= simdjson::SIMDJSON_PADDING, "event text needs simdjson's padding");

namespace {

std::string_view trim(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

bool parse_int(std::string_view text, int64_t& out) {
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc() && p == text.data() + text.size()) return true;
  double d = 0;
  const auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec2 != std::errc() || q != text.data() + text.size() || !std::isfinite(d) || d != std::floor(d) ||
      std::fabs(d) >= 9.2e18)
    return false;
  out = int64_t(d);
  return true;
}

}  // namespace

bool parse_micros(std::string_view t, int64_t& ns) {
  t = trim(t);
  size_t i = 0;
  const bool negative = i < t.size() && t[i] == '-';
  if (negative) ++i;
  const size_t int_begin = i;
  uint64_t whole = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    if (whole > 9'223'372'036'854'775ull / 10 + 1) return false;
    whole = whole * 10 + uint64_t(t[i++] - '0');
  }
  if (i == int_begin) return false;
  uint64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const size_t frac_begin = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (frac_digits < 3) { frac = frac * 10 + uint64_t(t[i] - '0'); ++frac_digits; }
      else if (frac_digits == 3) { round_up = t[i] >= '5'; ++frac_digits; }
      ++i;
    }
    if (i == frac_begin) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    double d = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
    if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(d) || std::fabs(d) * 1000 >= 9.2e18) return false;
    ns = std::llround(d * 1000);
    return true;
  }
  if (i != t.size()) return false;
  while (frac_digits < 3) { frac *= 10; ++frac_digits; }
  if (whole > 9'223'372'036'854'775ull) return false;
  const uint64_t magnitude = whole * 1000 + frac + (round_up ? 1 : 0);
  if (magnitude > uint64_t(INT64_MAX)) return false;
  ns = negative ? -int64_t(magnitude) : int64_t(magnitude);
  return true;
}

void EventParser::fail(const std::string& what) const {
  uint64_t offset = text_ ? text_->offset : 0;
  if (doc_valid_ && text_) {
    const char* at = nullptr;
    if (const_cast<simdjson::ondemand::document&>(doc_).current_location().get(at) == simdjson::SUCCESS && at >= text_->data && at <= text_->data + text_->size)
      offset += uint64_t(at - text_->data);
  }
  throw TraceError(fmt::format("{}: invalid JSON at byte {}: {}", name_, offset, what), int64_t(offset));
}

void EventParser::check(simdjson::error_code error, std::string_view field) const {
  if (error == simdjson::SUCCESS) return;
  switch (error) {
    case simdjson::INCORRECT_TYPE: fail(fmt::format("\"{}\" has the wrong type", field));
    case simdjson::NUMBER_OUT_OF_RANGE: fail(fmt::format("\"{}\" is out of range", field));
    case simdjson::UTF8_ERROR: fail("the text is not valid UTF-8");
    default: fail(fmt::format("{} (in \"{}\")", simdjson::error_message(error), field));
  }
}

void EventParser::begin(const EventText& text) {
  text_ = &text;
  doc_valid_ = false;
  const auto error = parser_.iterate(text.data, text.size, text.size + kEventPadding).get(doc_);
  if (error) fail(simdjson::error_message(error));
  doc_valid_ = true;
}

int64_t EventParser::time_field(value v, std::string_view field) {
  json_type type{};
  check(v.type().get(type), field);
  std::string_view text;
  if (type == json_type::number) {
    text = v.raw_json_token();
  } else if (type == json_type::string) {
    check(v.get_string().get(text), field);
  } else {
    fail(fmt::format("\"{}\" must be a number of microseconds (or a numeric string)", field));
  }
  int64_t ns = 0;
  if (!parse_micros(text, ns))
    fail(fmt::format("\"{}\" is not a finite number of microseconds within +-9.2e15: {}", field, trim(text).substr(0, 40)));
  return ns;
}

void EventParser::parse(const EventText& text, ParsedEvent& e) {
  e = ParsedEvent{};
  begin(text);
  simdjson::ondemand::object obj;
  check(doc_.get_object().get(obj), "event");
  for (auto field : obj) {
    std::string_view key;
    check(field.unescaped_key().get(key), "key");
    value v;
    check(field.value().get(v), key);
    if (key == "ph") check(v.get_string().get(e.ph), key);
    else if (key == "name") check(v.get_string().get(e.name), key);
    else if (key == "cat") check(v.get_string().get(e.cat), key);
    else if (key == "ts") { e.ts_ns = time_field(v, key); e.has_ts = true; }
    else if (key == "dur") { e.dur_ns = time_field(v, key); e.has_dur = true; }
    else if (key == "pid" || key == "tid") {
      json_type type{};
      check(v.type().get(type), key);
      std::string_view& slot = key == "pid" ? e.pid : e.tid;
      bool& numeric = key == "pid" ? e.pid_numeric : e.tid_numeric;
      if (type == json_type::number) { slot = trim(v.raw_json_token()); numeric = true; }
      else if (type == json_type::string) check(v.get_string().get(slot), key);
      else fail(fmt::format("\"{}\" must be a number or a string", key));
    } else if (key == "args") {
      simdjson::ondemand::object args;
      check(v.get_object().get(args), "args");
      parse_args(args, e);
    }
  }
  if (e.ph.empty()) fail("the event has no \"ph\" (phase) field");
}

void EventParser::parse_args(simdjson::ondemand::object args, ParsedEvent& e) {
  for (auto field : args) {
    std::string_view key;
    check(field.unescaped_key().get(key), "args key");
    value v;
    check(field.value().get(v), key);
    json_type type{};
    check(v.type().get(type), key);
    if (type == json_type::number) {
      const std::string_view token = trim(v.raw_json_token());
      double d = 0;
      const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
      if (ec != std::errc() || !std::isfinite(d)) fail(fmt::format("args \"{}\" is not a finite number", key));
      if (e.numbers.size() < 256) e.numbers.emplace_back(key, d);
      int64_t i = 0;
      auto as_int = [&]() -> int64_t {
        if (!parse_int(token, i)) fail(fmt::format("args \"{}\" must be an integer, got {}", key, token.substr(0, 40)));
        return i;
      };
      auto as_uint = [&]() -> uint64_t {
        uint64_t u = 0;
        const auto [q, ec2] = std::from_chars(token.data(), token.data() + token.size(), u);
        if (ec2 == std::errc() && q == token.data() + token.size()) return u;
        return uint64_t(as_int());
      };
      if (key == "Sequence number") e.sequence_nr = as_int();
      else if (key == "External id") e.external_id = as_uint();
      else if (key == "correlation") e.correlation = as_uint();
      else if (key == "device") { e.device = as_int(); e.has_device = true; }
      else if (key == "stream") { e.stream = as_int(); e.has_stream = true; }
      else if (key == "Device Type") e.device_type = as_int();
      else if (key == "Device Id") e.device_id = as_int();
      else if (key == "Addr") e.addr = as_uint();
      else if (key == "Bytes") e.mem_bytes = as_int();
      else if (key == "Total Allocated") e.total_allocated = as_int();
      else if (key == "bytes") e.bytes = as_uint();
      else if (key == "registers per thread") e.registers = as_int();
      else if (key == "shared memory") e.shared_memory = as_int();
      else if (key == "copy kind") e.copy_kind = as_int();
      else if (key == "seq") e.seq = as_uint();
      else if (key == "In msg nelems") e.numel = as_int();
      else if (key == "peer") e.peer = as_int();
      else if (key == "point to point") e.point_to_point = as_int();
      else if (key == "queued ns") e.queued_ns = as_int();
      else if (key == "issuing tid") { e.issuing_tid = as_int(); e.has_issuing_tid = true; }
    } else if (type == json_type::string) {
      std::string_view s;
      check(v.get_string().get(s), key);
      if (key == "Input Dims") e.input_dims = s;
      else if (key == "Input type") { e.input_types = std::string(s); e.has_input_types = true; }
      else if (key == "module") e.module = s;
      else if (key == "Category") e.category = s;
      else if (key == "Op") e.op = s;
      else if (key == "name") e.arg_name = s;
      else if (key == "value") e.value_text = s;
      else if (key == "Process Group Name") e.group = s;
      else if (key == "shape") e.shape = s;
      else if (key == "dtype") e.dtype = s;
      else if (key == "call site") e.call_site = s;
    } else if (type == json_type::array) {
      simdjson::ondemand::array arr;
      check(v.get_array().get(arr), key);
      if (key == "Input Dims") {
        check(arr.raw_json().get(e.input_dims), key);
        e.input_dims = trim(e.input_dims);
      } else if (key == "Input type") {
        e.input_types = "[";
        bool first = true;
        for (auto item : arr) {
          std::string_view s;
          json_type item_type{};
          check(item.type().get(item_type), key);
          if (item_type == json_type::string) check(item.get_string().get(s), key);
          else check(item.raw_json_token().get(s), key), s = trim(s);
          if (!first) e.input_types += ", ";
          first = false;
          e.input_types.append(s.data(), s.size());
        }
        e.input_types += "]";
        e.has_input_types = true;
      } else if (key == "grid" || key == "block") {
        int32_t* dims = key == "grid" ? e.grid : e.block;
        size_t n = 0;
        for (auto item : arr) {
          int64_t d = 0;
          check(item.get_int64().get(d), key);
          if (n < 3) dims[n] = int32_t(d);
          ++n;
        }
      }
    }
  }
}

}  // namespace rt::prof::trace
