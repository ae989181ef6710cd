// TraceSessionBuilder: the RtTraceSink importers write into (contracts in rt/plugin_host/trace_plugins.h).
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "rt/plugin_host/trace_plugins.h"
#include "rt/prof/nesting.h"
#include "trace/utf8_text.h"

namespace rt::plugin {
namespace {

RtStatus sink_set_metadata(void* context, const char* key, const char* value) {
  try {
    return static_cast<TraceSessionBuilder*>(context)->set_metadata(key, value);
  } catch (...) {
    return RT_STATUS_OUT_OF_MEMORY;
  }
}

RtStatus sink_add_slice(void* context, const RtTraceSlice* slice) {
  try {
    return static_cast<TraceSessionBuilder*>(context)->add_slice(slice);
  } catch (...) {
    return RT_STATUS_OUT_OF_MEMORY;
  }
}

rt::prof::OpKind kind_of(std::string_view category) {
  if (category == "op") return rt::prof::OpKind::Op;
  if (category == "backward") return rt::prof::OpKind::BackwardNode;
  return rt::prof::OpKind::UserRange;
}

// Slice and metadata records as the wire counts them: fixed fields plus strings.
constexpr uint64_t kSliceOverhead = 48;

std::string shown(std::string_view s) {
  return s.size() <= 60 ? std::string(s) : std::string(s.substr(0, 57)) + "...";
}

}  // namespace

TraceSessionBuilder::TraceSessionBuilder(TraceLimits limits)
    : limits_(limits),
      sink_{.struct_size = sizeof(RtTraceSink), .context = this, .set_metadata = sink_set_metadata,
            .add_slice = sink_add_slice} {
  data_.complete = true;
}

RtStatus TraceSessionBuilder::refuse(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  return RT_STATUS_INVALID_ARGUMENT;
}

RtStatus TraceSessionBuilder::check_string(const char* s, const char* what, bool required, std::string_view& out) {
  if (!s) {
    if (required) return refuse(fmt::format("a slice's {} is NULL; every slice needs one", what));
    out = {};
    return RT_STATUS_OK;
  }
  const size_t n = strnlen(s, size_t(limits_.max_string_bytes) + 1);
  if (n > limits_.max_string_bytes)
    return refuse(fmt::format("a {} is longer than {} bytes (starts \"{}\")", what, limits_.max_string_bytes,
                              shown(std::string_view(s, std::min<size_t>(n, 60)))));
  out = std::string_view(s, n);
  if (required && out.empty()) return refuse(fmt::format("a slice's {} is empty; every slice needs one", what));
  if (!is_utf8(out)) return refuse(fmt::format("a {} is not UTF-8 (starts \"{}\")", what, shown(out)));
  return RT_STATUS_OK;
}

RtStatus TraceSessionBuilder::set_metadata(const char* key, const char* value) {
  if (failed()) return RT_STATUS_INVALID_ARGUMENT;
  std::string_view k, v;
  if (!key || !value) return refuse("set_metadata got a NULL key or value");
  if (RtStatus s = check_string(key, "metadata key", true, k); s != RT_STATUS_OK) return s;
  if (RtStatus s = check_string(value, "metadata value", false, v); s != RT_STATUS_OK) return s;
  auto it = data_.metadata.find(std::string(k));
  if (it == data_.metadata.end() && data_.metadata.size() >= limits_.max_metadata)
    return refuse(fmt::format("more than {} metadata entries", limits_.max_metadata));
  bytes_ += k.size() + v.size() + 16;
  if (bytes_ > limits_.max_bytes)
    return refuse(fmt::format("the trace is larger than the {} bytes an import may hold", limits_.max_bytes));
  data_.metadata[std::string(k)] = std::string(v);
  return RT_STATUS_OK;
}

RtStatus TraceSessionBuilder::add_slice(const RtTraceSlice* slice) {
  if (failed()) return RT_STATUS_INVALID_ARGUMENT;
  if (!slice) return refuse("add_slice got a NULL slice");
  if (!RT_ABI_HAS_FIELD(slice, end_ns))
    return refuse(fmt::format("a slice's struct_size is {}, too small for an RtTraceSlice (at least {})",
                              slice->struct_size, offsetof(RtTraceSlice, end_ns) + sizeof(slice->end_ns)));
  std::string_view name, thread_name, category;
  if (RtStatus s = check_string(slice->name, "name", true, name); s != RT_STATUS_OK) return s;
  if (RtStatus s = check_string(slice->thread_name, "thread name", false, thread_name); s != RT_STATUS_OK) return s;
  if (RtStatus s = check_string(slice->category, "category", false, category); s != RT_STATUS_OK) return s;
  if (slice->end_ns < slice->start_ns)
    return refuse(fmt::format("slice \"{}\" on thread {} ends before it starts ({} ns < {} ns)", shown(name),
                              slice->thread, slice->end_ns, slice->start_ns));
  if (data_.ops.size() >= limits_.max_slices)
    return refuse(fmt::format("more than {} slices; the limit keeps a hostile file from exhausting memory",
                              limits_.max_slices));
  bytes_ += kSliceOverhead + name.size() + thread_name.size() + category.size();
  if (bytes_ > limits_.max_bytes)
    return refuse(fmt::format("the trace is larger than the {} bytes an import may hold", limits_.max_bytes));

  auto [it, added] = thread_index_.emplace(slice->thread, data_.threads.size());
  if (added) {
    data_.threads.push_back({.thread = slice->thread, .os_tid = 0, .name = data_.strings.intern(thread_name)});
  } else if (!thread_name.empty()) {
    rt::prof::ThreadRecord& t = data_.threads[it->second];
    const std::string& known = data_.strings.at(t.name);
    if (known.empty()) t.name = data_.strings.intern(thread_name);
    else if (known != thread_name)
      return refuse(fmt::format("thread {} is named both \"{}\" and \"{}\"; a thread has one name", slice->thread,
                                shown(known), shown(thread_name)));
  }
  const int32_t rank = RT_ABI_HAS_FIELD(slice, depth) ? slice->depth : 0;
  data_.ops.push_back({.start_ns = slice->start_ns,
                       .end_ns = slice->end_ns,
                       .thread = slice->thread,
                       .name = data_.strings.intern(name),
                       .depth = rank,  // the importer's own depth: only a tie-break until finish()
                       .kind = kind_of(category)});
  return RT_STATUS_OK;
}

rt::prof::SessionData TraceSessionBuilder::finish() {
  if (failed()) throw TracePluginError(error_, TraceFailure::InvalidTrace);
  if (data_.ops.size() > std::numeric_limits<uint32_t>::max())
    throw TracePluginError("more slices than a session can index", TraceFailure::InvalidTrace);
  std::vector<std::vector<rt::prof::NestedSlice>> tracks(data_.threads.size());
  for (uint32_t i = 0; i < data_.ops.size(); ++i) {
    const rt::prof::OpRecord& op = data_.ops[i];
    tracks[thread_index_.at(op.thread)].push_back(
        {.start = op.start_ns, .end = op.end_ns, .index = i, .rank = op.depth});
  }
  std::vector<rt::prof::OpRecord> ops;
  ops.reserve(data_.ops.size());
  for (size_t t = 0; t < tracks.size(); ++t) {
    auto& track = tracks[t];
    std::sort(track.begin(), track.end(), rt::prof::nests_before);
    std::vector<const rt::prof::NestedSlice*> open;  // innermost last
    for (const rt::prof::NestedSlice& s : track) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back()->end) {
        const rt::prof::OpRecord& outer = data_.ops[open.back()->index];
        const rt::prof::OpRecord& inner = data_.ops[s.index];
        error_ = fmt::format(
            "slices on thread {} overlap without nesting: \"{}\" [{}, {}] ns starts inside \"{}\" [{}, {}] ns but "
            "ends after it; the slices of a thread must nest",
            data_.threads[t].thread, shown(data_.strings.at(inner.name)), inner.start_ns, inner.end_ns,
            shown(data_.strings.at(outer.name)), outer.start_ns, outer.end_ns);
        throw TracePluginError(error_, TraceFailure::InvalidTrace);
      }
      rt::prof::OpRecord op = data_.ops[s.index];
      op.depth = int32_t(open.size());
      ops.push_back(op);
      open.push_back(&s);
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const rt::prof::OpRecord& a, const rt::prof::OpRecord& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
  });
  data_.ops = std::move(ops);
  if (!data_.ops.empty()) {
    data_.start_ns = data_.ops.front().start_ns;
    data_.end_ns = data_.ops.front().end_ns;
    for (const rt::prof::OpRecord& op : data_.ops) data_.end_ns = std::max(data_.end_ns, op.end_ns);
  }
  thread_index_.clear();
  return std::move(data_);
}

}  // namespace rt::plugin
