// TraceSessionSource: the RtTraceSource exporters read (contracts in rt/plugin_host/trace_plugins.h).
#include <unordered_map>

#include "rt/plugin_host/trace_plugins.h"
#include "rt/prof/nesting.h"

namespace rt::plugin {
namespace {

const char* source_metadata(void* context, const char* key) {
  try {
    return key ? static_cast<const TraceSessionSource*>(context)->metadata(key) : nullptr;
  } catch (...) {
    return nullptr;
  }
}

RtStatus source_for_each(void* context, RtTraceSliceVisitor visit, void* visitor_context) {
  try {
    return static_cast<const TraceSessionSource*>(context)->for_each(visit, visitor_context);
  } catch (...) {
    return RT_STATUS_OUT_OF_MEMORY;
  }
}

const char* category_of(rt::prof::OpKind kind) {
  switch (kind) {
    case rt::prof::OpKind::Op: return "op";
    case rt::prof::OpKind::BackwardNode: return "backward";
    case rt::prof::OpKind::UserRange: return "user";
  }
  return "user";
}

}  // namespace

TraceSessionSource::TraceSessionSource(const rt::prof::SessionData& session)
    : session_(session),
      source_{.struct_size = sizeof(RtTraceSource), .context = this, .metadata = source_metadata,
              .for_each_slice = source_for_each} {
  std::vector<uint64_t> threads;
  std::unordered_map<uint64_t, size_t> index;
  for (const rt::prof::ThreadRecord& t : session.threads)
    if (index.emplace(t.thread, threads.size()).second) threads.push_back(t.thread);
  for (const rt::prof::OpRecord& op : session.ops)
    if (index.emplace(op.thread, threads.size()).second) threads.push_back(op.thread);
  std::vector<std::vector<rt::prof::NestedSlice>> tracks(threads.size());
  for (uint32_t i = 0; i < session.ops.size(); ++i)
    tracks[index.at(session.ops[i].thread)].push_back(rt::prof::slice_of(session.ops[i], i));
  order_.reserve(session.ops.size());
  for (auto& track : tracks) {
    rt::prof::nest_slices(track);
    for (const rt::prof::NestedSlice& s : track) order_.push_back({s.index, s.end, s.depth});
  }
}

const char* TraceSessionSource::metadata(const char* key) const {
  const std::string k(key);
  if (auto it = session_.metadata.find(k); it != session_.metadata.end()) return it->second.c_str();
  if (k == "name") return session_.name.c_str();
  return nullptr;
}

RtStatus TraceSessionSource::for_each(RtTraceSliceVisitor visit, void* visitor_context) const {
  if (!visit) return RT_STATUS_INVALID_ARGUMENT;
  std::unordered_map<uint64_t, const char*> thread_names;
  for (const rt::prof::ThreadRecord& t : session_.threads)
    thread_names.emplace(t.thread, session_.strings.at(t.name).c_str());
  for (const Entry& e : order_) {
    const rt::prof::OpRecord& op = session_.ops[e.op];
    auto name = thread_names.find(op.thread);
    const RtTraceSlice slice = {.struct_size = sizeof(RtTraceSlice),
                                .thread = op.thread,
                                .thread_name = name == thread_names.end() ? "" : name->second,
                                .name = session_.strings.at(op.name).c_str(),
                                .category = category_of(op.kind),
                                .start_ns = op.start_ns,
                                .end_ns = e.end_ns,
                                .depth = e.depth};
    if (RtStatus s = visit(visitor_context, &slice); s != RT_STATUS_OK) return s;
  }
  return RT_STATUS_OK;
}

}  // namespace rt::plugin
