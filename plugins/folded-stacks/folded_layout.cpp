#include "folded_layout.h"

#include <algorithm>
#include <map>

namespace folded {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_process_frame(std::string_view f) { return starts_with(f, "process "); }
bool is_thread_frame(std::string_view f) { return starts_with(f, "thread ("); }

struct Stack {
  const std::vector<std::string_view>* frames;
  size_t skip;  // leading thread frames
  uint64_t count;
  size_t line;
  bool operator<(const Stack& o) const {
    return std::lexicographical_compare(frames->begin() + long(skip), frames->end(), o.frames->begin() + long(o.skip),
                                        o.frames->end());
  }
  bool same_frames(const Stack& o) const {
    return std::equal(frames->begin() + long(skip), frames->end(), o.frames->begin() + long(o.skip),
                      o.frames->end());
  }
};

std::string sanitized(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == ';') c = ',';
    else if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) c = ' ';
  }
  return out;
}

}  // namespace

size_t thread_prefix_frames(const std::vector<std::string_view>& frames) {
  size_t n = 0;
  if (n < frames.size() && is_process_frame(frames[n])) ++n;
  if (n < frames.size() && is_thread_frame(frames[n])) ++n;
  return n < frames.size() ? n : 0;  // a stack of thread frames only keeps them as its frames
}

std::string thread_prefix(std::string_view thread_name) {
  if (thread_name.empty()) return {};
  if (is_process_frame(thread_name) || is_thread_frame(thread_name)) return std::string(thread_name);
  return "thread (" + sanitized(thread_name) + ")";
}

std::string frame_text(std::string_view name) { return name.empty() ? std::string("[unnamed]") : sanitized(name); }

std::optional<ParseError> lay_out(const FoldedFile& file, Layout& out) {
  std::map<std::string, size_t> thread_index;  // prefix -> position in out.threads
  std::vector<std::vector<Stack>> stacks;
  for (const FoldedLine& line : file.lines) {
    const size_t skip = thread_prefix_frames(line.frames);
    std::string name;
    for (size_t i = 0; i < skip; ++i) name.append(i ? ";" : "").append(line.frames[i]);
    auto [it, added] = thread_index.emplace(name, out.threads.size());
    if (added) {
      out.threads.push_back({.id = uint64_t(out.threads.size() + 1), .name = name, .slices = {}});
      stacks.emplace_back();
    }
    stacks[it->second].push_back({&line.frames, skip, line.count, line.line});
  }

  for (size_t t = 0; t < out.threads.size(); ++t) {
    std::vector<Stack>& list = stacks[t];
    std::stable_sort(list.begin(), list.end());
    std::vector<LaidSlice>& slices = out.threads[t].slices;
    std::vector<size_t> open;  // positions in `slices` of the current stack's frames
    int64_t now = 0;
    for (size_t i = 0; i < list.size();) {
      Stack s = list[i];
      for (++i; i < list.size() && list[i].same_frames(s); ++i) {
        s.count += list[i].count;
        if (s.count > kMaxCount)
          return ParseError{list[i].line, "the counts of this stack, added up over its lines, exceed 10^12"};
      }
      int64_t duration = 0;
      int64_t end = 0;
      if (__builtin_mul_overflow(int64_t(s.count), file.sample_period_ns, &duration) ||
          __builtin_add_overflow(now, duration, &end))
        return ParseError{s.line, "the thread's samples times the sample period (" +
                                      std::to_string(file.sample_period_ns) +
                                      " ns) exceed the 292 years 64-bit nanoseconds hold"};
      const size_t depth = s.frames->size() - s.skip;
      size_t common = 0;
      while (common < open.size() && common < depth &&
             slices[open[common]].name == (*s.frames)[s.skip + common])
        ++common;
      for (size_t k = common; k < open.size(); ++k) slices[open[k]].end_ns = now;
      open.resize(common);
      for (size_t k = common; k < depth; ++k) {
        open.push_back(slices.size());
        slices.push_back({.name = (*s.frames)[s.skip + k], .start_ns = now, .end_ns = now, .depth = int32_t(k)});
      }
      now = end;
    }
    for (size_t k : open) slices[k].end_ns = now;
  }
  return std::nullopt;
}

}  // namespace folded
