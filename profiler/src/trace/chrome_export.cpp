#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "rt/op_origin.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/nesting.h"
#include "trace/json_writer.h"
#include "trace/shape_text.h"
#include "trace/trace_names.h"

namespace rt::prof {
namespace {

using trace::JsonWriter;

constexpr uint32_t kGpuSliceFlag = 0x80000000u;
constexpr uint64_t kProgressEvery = 1u << 18;

class ChromeExporter {
 public:
  ChromeExporter(const SessionData& s, JsonWriter& w, const TraceProgressFn& progress)
      : s_(s), w_(w), progress_(progress) {}

  ChromeExportStats run() {
    plan();
    find_plugin_ops();
    w_.raw("{\"traceEvents\":[");
    write_track_names();
    write_cpu_slices();
    write_steps();
    write_collectives();
    write_gpu_slices();
    write_flows();
    write_memory();
    write_counters();
    w_.raw("\n],");
    write_trailer();
    w_.raw("}\n");
    w_.flush();
    if (progress_) progress_({"export", events_, events_});
    return {events_, w_.bytes_written(), clamped_};
  }

 private:
  // ---- layout ------------------------------------------------------------------------------
  void plan() {
    total_estimate_ = s_.ops.size() + s_.gpu.size() * 2 + s_.memory.size() * 2 + s_.counters.size() + s_.steps.size() +
                      s_.collectives.size();
    base_ = s_.start_ns;
    for (const auto& op : s_.ops) base_ = std::min(base_, op.start_ns);
    for (const auto& g : s_.gpu) base_ = std::min(base_, g.start_ns);
    for (const auto& m : s_.memory) base_ = std::min(base_, m.time_ns);
    for (const auto& c : s_.counters) base_ = std::min(base_, c.time_ns);
    for (const auto& st : s_.steps) base_ = std::min(base_, st.start_ns);
    for (const auto& c : s_.collectives) base_ = std::min(base_, c.enqueue_ns);

    for (const auto& t : s_.threads) add_thread(t.thread, t.os_tid, t.name);
    std::set<uint64_t> unnamed;
    auto note = [&](uint64_t thread) { if (!tid_of_.count(thread)) unnamed.insert(thread); };
    for (const auto& op : s_.ops) note(op.thread);
    for (const auto& g : s_.gpu) if (is_cpu_side(g.kind)) note(g.thread);
    for (const auto& m : s_.memory) note(m.thread);
    for (const auto& c : s_.collectives) note(c.thread);
    for (uint64_t t : unnamed) add_thread(t, 0, 0);
    steps_tid_ = 1;
    for (const auto& t : cpu_threads_) steps_tid_ = std::max(steps_tid_, t.tid + 1);
    collective_lanes_ = pack_collective_lanes(s_.collectives);
    for (uint32_t lane : collective_lanes_) lane_count_ = std::max(lane_count_, lane + 1);

    for (const auto& g : s_.gpu) if (!is_cpu_side(g.kind)) streams_[g.device].insert(g.stream);
    for (const auto& m : s_.memory) if (m.device >= 0) streams_[m.device];
    cpu_pid_ = int64_t(::getpid());
    if (auto it = s_.metadata.find("pid"); it != s_.metadata.end()) {
      try { cpu_pid_ = std::stoll(it->second); } catch (const std::exception&) {}
    }
    if (streams_.count(int32_t(cpu_pid_))) cpu_pid_ += int64_t(1) << 20;
  }

  // Ops a plugin registered (rt/op_origin.h) get their plugin id as the "plugin" argument.
  void find_plugin_ops() {
    const auto origins = rt::op_origins();
    if (origins.empty()) return;
    const std::unordered_map<std::string_view, std::string_view> by_name(origins.begin(), origins.end());
    plugin_of_.assign(s_.strings.size(), std::string());
    for (size_t id = 0; id < s_.strings.size(); ++id)
      if (auto it = by_name.find(s_.strings.at(StringId(id))); it != by_name.end()) plugin_of_[id] = it->second;
  }
  const std::string* plugin_of(StringId name) const {
    return name < plugin_of_.size() && !plugin_of_[name].empty() ? &plugin_of_[name] : nullptr;
  }

