#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>
#include <unordered_map>

#include <fmt/format.h>

#include "rt/prof/chrome_trace.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/nesting.h"
#include "trace/event_parser.h"
#include "trace/event_stream.h"
#include "trace/trace_names.h"

namespace rt::prof {
namespace {

using trace::ParsedEvent;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<GpuActivityKind> gpu_kind(std::string_view cat) {
  for (auto k : {GpuActivityKind::Kernel, GpuActivityKind::Memcpy, GpuActivityKind::Memset,
                 GpuActivityKind::Synchronization, GpuActivityKind::Runtime, GpuActivityKind::Driver})
    if (cat == trace::gpu_category(k)) return k;
  return std::nullopt;
}

MemoryCategoryId memory_category(std::string_view name) {
  for (size_t c = 0; c < trace::kMemoryCategoryCount; ++c)
    if (name == trace::memory_category_name(MemoryCategoryId(c))) return MemoryCategoryId(c);
  return MemoryCategoryId::Other;
}

class SessionBuilder {
 public:
  explicit SessionBuilder(std::string default_name) : default_name_(std::move(default_name)) {}

  void add(const ParsedEvent& e, uint64_t offset, trace::EventParser& parser) {
    ++report_.events;
    const char ph = e.ph.size() == 1 ? e.ph[0] : '?';
    if (ph != 'M' && ph != '?' && !e.has_ts) parser.fail(fmt::format("the \"{}\" event has no \"ts\"", e.ph));
    if (e.has_ts) { min_ts_ = std::min(min_ts_, e.ts_ns); max_ts_ = std::max(max_ts_, e.ts_ns + std::max<int64_t>(e.dur_ns, 0)); }
    switch (ph) {
      case 'X':
        if (!e.has_dur) ++report_.missing_dur;
        complete(e, e.ts_ns, e.ts_ns + (e.has_dur ? e.dur_ns : 0));
        break;
      case 'B': {
        Track& t = track(e);
        t.open.push_back(Pending{std::string(e.name), std::string(e.cat), e.ts_ns});
        break;
      }
      case 'E': {
        Track& t = track(e);
        if (t.open.empty()) { ++report_.unmatched_end; break; }
        Pending p = std::move(t.open.back());
        t.open.pop_back();
        ParsedEvent opened;
        opened.name = p.name;
        opened.cat = p.cat;
        opened.pid = e.pid, opened.tid = e.tid, opened.pid_numeric = e.pid_numeric, opened.tid_numeric = e.tid_numeric;
        complete(opened, p.start, e.ts_ns);
        break;
      }
      case 'i': case 'I': instant(e); break;
      case 'C': counter(e); break;
      case 'M': metadata(e); break;
      case 's': case 't': case 'f': break;  // links are rebuilt from correlation and sequence ids
      default: ++report_.skipped;
    }
    (void)offset;
  }

  void top_level(std::string_view key, const trace::EventText& text, trace::EventParser& parser) {
    using simdjson::ondemand::json_type;
    parser.parse_value(text, [&](simdjson::ondemand::document& v) {
      if (key == "displayTimeUnit") return;
      if (key == "baseTimeNanoseconds") { parser.check(v.get_int64().get(base_time_), key); has_base_time_ = true; return; }
      if (key == "traceName") { std::string_view s; parser.check(v.get_string().get(s), key); trace_name_ = std::string(s); return; }
      if (key == "rtSession") {
        simdjson::ondemand::object obj;
        parser.check(v.get_object().get(obj), key);
        for (auto field : obj) {
          std::string_view k;
          parser.check(field.unescaped_key().get(k), key);
          if (k == "complete") { bool b = false; parser.check(field.value().get_bool().get(b), k); complete_ = b; }
          else if (k == "dropped_records") parser.check(field.value().get_uint64().get(dropped_), k);
          else if (k == "start_ns") { int64_t t = 0; parser.check(field.value().get_int64().get(t), k); start_ = t; }
          else if (k == "end_ns") { int64_t t = 0; parser.check(field.value().get_int64().get(t), k); end_ = t; }
        }
        return;
      }
      if (key == "rtGradientHistograms") {
        gradient_histograms(v, parser);
        return;
      }
      if (key == "metadata") {
        simdjson::ondemand::object obj;
        parser.check(v.get_object().get(obj), key);
        for (auto field : obj) {
          std::string_view k, s;
          parser.check(field.unescaped_key().get(k), key);
          simdjson::ondemand::value item;
          parser.check(field.value().get(item), k);
          metadata_[std::string(k)] = value_text(item, k, parser);
        }
        return;
      }
      metadata_[std::string(key)] = value_text(v, key, parser);
    });
  }

