#include "notebook/stream_accumulator.h"

#include "notebook/outputs.h"
#include "notebook/utf8_text.h"

#include <fmt/format.h>

namespace rt::studio {

// Note [Terminal semantics of stream text]
// The tracked output's text always ends with the current line, which starts at line_start_; cursor_ is where
// the next character goes within it. Ordinary characters at the end of the line are appended; after a '\r'
// they overwrite the line one code point at a time (tqdm redraws its bar this way). '\n' appends a newline at the
// end of the text, whatever the cursor, as a terminal moves down leaving the line as shown. The state survives
// between chunks, so "50%\r" and "60%" arriving separately still overwrite. If the text is changed by someone
// else (its size differs from tracked_size_), the accumulator re-derives the state from the text.

namespace {

// Splits off an incomplete UTF-8 sequence at the end of `bytes` (at most 3 bytes that start a valid sequence).
std::string_view take_incomplete_tail(std::string_view bytes, std::string& tail) {
  tail.clear();
  const std::size_t n = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(bytes[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t needed = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (needed > back && c >= 0xC2 && c <= 0xF4) {
      tail.assign(bytes.substr(n - back));
      return bytes.substr(0, n - back);
    }
    break;
  }
  return bytes;
}

// Byte length of the first `count` code points of `text` from `from` (or up to the end).
std::size_t advance_code_points(std::string_view text, std::size_t from, std::size_t count) {
  std::size_t i = from;
  for (std::size_t k = 0; k < count && i < text.size(); ++k) {
    std::size_t n = utf8_sequence_length(text, i);
    i += n == 0 ? 1 : n;
  }
  return i - from;
}

std::size_t count_code_points(std::string_view text) {
  std::size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

}  // namespace

StreamAccumulator::StreamAccumulator(StreamLimits limits) : limits_(limits) {}

void StreamAccumulator::reset() {
  const StreamLimits limits = limits_;
  *this = StreamAccumulator(limits);
}

std::string StreamAccumulator::truncation_marker(std::size_t dropped_bytes, std::size_t limit_bytes) {
  return fmt::format("... output truncated: {} bytes dropped (limit {} bytes per cell)\n", dropped_bytes,
                     limit_bytes);
}

bool StreamAccumulator::still_tracking(const std::vector<nlohmann::json>& outputs, std::string_view name) const {
  if (tracked_outputs_ != &outputs || tracked_name_ != name || outputs.empty() ||
      tracked_index_ != outputs.size() - 1)
    return false;
  const nlohmann::json& out = outputs[tracked_index_];
  if (output_kind(out) != OutputKind::stream || stream_name(out) != name) return false;
  const auto text = out.find("text");
  return text != out.end() && text->is_string() && text->get_ref<const std::string&>().size() == tracked_size_;
}

void StreamAccumulator::start_tracking(std::vector<nlohmann::json>& outputs, std::string_view name) {
  if (tracked_outputs_ == &outputs && tracked_index_ >= outputs.size()) {
    // Our output is gone (clear_output): what is stored now is what counts against the cap.
    stored_bytes_ = 0;
    dropped_bytes_ = 0;
    has_marker_ = false;
  }
  const bool can_merge = !outputs.empty() && output_kind(outputs.back()) == OutputKind::stream &&
                         stream_name(outputs.back()) == name;
  if (!can_merge) {
    outputs.push_back(make_stream_output(name, ""));
  } else {
    nlohmann::json& text = outputs.back()["text"];
    if (!text.is_string()) text = stream_text(outputs.back());
  }
  tracked_outputs_ = &outputs;
  tracked_index_ = outputs.size() - 1;
  tracked_name_ = std::string(name);
  const std::string& text = outputs.back()["text"].get_ref<const std::string&>();
  tracked_size_ = text.size();
  const std::size_t newline = text.rfind('\n');
  line_start_ = newline == std::string::npos ? 0 : newline + 1;
  cursor_ = text.size() - line_start_;
}

void StreamAccumulator::write_text(std::string& text, std::string_view run, std::size_t& dropped_in_chunk) {
  if (run.empty()) return;
  if (dropped_bytes_ > 0 || dropped_in_chunk > 0) {  // truncated: everything further is dropped
    dropped_in_chunk += run.size();
    return;
  }
  const std::size_t allowed = limits_.max_text_bytes > stored_bytes_ ? limits_.max_text_bytes - stored_bytes_ : 0;
  const std::size_t line_length = text.size() - line_start_;
  if (cursor_ >= line_length) {
    std::size_t keep = run.size();
    if (keep > allowed) keep = floor_to_char_boundary(run, allowed);
    text.append(run.substr(0, keep));
    stored_bytes_ += keep;
    cursor_ += keep;
    dropped_in_chunk += run.size() - keep;
    return;
  }
  const std::size_t at = line_start_ + cursor_;
  const std::size_t replaced = advance_code_points(text, at, count_code_points(run));
  const std::size_t growth = run.size() > replaced ? run.size() - replaced : 0;
  if (growth > allowed) {
    dropped_in_chunk += run.size();
    return;
  }
  text.replace(at, replaced, run);
  stored_bytes_ = stored_bytes_ + run.size() - replaced;
  cursor_ += run.size();
}

void StreamAccumulator::update_marker(std::vector<nlohmann::json>& outputs) {
  if (has_marker_ && marker_index_ < outputs.size()) {
    nlohmann::json& text = outputs[marker_index_]["text"];
    if (text.is_string()) {
      std::string& s = text.get_ref<std::string&>();
      if (s.size() >= marker_length_) s.resize(s.size() - marker_length_);
    }
  } else {
    marker_index_ = tracked_index_;
  }
  nlohmann::json& text = outputs[marker_index_]["text"];
  std::string& s = text.get_ref<std::string&>();
  std::string marker = truncation_marker(dropped_bytes_, limits_.max_text_bytes);
  if (!s.empty() && s.back() != '\n') marker.insert(marker.begin(), '\n');
  s += marker;
  marker_length_ = marker.size();
  has_marker_ = true;
  if (marker_index_ == tracked_index_) {
    tracked_size_ = s.size();
    line_start_ = s.size();
    cursor_ = 0;
  }
}

void StreamAccumulator::append(std::vector<nlohmann::json>& outputs, std::string_view name, std::string_view chunk) {
  std::string& partial = name == "stderr" ? partial_stderr_ : partial_stdout_;
  std::string joined;
  if (!partial.empty()) {
    joined = partial + std::string(chunk);
    chunk = joined;
  }
  std::string tail;
  chunk = take_incomplete_tail(chunk, tail);
  const std::string text_in = to_valid_utf8(chunk);
  partial = std::move(tail);
  if (text_in.empty()) return;

  if (dropped_bytes_ > 0 && has_marker_ && marker_index_ < outputs.size() && tracked_outputs_ == &outputs) {
    dropped_bytes_ += text_in.size();  // truncated: only the count changes
    update_marker(outputs);
    return;
  }
  if (!still_tracking(outputs, name)) start_tracking(outputs, name);
  std::string& text = outputs[tracked_index_]["text"].get_ref<std::string&>();

  std::size_t dropped_in_chunk = 0;
  std::size_t run_start = 0;
  for (std::size_t i = 0; i <= text_in.size(); ++i) {
    const bool end = i == text_in.size();
    if (!end && text_in[i] != '\r' && text_in[i] != '\n') continue;
    write_text(text, std::string_view(text_in).substr(run_start, i - run_start), dropped_in_chunk);
    run_start = i + 1;
    if (end) break;
    if (text_in[i] == '\r') {
      cursor_ = 0;
    } else if (dropped_bytes_ == 0 && dropped_in_chunk == 0 && stored_bytes_ < limits_.max_text_bytes) {
      text += '\n';
      ++stored_bytes_;
      line_start_ = text.size();
      cursor_ = 0;
    } else {
      ++dropped_in_chunk;
    }
  }
  tracked_size_ = text.size();
  if (dropped_in_chunk > 0) {
    dropped_bytes_ += dropped_in_chunk;
    update_marker(outputs);
  }
}

}  // namespace rt::studio