  static bool is_cpu_side(GpuActivityKind k) { return k == GpuActivityKind::Runtime || k == GpuActivityKind::Driver; }

  void add_thread(uint64_t thread, uint32_t os_tid, StringId name) {
    if (tid_of_.count(thread)) return;
    const int64_t tid = os_tid ? int64_t(os_tid) : int64_t(thread);
    tid_of_[thread] = tid;
    cpu_threads_.push_back({thread, tid, name});
  }

  int64_t tid(uint64_t thread) const { return tid_of_.at(thread); }
  const std::string& str(StringId id) const { return s_.strings.at(id); }

  // ---- event framing -----------------------------------------------------------------------
  void open(char ph, std::string_view cat, std::string_view name, int64_t pid) { open_head(ph, cat); w_.string(name); open_tail(pid); }
  void open(char ph, std::string_view cat, StringId name, int64_t pid) { open_head(ph, cat); w_.raw(escaped(name)); open_tail(pid); }
  void open_head(char ph, std::string_view cat) {
    if (events_ > 0) w_.ch(',');
    w_.raw("\n{\"ph\":\"");
    w_.ch(ph);
    w_.raw("\",\"cat\":");
    w_.string(cat);
    w_.raw(",\"name\":");
  }
  void open_tail(int64_t pid) {
    w_.raw(",\"pid\":");
    w_.integer(pid);
    if (++events_ % kProgressEvery == 0 && progress_) progress_({"export", events_, total_estimate_});
  }
  void tid_field(int64_t tid) { w_.raw(",\"tid\":"); w_.integer(tid); }
  void ts_field(int64_t ns) { w_.raw(",\"ts\":"); w_.micros(ns - base_); }
  void dur_field(int64_t start, int64_t end) { w_.raw(",\"dur\":"); w_.micros(end - start); }
  void close() { w_.ch('}'); w_.maybe_flush(); }

  // Arguments are written as ,"args":{...}; `arg_sep` keeps track of the comma.
  void args_open() { w_.raw(",\"args\":{"); first_arg_ = true; }
  void key(std::string_view k) {
    if (!first_arg_) w_.ch(',');
    first_arg_ = false;
    w_.string(k);
    w_.ch(':');
  }
  void arg_int(std::string_view k, int64_t v) { key(k); w_.integer(v); }
  void arg_uint(std::string_view k, uint64_t v) { key(k); w_.unsigned_integer(v); }
  void arg_str(std::string_view k, std::string_view v) { key(k); w_.string(v); }
  void args_close() { w_.ch('}'); }
  void dims_arg(std::string_view k, const int32_t (&dims)[3]) {
    key(k);
    for (int i = 0; i < 3; ++i) {
      w_.raw(i ? ", " : "[");
      w_.integer(dims[i]);
    }
    w_.ch(']');
  }
  // Interned strings are escaped once and reused: names repeat across millions of events.
  std::string_view escaped(StringId id) {
    if (escaped_.empty()) escaped_.resize(s_.strings.size());
    std::string& e = escaped_.at(id);
    if (e.empty()) {
      std::string out;
      auto sink = trace::string_sink(out);
      JsonWriter w(*sink);
      w.string(str(id));
      w.flush();
      e = std::move(out);
    }
    return e;
  }

  void metadata_event(std::string_view what, int64_t pid, int64_t tid, std::string_view name, int64_t sort_index) {
    open('M', "__metadata", what, pid);
    tid_field(tid);
    args_open();
    arg_str("name", name);
    args_close();
    close();
    std::string sort_what = std::string(what == "process_name" ? "process_sort_index" : "thread_sort_index");
    open('M', "__metadata", sort_what, pid);
    tid_field(tid);
    args_open();
    arg_int("sort_index", sort_index);
    args_close();
    close();
  }

