// folded_layout.h — folded stacks laid out as a flame chart, and a flame chart folded back into stacks.
//
//   folded::Layout layout;
//   if (auto e = folded::lay_out(file, layout)) fail(e->line, e->message);
//   for (const folded::LaidThread& t : layout.threads)
//     for (const folded::LaidSlice& s : t.slices) emit(t.id, t.name, s.name, s.start_ns, s.end_ns, s.depth);
//
// Note [Folded layout]
// Threads: a stack whose root-most frames are py-spy's "process PID:\"CMD\"" and/or "thread (0x...)" frames
// (in that order, with at least one frame after them) belongs to the thread named by those frames, joined by
// ';' (`process 7:"python a.py";thread (0x7f3a): MainThread`); the other stacks belong to one thread with an
// empty name. Thread ids count from 1 in order of first appearance in the file.
// Time: within a thread, stacks are sorted (frame by frame, byte order) and identical stacks merged (counts
// added); then each stack in turn occupies count * sample_period_ns from where the previous one ended, the
// thread starting at 0. A frame shared with the previous stack's same-depth frame (and all above it) is not
// restarted but extended, so each distinct prefix is one slice, as a flame chart draws it. A slice's self time
// (its length minus its children's) is therefore exactly its stack's count times the period.
// Exporting walks the slices back: each slice's self time / period (rounded to the nearest whole number,
// zero dropped) is the count of its stack, the stack being its thread's prefix (see thread_prefix) plus the
// names from its root-most ancestor to it; equal stacks are merged. Exporting what lay_out produced gives the
// stacks lay_out read, merged, so importing that again gives the same slices.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folded_format.h"

namespace folded {

struct LaidSlice {
  std::string_view name;  // into the parsed text
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int32_t depth = 0;
};

struct LaidThread {
  uint64_t id = 0;
  std::string name;               // the py-spy prefix frames joined by ';', or ""
  std::vector<LaidSlice> slices;  // in start order, parents before their children
};

struct Layout {
  std::vector<LaidThread> threads;
};

// Fails (naming a line) when a thread's total time would not fit in 64-bit nanoseconds.
std::optional<ParseError> lay_out(const FoldedFile& file, Layout& out);

// How many leading frames of `frames` name the thread (Note [Folded layout]): 0, 1 or 2.
size_t thread_prefix_frames(const std::vector<std::string_view>& frames);

// The frames an exported thread starts its stacks with: its name as is when it is a py-spy prefix, nothing for
// an unnamed thread, else "thread (NAME)" (with NAME's ';' and control characters made ',' and ' ').
std::string thread_prefix(std::string_view thread_name);

// A slice name as a frame: ';' becomes ',', control characters ' ', an empty name "[unnamed]".
std::string frame_text(std::string_view name);

}  // namespace folded
