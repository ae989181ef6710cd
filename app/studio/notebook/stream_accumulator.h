// app/studio/notebook/stream_accumulator.h — stdout/stderr chunks into a cell's outputs, as Jupyter front ends
// show them: consecutive chunks merge, '\r' rewinds the line (progress bars), and a size cap stops floods.
//
//   rt::studio::StreamAccumulator acc({.max_text_bytes = 1 << 20});  // one per cell run
//   acc.append(cell.outputs, "stdout", "epoch 1\n");
//   acc.append(cell.outputs, "stdout", "  10%|#    |\r");
//   acc.append(cell.outputs, "stdout", "  20%|##   |\r");  // the same line, overwritten
//   acc.append(cell.outputs, "stderr", "warning\n");        // a new output: the last one was stdout
//   // cell.outputs == [{"name":"stdout","text":"epoch 1\n  20%|##   |",...}, {"name":"stderr",...}]
//
// Contracts (see Note [Terminal semantics of stream text] in stream_accumulator.cpp):
// - A chunk is merged into the last output when that output is a stream of the same name, otherwise a new
//   stream output is appended. Nothing else in `outputs` is touched.
// - Text behaves like a terminal line: '\n' ends the line; '\r' moves to the start of the current line, and
//   later characters overwrite it character by character (UTF-8 code points), keeping the rest of a longer old
//   line; "\r\n" is a newline. A '\r' at the end of a chunk waits for the next chunk of that stream, so a
//   progress bar split across chunks still overwrites. Other control characters are kept as they are.
// - The cap counts the bytes of stream text stored in `outputs` by this accumulator (after '\r' overwrites, so
//   a progress bar never hits it). Once a chunk would exceed it, the text that fits is kept (cut at a character
//   boundary), the rest is dropped, and the output ends with the marker line truncation_marker(N), updated as
//   more is dropped. Later chunks of either stream are dropped and counted. Each append costs O(chunk + the
//   current line), never O(total text).
// - If `outputs` was cleared or replaced behind its back (clear_output, a new run), the accumulator starts
//   over: call reset() or simply pass the new vector; it notices that its tracked output is gone.
// - A UTF-8 character split across two chunks is joined; other invalid UTF-8 bytes become U+FFFD, so the stored
//   text is always valid (to_ipynb needs it).
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rt::studio {

struct StreamLimits {
  std::size_t max_text_bytes = std::size_t{1} << 20;  // per cell run, both streams together
};

class StreamAccumulator {
 public:
  explicit StreamAccumulator(StreamLimits limits = {});

  // `name` is "stdout" or "stderr" (other names are kept as given).
  void append(std::vector<nlohmann::json>& outputs, std::string_view name, std::string_view text);
  // Forgets all state (cursor positions, byte counts): the next append starts a fresh budget.
  void reset();

  std::size_t stored_bytes() const { return stored_bytes_; }
  std::size_t dropped_bytes() const { return dropped_bytes_; }
  bool truncated() const { return dropped_bytes_ > 0; }
  const StreamLimits& limits() const { return limits_; }

  // "... output truncated: 12345 bytes dropped (limit 1048576 bytes per cell)\n" (the accumulator puts it on a
  // line of its own).
  static std::string truncation_marker(std::size_t dropped_bytes, std::size_t limit_bytes);

 private:
  // Where text goes, checked before each append (see Note [Terminal semantics of stream text]).
  bool still_tracking(const std::vector<nlohmann::json>& outputs, std::string_view name) const;
  void start_tracking(std::vector<nlohmann::json>& outputs, std::string_view name);
  void write_text(std::string& text, std::string_view run, std::size_t& dropped_in_chunk);
  void update_marker(std::vector<nlohmann::json>& outputs);

  StreamLimits limits_;
  std::size_t stored_bytes_ = 0;
  std::size_t dropped_bytes_ = 0;
  const std::vector<nlohmann::json>* tracked_outputs_ = nullptr;
  std::size_t tracked_index_ = 0;
  std::string tracked_name_;
  std::size_t tracked_size_ = 0;  // the tracked text's size after our last write
  std::size_t line_start_ = 0;    // byte offset of the current (last) line in the tracked text
  std::size_t cursor_ = 0;        // byte offset of the cursor within the current line
  std::string partial_stdout_, partial_stderr_;  // an incomplete UTF-8 sequence at the end of the last chunk
  bool has_marker_ = false;
  std::size_t marker_index_ = 0;
  std::size_t marker_length_ = 0;
};

}  // namespace rt::studio