  // ---- sections ----------------------------------------------------------------------------
  void write_track_names() {
    metadata_event("process_name", cpu_pid_, 0, s_.name.empty() ? std::string("rustytorch") : s_.name, 0);
    if (!s_.steps.empty()) metadata_event("thread_name", cpu_pid_, steps_tid_, trace::kStepsThreadName, 0);
    int64_t order = 1;
    for (const auto& t : cpu_threads_) {
      const std::string name = t.name ? str(t.name) : fmt::format("thread {}", t.tid);
      metadata_event("thread_name", cpu_pid_, t.tid, name, order++);
    }
    for (uint32_t lane = 0; lane < lane_count_; ++lane)
      metadata_event("thread_name", cpu_pid_, collective_tid(lane),
                     lane ? fmt::format("{} {}", trace::kCollectivesThreadName, lane + 1)
                          : std::string(trace::kCollectivesThreadName),
                     order++);
    for (const auto& [device, streams] : streams_) {
      metadata_event("process_name", device, 0, fmt::format("GPU {}", device), 100 + device);
      for (int32_t stream : streams)
        metadata_event("thread_name", device, stream, fmt::format("stream {}", stream), stream);
    }
  }

  void write_cpu_slices() {
    std::unordered_map<uint64_t, std::vector<NestedSlice>> per_thread;
    for (uint32_t i = 0; i < s_.ops.size(); ++i) per_thread[s_.ops[i].thread].push_back(slice_of(s_.ops[i], i));
    for (uint32_t i = 0; i < s_.gpu.size(); ++i) {
      const auto& g = s_.gpu[i];
      if (is_cpu_side(g.kind)) per_thread[g.thread].push_back(slice_of(g, i | kGpuSliceFlag));
    }
    for (const auto& t : cpu_threads_) {
      auto it = per_thread.find(t.thread);
      if (it == per_thread.end()) continue;
      auto& slices = it->second;
      clamped_ += nest_slices(slices).clamped;  // Note [Nesting clamp]
      for (const auto& sl : slices) {
        if (sl.index & kGpuSliceFlag) write_gpu_slice(s_.gpu[sl.index & ~kGpuSliceFlag], cpu_pid_, t.tid, sl.end);
        else write_op(s_.ops[sl.index], t.tid, sl.end);
      }
    }
  }

  void write_op(const OpRecord& op, int64_t tid, int64_t end) {
    const std::string_view cat = op.kind == OpKind::Op             ? trace::kCatOp
                                 : op.kind == OpKind::BackwardNode ? trace::kCatBackward
                                                                   : trace::kCatUserRange;
    open('X', cat, op.name, cpu_pid_);
    tid_field(tid);
    ts_field(op.start_ns);
    dur_field(op.start_ns, end);
    args_open();
    if (op.input_shapes) {
      const std::string& dims = str(op.input_shapes);
      key("Input Dims");
      if (trace::is_shape_list(dims)) w_.raw(dims);
      else w_.string(dims);
    }
    if (op.input_dtypes) {
      const std::string& types = str(op.input_dtypes);
      key("Input type");
      if (trace::split_type_list(types, type_items_)) {
        w_.ch('[');
        for (size_t i = 0; i < type_items_.size(); ++i) {
          if (i) w_.raw(", ");
          w_.string(type_items_[i]);
        }
        w_.ch(']');
      } else {
        w_.string(types);
      }
    }
    if (op.module) { key("module"); w_.raw(escaped(op.module)); }
    if (const std::string* plugin = plugin_of(op.name)) arg_str("plugin", *plugin);
    if (op.sequence_nr >= 0) arg_int("Sequence number", op.sequence_nr);
    if (op.correlation_id) arg_uint("External id", op.correlation_id);
    args_close();
    close();
  }

  void write_gpu_slice(const GpuActivityRecord& g, int64_t pid, int64_t tid, int64_t end) {
    open('X', trace::gpu_category(g.kind), g.name, pid);
    tid_field(tid);
    ts_field(g.start_ns);
    dur_field(g.start_ns, end);
    args_open();
    if (!is_cpu_side(g.kind)) {
      arg_int("device", g.device);
      arg_int("stream", g.stream);
    }
    if (g.correlation_id) arg_uint("correlation", g.correlation_id);
    if (g.external_id) arg_uint("External id", g.external_id);
    if (g.kind == GpuActivityKind::Kernel) {
      dims_arg("grid", g.grid);
      dims_arg("block", g.block);
      arg_int("registers per thread", g.registers);
      arg_int("shared memory", g.shared_memory);
    }
    if (g.kind == GpuActivityKind::Memcpy || g.kind == GpuActivityKind::Memset) arg_uint("bytes", g.bytes);
    if (g.kind == GpuActivityKind::Memcpy) arg_int("copy kind", g.copy_kind);
    args_close();
    close();
  }

