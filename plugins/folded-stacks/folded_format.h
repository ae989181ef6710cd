// folded_format.h — the folded-stack text format, read and recognised (folded_reader.cpp).
//
//   folded::FoldedFile file;
//   if (std::optional<folded::ParseError> e = folded::parse_folded(text, file))
//     report("line %zu: %s", e->line, e->message.c_str());
//   for (const folded::FoldedLine& l : file.lines) use(l.frames, l.count);   // frames root first
//   int32_t sure = folded::detect_folded(first_64_kib);                      // 0..100
//
// The format (py-spy `record -f raw`, Brendan Gregg's stackcollapse-*.pl, read by flamegraph.pl, inferno and
// speedscope): one line per stack, frames from the root to the leaf separated by ';', then whitespace, then
// how many samples saw that stack. What this reader accepts, and where it is stricter than flamegraph.pl:
//  - the count is the last whitespace-separated field and must be a positive decimal integer of at most
//    kMaxCount (flamegraph.pl also takes fractions and ignores malformed lines; here they are errors naming the
//    line, so a damaged file is never half-read);
//  - frames may hold spaces ("main (train.py:12)") but never ';', and none may be empty;
//  - blank lines and lines starting with '#' are skipped (flamegraph.pl and inferno skip them too, with a
//    warning); "# sample_period_ns=N" is a directive: what one sample lasts (default kDefaultSamplePeriodNs);
//  - "\r\n" line ends are accepted; the text must be UTF-8 without control characters other than tab;
//  - a line is at most kMaxLineBytes long and a stack at most kMaxFrames deep.
// Every string_view in a FoldedFile points into the text given to parse_folded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace folded {

inline constexpr int64_t kDefaultSamplePeriodNs = 10'000'000;  // py-spy's default rate, 100 samples a second
inline constexpr size_t kMaxLineBytes = size_t(1) << 20;
inline constexpr size_t kMaxFrames = 4096;
inline constexpr uint64_t kMaxCount = 1'000'000'000'000ull;
inline constexpr std::string_view kPeriodDirective = "# sample_period_ns=";

struct FoldedLine {
  std::vector<std::string_view> frames;  // root first; never empty, no frame empty
  uint64_t count = 0;                    // > 0
  size_t line = 0;                       // 1-based, for messages
};

struct FoldedFile {
  std::vector<FoldedLine> lines;  // in file order
  int64_t sample_period_ns = kDefaultSamplePeriodNs;
  bool period_given = false;      // the file had a "# sample_period_ns=" directive
};

struct ParseError {
  size_t line = 0;  // 1-based
  std::string message;
};

// Parses `text` into `out`; returns the first problem, naming its line.
std::optional<ParseError> parse_folded(std::string_view text, FoldedFile& out);

// How sure we are that a file starting with `head` is folded stacks: 0 when any complete line in it is not a
// folded line (or there is none), 90 when every one is and some stack has two or more frames, 50 when every
// stack has a single frame ("name 12" could be many things). A last line without '\n' is ignored when `head`
// holds other lines (it may be cut).
int32_t detect_folded(std::string_view head);

}  // namespace folded