  ChromeImport finish() {
    for (auto& t : tracks_)
      for (auto& p : t.open) {
        ++report_.unclosed_begin;
        ParsedEvent opened;
        opened.name = p.name;
        opened.cat = p.cat;
        complete_on(t, opened, p.start, std::max(max_ts_, p.start));
      }
    SessionData& s = out_.session;
    std::unordered_map<uint64_t, std::vector<NestedSlice>> per_thread;
    for (uint32_t i = 0; i < s.ops.size(); ++i) per_thread[s.ops[i].thread].push_back(slice_of(s.ops[i], i));
    for (auto& [thread, slices] : per_thread) {
      report_.clamped_slices += nest_slices(slices).clamped;  // Note [Nesting clamp]
      for (const auto& sl : slices) { s.ops[sl.index].end_ns = sl.end; s.ops[sl.index].depth = sl.depth; }
    }
    std::stable_sort(s.ops.begin(), s.ops.end(), [](const OpRecord& a, const OpRecord& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth;
    });
    std::stable_sort(s.gpu.begin(), s.gpu.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(s.collectives.begin(), s.collectives.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(s.memory.begin(), s.memory.end(), [](auto& a, auto& b) { return a.time_ns < b.time_ns; });
    std::stable_sort(s.counters.begin(), s.counters.end(), [](auto& a, auto& b) { return a.time_ns < b.time_ns; });
    std::stable_sort(s.steps.begin(), s.steps.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(s.gradient_histograms.begin(), s.gradient_histograms.end(),
                     [](auto& a, auto& b) { return a.time_ns < b.time_ns; });
    for (const auto& t : tracks_)
      if (t.cpu_used) s.threads.push_back({t.thread, t.os_tid, s.strings.intern(t.name)});

    const bool any = min_ts_ <= max_ts_;
    s.name = trace_name_ ? *trace_name_ : default_name_;
    s.clock_offset_ns = has_base_time_ ? base_time_ : 0;
    s.start_ns = start_ ? *start_ : any ? min_ts_ : 0;
    s.end_ns = end_ ? *end_ : any ? max_ts_ : s.start_ns;
    s.complete = complete_;
    s.dropped_records = dropped_;
    s.metadata = std::move(metadata_);
    if (!s.metadata.count("pid") && !cpu_pid_.empty()) s.metadata["pid"] = cpu_pid_;
    out_.report = report_;
    return std::move(out_);
  }

 private:
  struct Pending {
    std::string name, cat;
    int64_t start;
  };
  struct Track {
    std::string pid, tid, name;
    uint64_t thread = 0;
    uint32_t os_tid = 0;
    int64_t tid_number = 0;
    bool tid_numeric = false, cpu_used = false;
    std::vector<Pending> open;
  };

  template <class Value>  // an On Demand value or document
  static std::string value_text(Value& v, std::string_view key, trace::EventParser& parser) {
    using simdjson::ondemand::json_type;
    json_type type{};
    parser.check(v.type().get(type), key);
    std::string_view s;
    if (type == json_type::string) parser.check(v.get_string().get(s), key);
    else if (type == json_type::object) { simdjson::ondemand::object o; parser.check(v.get_object().get(o), key); parser.check(o.raw_json().get(s), key); }
    else if (type == json_type::array) { simdjson::ondemand::array a; parser.check(v.get_array().get(a), key); parser.check(a.raw_json().get(s), key); }
    else parser.check(simdjson::simdjson_result<std::string_view>(v.raw_json_token()).get(s), key);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
    return std::string(s);
  }

  Track& track(const ParsedEvent& e) {
    if (last_track_ != npos && tracks_[last_track_].pid == e.pid && tracks_[last_track_].tid == e.tid) return tracks_[last_track_];
    std::string key;
    key.reserve(e.pid.size() + e.tid.size() + 1);
    key.append(e.pid).push_back('\x1f');
    key.append(e.tid);
    auto [it, fresh] = track_index_.try_emplace(std::move(key), tracks_.size());
    if (fresh) {
      Track t;
      t.pid = e.pid;
      t.tid = e.tid;
      int64_t n = 0;
      t.tid_numeric = e.tid_numeric && std::from_chars(e.tid.data(), e.tid.data() + e.tid.size(), n).ec == std::errc();
      t.tid_number = n;
      if (t.tid_numeric && n >= 0 && !used_threads_.count(uint64_t(n))) t.thread = uint64_t(n);
      else t.thread = (uint64_t(1) << 32) + tracks_.size();
      used_threads_.insert(t.thread);
      if (t.tid_numeric && n > 0 && n <= std::numeric_limits<uint32_t>::max()) t.os_tid = uint32_t(n);
      t.name = fmt::format("thread {}", e.tid);
      tracks_.push_back(std::move(t));
    }
    last_track_ = it->second;
    return tracks_[it->second];
  }

  Track& cpu_track(const ParsedEvent& e) {
    Track& t = track(e);
    if (!t.cpu_used) {
      t.cpu_used = true;
      if (cpu_pid_.empty() && e.pid_numeric) cpu_pid_ = std::string(e.pid);
    }
    return t;
  }

  StringId intern(std::string_view s) { return s.empty() ? 0 : out_.session.strings.intern(s); }

  void complete(const ParsedEvent& e, int64_t start, int64_t end) {
    if (end < start) {
      ++report_.negative_dur;
      end = start;
    }
    if (e.cat == trace::kCatCpuToGpu || e.cat == "Trace" || e.cat == "gpu_user_annotation") { ++report_.skipped; return; }
    if (starts_with(e.name, trace::kStepPrefix)) {
      int64_t n = 0;
      const auto digits = e.name.substr(trace::kStepPrefix.size());
      const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec == std::errc() && p == digits.data() + digits.size()) {
        out_.session.steps.push_back({n, start, std::max(start, end)});
        return;
      }
    }
    if (e.cat == trace::kCatCollective) {
      collective(e, start, end);
      return;
    }
    if (auto kind = gpu_kind(e.cat)) {
      GpuActivityRecord g;
      g.start_ns = start;
      g.end_ns = std::max(start, end);
      g.kind = *kind;
      g.name = intern(e.name);
      g.correlation_id = e.correlation;
      g.external_id = e.external_id;
      g.bytes = e.bytes;
      std::copy(e.grid, e.grid + 3, g.grid);
      std::copy(e.block, e.block + 3, g.block);
      g.registers = int32_t(e.registers);
      g.shared_memory = int32_t(e.shared_memory);
      g.copy_kind = uint8_t(e.copy_kind);
      if (*kind == GpuActivityKind::Runtime || *kind == GpuActivityKind::Driver) {
        g.thread = cpu_track(e).thread;
      } else {
        int64_t pid = 0, tid = 0;
        if (e.pid_numeric) std::from_chars(e.pid.data(), e.pid.data() + e.pid.size(), pid);
        if (e.tid_numeric) std::from_chars(e.tid.data(), e.tid.data() + e.tid.size(), tid);
        g.device = int32_t(e.has_device ? e.device : pid);
        g.stream = int32_t(e.has_stream ? e.stream : tid);
      }
      out_.session.gpu.push_back(g);
      return;
    }
    complete_on(cpu_track(e), e, start, end);
  }

  // A collective on a lane thread (the lane is not kept: views pack them again, Note [Collective lanes]).
  void collective(const ParsedEvent& e, int64_t start, int64_t end) {
    CollectiveRecord c;
    c.start_ns = start;
    c.end_ns = std::max(start, end);
    const bool queued = e.queued_ns > 0 && start >= std::numeric_limits<int64_t>::min() + e.queued_ns;
    c.enqueue_ns = queued ? start - e.queued_ns : start;
    if (e.has_issuing_tid) {
      ParsedEvent issuer;
      const std::string tid_text = std::to_string(e.issuing_tid);
      issuer.pid = e.pid;
      issuer.pid_numeric = e.pid_numeric;
      issuer.tid = tid_text;
      issuer.tid_numeric = true;
      c.thread = cpu_track(issuer).thread;
    }
    c.name = intern(e.name);
    c.group = intern(e.group);
    c.shape = intern(e.shape);
    c.dtype = intern(e.dtype);
    c.call_site = intern(e.call_site);
    c.seq = e.seq;
    c.numel = e.numel;
    c.bytes = int64_t(std::min<uint64_t>(e.bytes, uint64_t(std::numeric_limits<int64_t>::max())));
    c.peer = e.peer >= 0 && e.peer <= std::numeric_limits<int32_t>::max() ? int32_t(e.peer) : -1;
    c.point_to_point = e.point_to_point != 0;
    out_.session.collectives.push_back(c);
  }

  void complete_on(Track& t, const ParsedEvent& e, int64_t start, int64_t end) {
    OpRecord op;
    op.start_ns = start;
    op.end_ns = std::max(start, end);
    op.thread = t.thread;
    op.name = intern(e.name);
    op.module = intern(e.module);
    op.input_shapes = intern(e.input_dims);
    op.input_dtypes = e.has_input_types ? intern(e.input_types) : 0;
    op.sequence_nr = e.sequence_nr;
    op.correlation_id = e.external_id;
    if (e.cat == trace::kCatBackward || starts_with(e.name, trace::kBackwardPrefix)) op.kind = OpKind::BackwardNode;
    else if (e.cat.empty() || e.cat == trace::kCatOp || e.cat == "operator" || e.cat == "Operator") op.kind = OpKind::Op;
    else op.kind = OpKind::UserRange;
    out_.session.ops.push_back(op);
  }

  void instant(const ParsedEvent& e) {
    if (e.name == trace::kMemoryEventName) {
      MemoryRecord m;
      m.time_ns = e.ts_ns;
      m.thread = cpu_track(e).thread;
      m.address = e.addr;
      m.bytes = e.mem_bytes;
      m.total_allocated = e.total_allocated;
      m.device = e.device_type == 0 ? -1 : int32_t(e.device_id);
      m.category = memory_category(e.category);
      m.op = intern(e.op);
      out_.session.memory.push_back(m);
      return;
    }
    if (e.cat == trace::kCatNonFiniteCounter) {
      const double inf = std::numeric_limits<double>::infinity();
      const double v = e.value_text == "inf" ? inf : e.value_text == "-inf" ? -inf : std::numeric_limits<double>::quiet_NaN();
      out_.session.counters.push_back({e.ts_ns, intern(e.name), v});
      return;
    }
    ++report_.skipped;
  }

  void counter(const ParsedEvent& e) {
    if (e.cat == trace::kCatMemoryCounter) return;  // derived from the "[memory]" events
    if (e.numbers.empty()) { ++report_.skipped; return; }
    for (const auto& [key, value] : e.numbers) {
      const bool plain = key == e.name || e.numbers.size() == 1;
      const StringId name = plain ? intern(e.name) : intern(fmt::format("{}.{}", e.name, key));
      out_.session.counters.push_back({e.ts_ns, name, value});
    }
  }

  // Note [Gradient histograms in traces] in chrome_export.cpp: the array the export writes, checked like the
  // store checks its rows (gradient_histogram_problem).
  void gradient_histograms(simdjson::ondemand::document& v, trace::EventParser& parser) {
    constexpr std::string_view key = "rtGradientHistograms";
    simdjson::ondemand::array rows;
    parser.check(v.get_array().get(rows), key);
    SessionData& s = out_.session;
    for (auto item : rows) {
      simdjson::ondemand::object obj;
      parser.check(item.get_object().get(obj), key);
      GradientHistogramRecord h;
      bool has_name = false;
      for (auto field : obj) {
        std::string_view k;
        parser.check(field.unescaped_key().get(k), key);
        simdjson::ondemand::value value;
        parser.check(field.value().get(value), k);
        if (k == "name") {
          std::string_view name;
          parser.check(value.get_string().get(name), k);
          h.name = s.strings.intern(name);
          has_name = true;
        } else if (k == "step") parser.check(value.get_int64().get(h.step), k);
        else if (k == "time_ns") parser.check(value.get_int64().get(h.time_ns), k);
        else if (k == "numel") parser.check(value.get_int64().get(h.numel), k);
        else if (k == "nan_count") parser.check(value.get_int64().get(h.nan_count), k);
        else if (k == "inf_count") parser.check(value.get_int64().get(h.inf_count), k);
        else if (k == "lo") parser.check(value.get_double().get(h.lo), k);
        else if (k == "hi") parser.check(value.get_double().get(h.hi), k);
        else if (k == "norm") h.norm = norm_value(value, parser);
        else if (k == "counts") {
          simdjson::ondemand::array counts;
          parser.check(value.get_array().get(counts), k);
          for (auto c : counts) {
            int64_t n = 0;
            parser.check(c.get_int64().get(n), k);
            if (h.counts.size() == size_t(kMaxGradientBins))
              parser.fail(fmt::format("a gradient histogram in \"{}\" has more than {} bins", key, kMaxGradientBins));
            h.counts.push_back(n);
          }
        }
      }
      if (!has_name) parser.fail(fmt::format("a gradient histogram in \"{}\" has no \"name\"", key));
      if (const std::string problem = gradient_histogram_problem(h); !problem.empty())
        parser.fail(fmt::format("the gradient histogram of '{}' in \"{}\" is inconsistent: {}", s.strings.at(h.name),
                                key, problem));
      s.gradient_histograms.push_back(std::move(h));
    }
  }

  static double norm_value(simdjson::ondemand::value& v, trace::EventParser& parser) {
    simdjson::ondemand::json_type type = simdjson::ondemand::json_type::null;
    parser.check(v.type().get(type), "norm");
    if (type == simdjson::ondemand::json_type::string) {
      std::string_view text;
      parser.check(v.get_string().get(text), "norm");
      if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (text == "inf") return std::numeric_limits<double>::infinity();
      if (text == "-inf") return -std::numeric_limits<double>::infinity();
      parser.fail(fmt::format("a gradient histogram's \"norm\" is \"{}\"; expected a number, \"nan\", \"inf\" or \"-inf\"", text));
    }
    double d = 0;
    parser.check(v.get_double().get(d), "norm");
    return d;
  }

  void metadata(const ParsedEvent& e) {
    if (e.name == "thread_name" && !e.arg_name.empty()) track(e).name = e.arg_name;
  }

  static constexpr size_t npos = size_t(-1);
  std::string default_name_;
  ChromeImport out_;
  ChromeImportReport report_;
  std::vector<Track> tracks_;
  std::unordered_map<std::string, size_t> track_index_;
  std::unordered_set<uint64_t> used_threads_;
  size_t last_track_ = npos;
  std::string cpu_pid_;
  std::optional<std::string> trace_name_;
  int64_t min_ts_ = std::numeric_limits<int64_t>::max(), max_ts_ = std::numeric_limits<int64_t>::min();
  int64_t base_time_ = 0;
  bool has_base_time_ = false, complete_ = true;
  uint64_t dropped_ = 0;
  std::optional<int64_t> start_, end_;
  std::unordered_map<std::string, std::string> metadata_;
};

ChromeImport import_from(trace::ByteSource& source, const std::string& name, std::string default_session_name,
                         const ChromeImportOptions& options) {
  trace::EventStream stream(source, name, options.chunk_bytes);
  trace::EventParser parser(name);
  SessionBuilder builder(std::move(default_session_name));
  ParsedEvent event;
  stream.run(
      [&](const trace::EventText& text) {
        parser.parse(text, event);
        builder.add(event, text.offset, parser);
      },
      [&](std::string_view key, const trace::EventText& value) { builder.top_level(key, value, parser); },
      [&] {
        if (options.progress) options.progress({"import", source.input_position(), source.input_size()});
      });
  return builder.finish();
}

}  // namespace

ChromeImport import_chrome_trace(const std::filesystem::path& path, const ChromeImportOptions& options) {
  auto source = trace::open_file_source(path);
  return import_from(*source, path.string(), path.stem().stem().string(), options);
}

ChromeImport import_chrome_trace_text(std::string_view json, std::string_view source_name,
                                      const ChromeImportOptions& options) {
  auto source = trace::memory_source(json);
  return import_from(*source, std::string(source_name), std::string(source_name), options);
}

}  // namespace rt::prof