  void write_steps() {
    std::vector<NestedSlice> slices;
    for (uint32_t i = 0; i < s_.steps.size(); ++i) slices.push_back(slice_of(s_.steps[i], i));
    clamped_ += nest_slices(slices).clamped;
    for (const auto& sl : slices) {
      const auto& st = s_.steps[sl.index];
      open('X', trace::kCatUserRange, fmt::format("{}{}", trace::kStepPrefix, st.step), cpu_pid_);
      tid_field(steps_tid_);
      ts_field(st.start_ns);
      dur_field(st.start_ns, sl.end);
      close();
    }
  }

  int64_t collective_tid(uint32_t lane) const { return steps_tid_ + 1 + int64_t(lane); }

  // Each collective from its start to its end on its lane's thread (Note [Collective lanes]).
  void write_collectives() {
    for (uint32_t i = 0; i < s_.collectives.size(); ++i) {
      const CollectiveRecord& c = s_.collectives[i];
      open('X', trace::kCatCollective, c.name, cpu_pid_);
      tid_field(collective_tid(collective_lanes_[i]));
      ts_field(c.start_ns);
      dur_field(c.start_ns, std::max(c.end_ns, c.start_ns));
      args_open();
      key("Collective name");
      w_.raw(escaped(c.name));
      key("Process Group Name");
      w_.raw(escaped(c.group));
      arg_uint("seq", c.seq);
      key("shape");
      w_.raw(escaped(c.shape));
      key("dtype");
      w_.raw(escaped(c.dtype));
      arg_int("In msg nelems", c.numel);
      arg_int("bytes", c.bytes);
      if (c.peer >= 0) arg_int("peer", c.peer);
      arg_int("point to point", c.point_to_point ? 1 : 0);
      if (c.call_site) { key("call site"); w_.raw(escaped(c.call_site)); }
      arg_int("queued ns", c.start_ns - c.enqueue_ns);
      arg_int("issuing tid", tid(c.thread));
      args_close();
      close();
    }
  }

  void write_gpu_slices() {
    std::map<std::pair<int32_t, int32_t>, std::vector<NestedSlice>> per_stream;
    for (uint32_t i = 0; i < s_.gpu.size(); ++i) {
      const auto& g = s_.gpu[i];
      if (!is_cpu_side(g.kind)) per_stream[{g.device, g.stream}].push_back(slice_of(g, i));
    }
    for (auto& [track, slices] : per_stream) {
      clamped_ += nest_slices(slices).clamped;
      for (const auto& sl : slices) write_gpu_slice(s_.gpu[sl.index], track.first, track.second, sl.end);
    }
  }

  void flow(std::string_view cat, uint64_t id, int64_t from_pid, int64_t from_tid, int64_t from_ts, int64_t to_pid,
            int64_t to_tid, int64_t to_ts) {
    open('s', cat, cat, from_pid);
    tid_field(from_tid);
    ts_field(from_ts);
    w_.raw(",\"id\":");
    w_.unsigned_integer(id);
    close();
    open('f', cat, cat, to_pid);
    tid_field(to_tid);
    ts_field(to_ts);
    w_.raw(",\"id\":");
    w_.unsigned_integer(id);
    w_.raw(",\"bp\":\"e\"");
    close();
  }

