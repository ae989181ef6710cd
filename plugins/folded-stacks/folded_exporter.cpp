// The exporter: a session's slices folded into stacks (Note [Folded layout] in folded_layout.h).
#include "folded_exporter.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "folded_format.h"
#include "folded_layout.h"

namespace folded {
namespace {

struct ThreadStacks {
  std::string prefix;
  std::vector<std::string> order;                  // stacks in order of first appearance
  std::unordered_map<std::string, int64_t> self;   // stack -> self time, ns
};

struct OpenSlice {
  size_t path_length;  // length of Walk::path up to and including this frame
  int64_t start_ns, end_ns, children_ns;
};

// The visitor's state while the host walks the session.
struct Walk {
  std::vector<ThreadStacks> threads;
  std::unordered_map<uint64_t, size_t> thread_index;
  ThreadStacks* current = nullptr;
  uint64_t current_thread = 0;
  std::string path;  // the current prefix and frames, ';'-joined
  std::vector<OpenSlice> open;
  std::string error;

  void close_to(size_t depth) {
    while (open.size() > depth) {
      const OpenSlice s = open.back();
      open.pop_back();
      const int64_t length = s.end_ns - s.start_ns;
      const int64_t self = length > s.children_ns ? length - s.children_ns : 0;
      const std::string stack = path.substr(0, s.path_length);
      auto [it, added] = current->self.emplace(stack, 0);
      if (added) current->order.push_back(stack);
      it->second += self;
      if (!open.empty()) open.back().children_ns += length;
      path.resize(open.empty() ? current->prefix.size() : open.back().path_length);
    }
  }

  RtStatus visit(const RtTraceSlice* slice) {
    if (!slice || !RT_ABI_HAS_FIELD(slice, depth) || !slice->name) {
      error = "the host passed a slice without a name or depth";
      return RT_STATUS_INVALID_ARGUMENT;
    }
    if (!current || slice->thread != current_thread) {
      if (current) close_to(0);
      auto [it, added] = thread_index.emplace(slice->thread, threads.size());
      if (added) threads.push_back({.prefix = thread_prefix(slice->thread_name ? slice->thread_name : ""),
                                    .order = {}, .self = {}});
      current = &threads[it->second];
      current_thread = slice->thread;
      path = current->prefix;
    }
    if (slice->depth < 0 || size_t(slice->depth) > open.size()) {
      error = "slice '" + std::string(slice->name) + "' has depth " + std::to_string(slice->depth) + " but " +
              std::to_string(open.size()) + " slices are open on its thread";
      return RT_STATUS_INVALID_ARGUMENT;
    }
    close_to(size_t(slice->depth));
    if (!path.empty()) path += ';';
    path += frame_text(slice->name);
    const int64_t end = slice->end_ns > slice->start_ns ? slice->end_ns : slice->start_ns;
    open.push_back({path.size(), slice->start_ns, end, 0});
    return RT_STATUS_OK;
  }
};

RtStatus visit_slice(void* context, const RtTraceSlice* slice) {
  try {
    return static_cast<Walk*>(context)->visit(slice);
  } catch (const std::bad_alloc&) {
    static_cast<Walk*>(context)->error = "out of memory while folding the stacks";
    return RT_STATUS_OUT_OF_MEMORY;
  }
}

// Collects the output in 64 KiB pieces for the host's writer.
class Output {
 public:
  Output(RtByteWriter write, void* context) : write_(write), context_(context) {}
  RtStatus add(std::string_view s) {
    buffer_.append(s);
    return buffer_.size() >= (size_t(64) << 10) ? flush() : RT_STATUS_OK;
  }
  RtStatus flush() {
    if (buffer_.empty()) return RT_STATUS_OK;
    const RtStatus status = write_(context_, buffer_.data(), buffer_.size());
    buffer_.clear();
    return status;
  }

 private:
  RtByteWriter write_;
  void* context_;
  std::string buffer_;
};

// The metadata's sample period, or kRecordedUnitNs when it has none; 0 when it is malformed.
int64_t sample_period(const RtTraceSource* source) {
  const char* text = source->metadata ? source->metadata(source->context, "sample_period_ns") : nullptr;
  if (!text) return kRecordedUnitNs;
  int64_t v = 0;
  if (!*text) return 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9' || v > (int64_t(kMaxCount) - (*p - '0')) / 10) return 0;
    v = v * 10 + (*p - '0');
  }
  return v;
}

}  // namespace

RtStatus export_folded(const RtTraceSource* source, RtByteWriter write, void* writer_context, RtError* error) {
  try {
    if (!source || !RT_ABI_HAS_FIELD(source, for_each_slice) || !source->for_each_slice || !write)
      return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT, "folded-stacks export needs a trace source and a writer");
    const int64_t period = sample_period(source);
    if (period <= 0)
      return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT,
                          "the session's metadata \"sample_period_ns\" is not a whole number from 1 to 10^12");
    Walk walk;
    const RtStatus walked = source->for_each_slice(source->context, visit_slice, &walk);
    if (walked != RT_STATUS_OK)
      return rt_error_set(error, walked,
                          walk.error.empty() ? "the host stopped the walk over the session's slices" : walk.error.c_str());
    if (walk.current) walk.close_to(0);

    Output out(write, writer_context);
    RtStatus status = RT_STATUS_OK;
    if (period != kDefaultSamplePeriodNs)
      status = out.add(std::string(kPeriodDirective) + std::to_string(period) + "\n");
    for (const ThreadStacks& t : walk.threads) {
      for (const std::string& stack : t.order) {
        if (status != RT_STATUS_OK) break;
        const int64_t self = t.self.at(stack);
        const int64_t count = self / period + (self % period * 2 >= period ? 1 : 0);
        if (count > 0) status = out.add(stack + " " + std::to_string(count) + "\n");
      }
    }
    if (status == RT_STATUS_OK) status = out.flush();
    if (status != RT_STATUS_OK) return rt_error_set(error, status, "the host could not take the folded stacks");
    return RT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return rt_error_set(error, RT_STATUS_OUT_OF_MEMORY, "out of memory while writing folded stacks");
  } catch (const std::exception& e) {
    return rt_error_set(error, RT_STATUS_ERROR, e.what());
  }
}

}  // namespace folded
