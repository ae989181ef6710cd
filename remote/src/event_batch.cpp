#include "rt/remote/event_batch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "byte_io.h"
#include "rt/prof/gradient_histograms.h"

// See docs/remote-protocol.md, "EventBatch payload", for the layout this file writes and reads.

namespace rt::remote {
namespace prof = rt::prof;
namespace {

constexpr uint8_t kReset = 1, kGraphsChanged = 2, kReplacesOpenStep = 4;
constexpr uint32_t kMaxDims = 64;

// Smallest encoding of each record, for ByteReader::get_count.
constexpr size_t kThreadBytes = 8 + 4 + 4 + 4;
constexpr size_t kOpBytes = 8 + 8 + 8 + 4 * 4 + 8 + 8 + 4 + 1;
constexpr size_t kGpuBytes = 8 + 8 + 1 + 4 + 4 + 8 + 4 + 8 + 8 + 8 + 12 + 12 + 4 + 4 + 1;
constexpr size_t kCollectiveBytes = 8 * 3 + 8 + 4 * 5 + 8 + 8 + 8 + 4 + 1 + 4;
constexpr size_t kMemoryBytes = 8 + 8 + 8 + 8 + 8 + 4 + 1 + 4;
constexpr size_t kCounterBytes = 8 + 4 + 8;
constexpr size_t kStepBytes = 24;
constexpr size_t kStreamBytes = 12;
constexpr size_t kGradientHistogramBytes = 8 + 8 + 4 + 8 + 8 + 8 + 8 + 8 + 8 + 4;

void put_shape(ByteWriter& w, const Shape& s) {
  w.put(uint32_t(s.size()));
  for (int64_t d : s) w.put(d);
}

Shape get_shape(ByteReader& r, const char* field) {
  const uint32_t n = r.get<uint32_t>(field);
  if (n > kMaxDims) throw ProtocolError(fmt::format("remote protocol: event batch has a {} of {} dimensions "
                                                    "(at most {})", field, n, kMaxDims));
  Shape s(n);
  for (auto& d : s) d = r.get<int64_t>(field);
  return s;
}

template <typename E>
E get_enum(ByteReader& r, uint8_t last, const char* field) {
  const auto v = r.get<uint8_t>(field);
  if (v > last) throw ProtocolError(fmt::format("remote protocol: event batch has {} value {} (at most {})",
                                                field, v, last));
  return E(v);
}

void put_graph(ByteWriter& w, const prof::GraphRecord& g) {
  w.put(g.time_ns);
  w.put(g.step);
  w.put(g.backward_index);
  w.put(g.thread);
  w.put(uint32_t(g.graph.nodes.size()));
  for (const auto& n : g.graph.nodes) {
    w.put(n.id);
    w.put_string(n.name);
    w.put(n.sequence_nr);
    w.put_string(n.forward_op);
    w.put_string(n.module);
    w.put(uint32_t(n.output_shapes.size()));
    for (const auto& s : n.output_shapes) put_shape(w, s);
    w.put(uint8_t(n.is_leaf));
    put_shape(w, n.leaf_shape);
  }
  w.put(uint32_t(g.graph.edges.size()));
  for (const auto& e : g.graph.edges) {
    w.put(e.from);
    w.put(e.to);
    w.put(e.input_nr);
    put_shape(w, e.shape);
  }
}

prof::GraphRecord get_graph(ByteReader& r) {
  prof::GraphRecord g;
  g.time_ns = r.get<int64_t>("graph time");
  g.step = r.get<int64_t>("graph step");
  g.backward_index = r.get<uint64_t>("graph backward index");
  g.thread = r.get<uint64_t>("graph thread");
  const uint32_t nodes = r.get_count("graph nodes", 8 + 4 + 8 + 4 + 4 + 4 + 1 + 4);
  g.graph.nodes.resize(nodes);
  for (auto& n : g.graph.nodes) {
    n.id = r.get<uint64_t>("graph node id");
    n.name = r.get_string("graph node name");
    n.sequence_nr = r.get<uint64_t>("graph node sequence_nr");
    n.forward_op = r.get_string("graph node forward op");
    n.module = r.get_string("graph node module");
    const uint32_t shapes = r.get_count("graph node output shapes", 4);
    n.output_shapes.resize(shapes);
    for (auto& s : n.output_shapes) s = get_shape(r, "graph node output shape");
    n.is_leaf = r.get<uint8_t>("graph node is_leaf") != 0;
    n.leaf_shape = get_shape(r, "graph node leaf shape");
  }
  const uint32_t edges = r.get_count("graph edges", 8 + 8 + 4 + 4);
  g.graph.edges.resize(edges);
  for (auto& e : g.graph.edges) {
    e.from = r.get<uint64_t>("graph edge from");
    e.to = r.get<uint64_t>("graph edge to");
    e.input_nr = r.get<uint32_t>("graph edge input_nr");
    e.shape = get_shape(r, "graph edge shape");
  }
  return g;
}

// Every StringId of the records is below `strings`.
void check_string_ids(const prof::SessionData& d, size_t strings) {
  auto check = [&](prof::StringId id, const char* field) {
    if (id >= strings)
      throw ProtocolError(fmt::format("remote protocol: event batch has {} string id {}, but the session has {} "
                                      "strings", field, id, strings));
  };
  for (const auto& t : d.threads) check(t.name, "thread name");
  for (const auto& o : d.ops) {
    check(o.name, "op name");
    check(o.module, "op module");
    check(o.input_shapes, "op input shapes");
    check(o.input_dtypes, "op input dtypes");
  }
  for (const auto& g : d.gpu) check(g.name, "GPU activity name");
  for (const auto& c : d.collectives) {
    check(c.name, "collective name");
    check(c.group, "collective group");
    check(c.shape, "collective shape");
    check(c.dtype, "collective dtype");
    check(c.call_site, "collective call site");
  }
  for (const auto& m : d.memory) check(m.op, "memory op");
  for (const auto& c : d.counters) check(c.name, "counter name");
  for (const auto& s : d.streams) check(s.name, "stream name");
  for (const auto& h : d.gradient_histograms) check(h.name, "gradient histogram name");
}

}  // namespace

uint64_t record_count(const prof::SessionData& d) {
  return d.ops.size() + d.gpu.size() + d.collectives.size() + d.memory.size() + d.counters.size() +
         d.gradient_histograms.size();
}

std::string encode_event_batch(const EventBatch& batch) {
  const prof::SessionDelta& delta = batch.delta;
  const prof::SessionData& d = delta.records;
  ByteWriter w;
  w.reserve(64 + d.ops.size() * kOpBytes + d.memory.size() * kMemoryBytes + d.gpu.size() * kGpuBytes);
  w.put(uint8_t((delta.reset ? kReset : 0) | (delta.graphs_changed ? kGraphsChanged : 0) |
                (delta.replaces_open_step ? kReplacesOpenStep : 0)));
  w.put(batch.dropped_by_agent);
  w.put_string(d.name);
  w.put(d.clock_offset_ns);
  w.put(d.start_ns);
  w.put(d.end_ns);
  w.put(uint8_t(d.complete));
  w.put(d.dropped_records);
  std::vector<std::pair<std::string_view, std::string_view>> metadata(d.metadata.begin(), d.metadata.end());
  std::sort(metadata.begin(), metadata.end());  // one delta, one encoding
  w.put(uint32_t(metadata.size()));
  for (const auto& [k, v] : metadata) {
    w.put_string(k);
    w.put_string(v);
  }
  if (delta.reset) {
    w.put(uint32_t(0));
    w.put(uint32_t(d.strings.size()));
    for (const auto& s : d.strings.all()) w.put_string(s);
  } else {
    w.put(uint32_t(delta.first_new_string));
    w.put(uint32_t(delta.new_strings.size()));
    for (const auto& s : delta.new_strings) w.put_string(s);
  }
  w.put(uint32_t(d.threads.size()));
  for (const auto& t : d.threads) {
    w.put(t.thread);
    w.put(t.os_tid);
    w.put(uint32_t(t.name));
    w.put(t.rank);
  }
  w.put(uint32_t(d.ops.size()));
  for (const auto& o : d.ops) {
    w.put(o.start_ns);
    w.put(o.end_ns);
    w.put(o.thread);
    w.put(uint32_t(o.name));
    w.put(uint32_t(o.module));
    w.put(uint32_t(o.input_shapes));
    w.put(uint32_t(o.input_dtypes));
    w.put(o.sequence_nr);
    w.put(o.correlation_id);
    w.put(o.depth);
    w.put(uint8_t(o.kind));
  }
  w.put(uint32_t(d.gpu.size()));
  for (const auto& g : d.gpu) {
    w.put(g.start_ns);
    w.put(g.end_ns);
    w.put(uint8_t(g.kind));
    w.put(g.device);
    w.put(g.stream);
    w.put(g.thread);
    w.put(uint32_t(g.name));
    w.put(g.correlation_id);
    w.put(g.external_id);
    w.put(g.bytes);
    for (int32_t v : g.grid) w.put(v);
    for (int32_t v : g.block) w.put(v);
    w.put(g.registers);
    w.put(g.shared_memory);
    w.put(g.copy_kind);
  }
  w.put(uint32_t(d.collectives.size()));
  for (const auto& c : d.collectives) {
    w.put(c.enqueue_ns);
    w.put(c.start_ns);
    w.put(c.end_ns);
    w.put(c.thread);
    w.put(uint32_t(c.name));
    w.put(uint32_t(c.group));
    w.put(uint32_t(c.shape));
    w.put(uint32_t(c.dtype));
    w.put(uint32_t(c.call_site));
    w.put(c.seq);
    w.put(c.numel);
    w.put(c.bytes);
    w.put(c.peer);
    w.put(uint8_t(c.point_to_point));
    w.put(c.rank);
  }
  w.put(uint32_t(d.memory.size()));
  for (const auto& m : d.memory) {
    w.put(m.time_ns);
    w.put(m.thread);
    w.put(m.address);
    w.put(m.bytes);
    w.put(m.total_allocated);
    w.put(m.device);
    w.put(uint8_t(m.category));
    w.put(uint32_t(m.op));
  }
  w.put(uint32_t(d.counters.size()));
  for (const auto& c : d.counters) {
    w.put(c.time_ns);
    w.put(uint32_t(c.name));
    w.put(c.value);
  }
  w.put(uint32_t(d.steps.size()));
  for (const auto& s : d.steps) {
    w.put(s.step);
    w.put(s.start_ns);
    w.put(s.end_ns);
  }
  w.put(uint32_t(d.graphs.size()));
  for (const auto& g : d.graphs) put_graph(w, g);
  w.put(uint32_t(d.streams.size()));
  for (const auto& s : d.streams) {
    w.put(s.device);
    w.put(s.stream);
    w.put(uint32_t(s.name));
  }
  w.put(uint32_t(d.gradient_histograms.size()));
  for (const auto& h : d.gradient_histograms) {
    w.put(h.step);
    w.put(h.time_ns);
    w.put(uint32_t(h.name));
    w.put(h.numel);
    w.put(h.norm);
    w.put(h.lo);
    w.put(h.hi);
    w.put(h.nan_count);
    w.put(h.inf_count);
    w.put(uint32_t(h.counts.size()));
    for (int64_t c : h.counts) w.put(c);
  }
  return w.take();
}

EventBatch decode_event_batch(std::string_view payload, size_t known_strings) {
  ByteReader r(payload);
  EventBatch batch;
  prof::SessionDelta& delta = batch.delta;
  prof::SessionData& d = delta.records;
  const auto flags = r.get<uint8_t>("flags");
  if (flags & ~(kReset | kGraphsChanged | kReplacesOpenStep))
    throw ProtocolError(fmt::format("remote protocol: event batch has unknown flags {:#x}", flags));
  delta.reset = flags & kReset;
  delta.graphs_changed = flags & kGraphsChanged;
  delta.replaces_open_step = flags & kReplacesOpenStep;
  batch.dropped_by_agent = r.get<uint64_t>("dropped count");
  d.name = r.get_string("session name");
  d.clock_offset_ns = r.get<int64_t>("clock offset");
  d.start_ns = r.get<int64_t>("start");
  d.end_ns = r.get<int64_t>("end");
  d.complete = r.get<uint8_t>("complete") != 0;
  d.dropped_records = r.get<uint64_t>("dropped records");
  const uint32_t meta = r.get_count("metadata entries", 8);
  for (uint32_t i = 0; i < meta; ++i) {
    std::string k = r.get_string("metadata key");
    d.metadata[std::move(k)] = r.get_string("metadata value");
  }
  const uint32_t first = r.get<uint32_t>("first new string");
  const uint32_t nstrings = r.get_count("strings", 4);
  size_t total_strings = 0;
  if (delta.reset) {
    if (first != 0) throw ProtocolError("remote protocol: a reset event batch must start its strings at 0");
    // A reset replaces the session: its own table, whose first string is always "" (StringTable).
    prof::StringTable table;
    for (uint32_t i = 0; i < nstrings; ++i) {
      const std::string s = r.get_string("string");
      if (table.intern(s) != i)
        throw ProtocolError(fmt::format("remote protocol: a reset event batch repeats the string '{}'", s));
    }
    d.strings = std::move(table);
    total_strings = d.strings.size();
  } else {
    if (first != known_strings)
      throw ProtocolError(fmt::format("remote protocol: event batch continues the strings at {}, but this client "
                                      "holds {} (a batch was lost: reattach)", first, known_strings));
    delta.first_new_string = first;
    delta.new_strings.reserve(nstrings);
    for (uint32_t i = 0; i < nstrings; ++i) delta.new_strings.push_back(r.get_string("string"));
    total_strings = size_t(first) + nstrings;
  }
  d.threads.resize(r.get_count("threads", kThreadBytes));
  for (auto& t : d.threads) {
    t.thread = r.get<uint64_t>("thread id");
    t.os_tid = r.get<uint32_t>("thread os tid");
    t.name = r.get<uint32_t>("thread name");
    t.rank = r.get<int32_t>("thread rank");
  }
  d.ops.resize(r.get_count("ops", kOpBytes));
  for (auto& o : d.ops) {
    o.start_ns = r.get<int64_t>("op start");
    o.end_ns = r.get<int64_t>("op end");
    o.thread = r.get<uint64_t>("op thread");
    o.name = r.get<uint32_t>("op name");
    o.module = r.get<uint32_t>("op module");
    o.input_shapes = r.get<uint32_t>("op input shapes");
    o.input_dtypes = r.get<uint32_t>("op input dtypes");
    o.sequence_nr = r.get<int64_t>("op sequence_nr");
    o.correlation_id = r.get<uint64_t>("op correlation id");
    o.depth = r.get<int32_t>("op depth");
    o.kind = get_enum<prof::OpKind>(r, uint8_t(prof::OpKind::UserRange), "op kind");
  }
  d.gpu.resize(r.get_count("GPU activities", kGpuBytes));
  for (auto& g : d.gpu) {
    g.start_ns = r.get<int64_t>("GPU start");
    g.end_ns = r.get<int64_t>("GPU end");
    g.kind = get_enum<prof::GpuActivityKind>(r, uint8_t(prof::GpuActivityKind::Driver), "GPU activity kind");
    g.device = r.get<int32_t>("GPU device");
    g.stream = r.get<int32_t>("GPU stream");
    g.thread = r.get<uint64_t>("GPU thread");
    g.name = r.get<uint32_t>("GPU name");
    g.correlation_id = r.get<uint64_t>("GPU correlation id");
    g.external_id = r.get<uint64_t>("GPU external id");
    g.bytes = r.get<uint64_t>("GPU bytes");
    for (auto& v : g.grid) v = r.get<int32_t>("GPU grid");
    for (auto& v : g.block) v = r.get<int32_t>("GPU block");
    g.registers = r.get<int32_t>("GPU registers");
    g.shared_memory = r.get<int32_t>("GPU shared memory");
    g.copy_kind = r.get<uint8_t>("GPU copy kind");
  }
  d.collectives.resize(r.get_count("collectives", kCollectiveBytes));
  for (auto& c : d.collectives) {
    c.enqueue_ns = r.get<int64_t>("collective enqueue");
    c.start_ns = r.get<int64_t>("collective start");
    c.end_ns = r.get<int64_t>("collective end");
    c.thread = r.get<uint64_t>("collective thread");
    c.name = r.get<uint32_t>("collective name");
    c.group = r.get<uint32_t>("collective group");
    c.shape = r.get<uint32_t>("collective shape");
    c.dtype = r.get<uint32_t>("collective dtype");
    c.call_site = r.get<uint32_t>("collective call site");
    c.seq = r.get<uint64_t>("collective seq");
    c.numel = r.get<int64_t>("collective numel");
    c.bytes = r.get<int64_t>("collective bytes");
    c.peer = r.get<int32_t>("collective peer");
    c.point_to_point = r.get<uint8_t>("collective point_to_point") != 0;
    c.rank = r.get<int32_t>("collective rank");
  }
  d.memory.resize(r.get_count("memory events", kMemoryBytes));
  for (auto& m : d.memory) {
    m.time_ns = r.get<int64_t>("memory time");
    m.thread = r.get<uint64_t>("memory thread");
    m.address = r.get<uint64_t>("memory address");
    m.bytes = r.get<int64_t>("memory bytes");
    m.total_allocated = r.get<int64_t>("memory total");
    m.device = r.get<int32_t>("memory device");
    m.category = get_enum<prof::MemoryCategoryId>(r, uint8_t(prof::MemoryCategoryId::Other), "memory category");
    m.op = r.get<uint32_t>("memory op");
  }
  d.counters.resize(r.get_count("counters", kCounterBytes));
  for (auto& c : d.counters) {
    c.time_ns = r.get<int64_t>("counter time");
    c.name = r.get<uint32_t>("counter name");
    c.value = r.get<double>("counter value");
  }
  d.steps.resize(r.get_count("steps", kStepBytes));
  for (auto& s : d.steps) {
    s.step = r.get<int64_t>("step number");
    s.start_ns = r.get<int64_t>("step start");
    s.end_ns = r.get<int64_t>("step end");
  }
  const uint32_t graphs = r.get_count("graphs", 8 * 4 + 8);
  for (uint32_t i = 0; i < graphs; ++i) d.graphs.push_back(get_graph(r));
  d.streams.resize(r.get_count("streams", kStreamBytes));
  for (auto& s : d.streams) {
    s.device = r.get<int32_t>("stream device");
    s.stream = r.get<int32_t>("stream index");
    s.name = r.get<uint32_t>("stream name");
  }
  d.gradient_histograms.resize(r.get_count("gradient histograms", kGradientHistogramBytes));
  for (auto& h : d.gradient_histograms) {
    h.step = r.get<int64_t>("gradient histogram step");
    h.time_ns = r.get<int64_t>("gradient histogram time");
    h.name = r.get<uint32_t>("gradient histogram name");
    h.numel = r.get<int64_t>("gradient histogram numel");
    h.norm = r.get<double>("gradient histogram norm");
    h.lo = r.get<double>("gradient histogram lo");
    h.hi = r.get<double>("gradient histogram hi");
    h.nan_count = r.get<int64_t>("gradient histogram NaN count");
    h.inf_count = r.get<int64_t>("gradient histogram Inf count");
    const uint32_t bins = r.get_count("gradient histogram bins", 8);
    if (bins > uint32_t(prof::kMaxGradientBins))
      throw ProtocolError(fmt::format("remote protocol: event batch has a gradient histogram of {} bins (at most {})",
                                      bins, prof::kMaxGradientBins));
    h.counts.resize(bins);
    for (auto& c : h.counts) c = r.get<int64_t>("gradient histogram count");
    if (const std::string problem = prof::gradient_histogram_problem(h); !problem.empty())
      throw ProtocolError("remote protocol: event batch has an inconsistent gradient histogram: " + problem);
  }
  if (r.left() != 0)
    throw ProtocolError(fmt::format("remote protocol: event batch has {} bytes after its last record", r.left()));
  check_string_ids(d, total_strings);
  return batch;
}

}  // namespace rt::remote