  void write_flows() {
    std::unordered_map<uint64_t, uint32_t> launch_by_correlation;
    for (uint32_t i = 0; i < s_.gpu.size(); ++i)
      if (is_cpu_side(s_.gpu[i].kind) && s_.gpu[i].correlation_id)
        launch_by_correlation.emplace(s_.gpu[i].correlation_id, i);
    std::unordered_map<uint64_t, uint32_t> op_by_external;
    for (uint32_t i = 0; i < s_.ops.size(); ++i)
      if (s_.ops[i].correlation_id) {
        auto [it, fresh] = op_by_external.emplace(s_.ops[i].correlation_id, i);
        if (!fresh && s_.ops[i].start_ns < s_.ops[it->second].start_ns) it->second = i;
      }
    std::set<uint64_t> used;
    for (const auto& g : s_.gpu) {
      if (is_cpu_side(g.kind)) continue;
      const uint64_t id = g.correlation_id ? g.correlation_id : g.external_id;
      if (!id || used.count(id)) continue;
      if (auto it = launch_by_correlation.find(g.correlation_id); g.correlation_id && it != launch_by_correlation.end()) {
        const auto& launch = s_.gpu[it->second];
        flow(trace::kCatCpuToGpu, id, cpu_pid_, tid(launch.thread), launch.start_ns, g.device, g.stream, g.start_ns);
      } else if (auto op = op_by_external.find(g.external_id); g.external_id && op != op_by_external.end()) {
        const auto& src = s_.ops[op->second];
        flow(trace::kCatCpuToGpu, id, cpu_pid_, tid(src.thread), src.start_ns, g.device, g.stream, g.start_ns);
      } else {
        continue;
      }
      used.insert(id);
    }
    std::map<int64_t, std::pair<int64_t, int64_t>> forward_backward;  // seq -> (op index, node index)
    for (int64_t i = 0; i < int64_t(s_.ops.size()); ++i) {
      const auto& op = s_.ops[size_t(i)];
      if (op.sequence_nr < 0 || op.kind == OpKind::UserRange) continue;
      auto& [fwd, bwd] = forward_backward.try_emplace(op.sequence_nr, -1, -1).first->second;
      int64_t& slot = op.kind == OpKind::Op ? fwd : bwd;
      if (slot < 0 || op.start_ns < s_.ops[size_t(slot)].start_ns) slot = i;
    }
    for (const auto& [seq, pair] : forward_backward) {
      if (pair.first < 0 || pair.second < 0) continue;
      const auto& f = s_.ops[size_t(pair.first)];
      const auto& b = s_.ops[size_t(pair.second)];
      flow(trace::kCatForwardBackward, uint64_t(seq), cpu_pid_, tid(f.thread), f.start_ns, cpu_pid_, tid(b.thread),
           b.start_ns);
    }
  }

  void write_memory() {
    std::map<int32_t, std::array<int64_t, trace::kMemoryCategoryCount>> per_category;
    for (const auto& m : s_.memory) {
      open('i', trace::kCatMemoryEvent, trace::kMemoryEventName, cpu_pid_);
      tid_field(tid(m.thread));
      ts_field(m.time_ns);
      w_.raw(",\"s\":\"t\"");
      args_open();
      arg_int("Device Type", m.device < 0 ? 0 : 1);
      arg_int("Device Id", m.device);
      arg_uint("Addr", m.address);
      arg_int("Bytes", m.bytes);
      arg_int("Total Allocated", m.total_allocated);
      arg_str("Category", trace::memory_category_name(m.category));
      if (m.op) { key("Op"); w_.raw(escaped(m.op)); }
      args_close();
      close();

      auto& totals = per_category.try_emplace(m.device).first->second;
      totals[size_t(m.category)] += m.bytes;
      open('C', trace::kCatMemoryCounter, trace::memory_counter_name(m.device), m.device < 0 ? cpu_pid_ : m.device);
      ts_field(m.time_ns);
      args_open();
      arg_int("total", m.total_allocated);
      for (size_t c = 0; c < trace::kMemoryCategoryCount; ++c)
        arg_int(trace::memory_category_name(MemoryCategoryId(c)), totals[c]);
      args_close();
      close();
    }
  }

  void write_counters() {
    for (const auto& c : s_.counters) {
      const std::string& name = str(c.name);
      if (std::isfinite(c.value)) {
        open('C', trace::kCatCounter, name, cpu_pid_);
        ts_field(c.time_ns);
        args_open();
        key(name);
        w_.number(c.value);
        args_close();
      } else {
        open('i', trace::kCatNonFiniteCounter, name, cpu_pid_);
        tid_field(steps_tid_);
        ts_field(c.time_ns);
        w_.raw(",\"s\":\"p\"");
        args_open();
        arg_str("value", std::isnan(c.value) ? "nan" : c.value > 0 ? "inf" : "-inf");
        args_close();
      }
      close();
    }
  }

  void write_trailer() {
    w_.raw("\n\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":");
    w_.integer(base_ + s_.clock_offset_ns);
    w_.raw(",\"traceName\":");
    w_.string(s_.name);
    w_.raw(",\"rtSession\":{\"complete\":");
    w_.raw(s_.complete ? "true" : "false");
    w_.raw(",\"dropped_records\":");
    w_.unsigned_integer(s_.dropped_records);
    w_.raw(",\"start_ns\":");
    w_.integer(s_.start_ns - base_);
    w_.raw(",\"end_ns\":");
    w_.integer(s_.end_ns - base_);
    w_.raw("},\"metadata\":{");
    std::map<std::string, std::string> sorted(s_.metadata.begin(), s_.metadata.end());
    sorted["pid"] = std::to_string(cpu_pid_);
    bool first = true;
    for (const auto& [k, v] : sorted) {
      if (!first) w_.ch(',');
      first = false;
      w_.string(k);
      w_.ch(':');
      w_.string(v);
    }
    w_.ch('}');
    write_gradient_histograms();
  }

  // Note [Gradient histograms in traces]: the Trace Event format has no histogram, so they travel as a
  // top-level "rtGradientHistograms" array beside "metadata" (viewers ignore unknown top-level keys) and the
  // import reads them back. Times are ns from baseTimeNanoseconds, like rtSession's; a non-finite norm is the
  // string "nan" or "inf" (JSON has no NaN).
  void write_gradient_histograms() {
    if (s_.gradient_histograms.empty()) return;
    w_.raw(",\n\"rtGradientHistograms\":[");
    bool first = true;
    for (const GradientHistogramRecord& h : s_.gradient_histograms) {
      w_.raw(first ? "\n{\"name\":" : ",\n{\"name\":");
      first = false;
      w_.string(s_.strings.at(h.name));
      w_.raw(",\"step\":");
      w_.integer(h.step);
      w_.raw(",\"time_ns\":");
      w_.integer(h.time_ns - base_);
      w_.raw(",\"numel\":");
      w_.integer(h.numel);
      w_.raw(",\"norm\":");
      if (std::isfinite(h.norm)) w_.number(h.norm);
      else w_.string(std::isnan(h.norm) ? "nan" : h.norm > 0 ? "inf" : "-inf");
      w_.raw(",\"lo\":");
      w_.number(h.lo);
      w_.raw(",\"hi\":");
      w_.number(h.hi);
      w_.raw(",\"nan_count\":");
      w_.integer(h.nan_count);
      w_.raw(",\"inf_count\":");
      w_.integer(h.inf_count);
      w_.raw(",\"counts\":[");
      for (size_t i = 0; i < h.counts.size(); ++i) {
        if (i) w_.ch(',');
        w_.integer(h.counts[i]);
      }
      w_.raw("]}");
      w_.maybe_flush();
    }
    w_.ch(']');
  }

  struct CpuThread {
    uint64_t thread;
    int64_t tid;
    StringId name;
  };

  const SessionData& s_;
  JsonWriter& w_;
  const TraceProgressFn& progress_;
  uint64_t events_ = 0, clamped_ = 0, total_estimate_ = 0;
  int64_t base_ = 0, cpu_pid_ = 0, steps_tid_ = 1;
  std::vector<uint32_t> collective_lanes_;  // by CollectiveRecord index
  uint32_t lane_count_ = 0;
  bool first_arg_ = true;
  std::vector<CpuThread> cpu_threads_;
  std::unordered_map<uint64_t, int64_t> tid_of_;
  std::map<int32_t, std::set<int32_t>> streams_;
  std::vector<std::string_view> type_items_;
  std::vector<std::string> escaped_;
  std::vector<std::string> plugin_of_;  // by StringId: the plugin id of an op name a plugin registered
};

}  // namespace

ChromeExportStats export_chrome_trace(const SessionData& session, const std::filesystem::path& path,
                                      const ChromeExportOptions& options) {
  auto sink = trace::open_file_sink(path, options.gzip_level);
  JsonWriter writer(*sink);
  const auto stats = ChromeExporter(session, writer, options.progress).run();
  sink->close();
  return stats;
}

std::string chrome_trace_json(const SessionData& session, ChromeExportStats* stats) {
  std::string out;
  auto sink = trace::string_sink(out);
  JsonWriter writer(*sink);
  const TraceProgressFn none;
  const auto result = ChromeExporter(session, writer, none).run();
  if (stats) *stats = result;
  return out;
}

}  // namespace rt::prof
