#include "collect/slot_converter.h"

#include <fmt/format.h>
#include <unistd.h>

#include <bit>

#include "rt/dtype.h"
#include "rt/op_observer.h"

namespace rt::prof::collect {

void format_shape_words(const int64_t* words, uint32_t count, bool truncated, std::string& shapes,
                        std::string& dtypes) {
  fmt::memory_buffer s, t;
  s.push_back('[');
  t.push_back('[');
  uint32_t i = 0;
  const char* separator = "";
  while (i < count) {
    const int64_t header = words[i++];
    const size_t ndim = header_ndim(header);
    fmt::format_to(std::back_inserter(s), "{}[", separator);
    for (size_t d = 0; d < ndim && i < count; ++d, ++i)
      fmt::format_to(std::back_inserter(s), "{}{}", d ? ", " : "", words[i]);
    s.push_back(']');
    fmt::format_to(std::back_inserter(t), "{}{}", separator, rt::dtype_name(rt::ScalarType(header_dtype(header))));
    separator = ", ";
  }
  if (truncated) {
    fmt::format_to(std::back_inserter(s), "{}...", separator);
    fmt::format_to(std::back_inserter(t), "{}...", separator);
  }
  s.push_back(']');
  t.push_back(']');
  shapes.assign(s.data(), s.size());
  dtypes.assign(t.data(), t.size());
}

namespace {
MemoryCategoryId category_of(uint8_t engine_category) {
  switch (rt::MemoryCategory(engine_category)) {
    case rt::MemoryCategory::Parameter: return MemoryCategoryId::Parameter;
    case rt::MemoryCategory::Gradient: return MemoryCategoryId::Gradient;
    case rt::MemoryCategory::Activation: return MemoryCategoryId::Activation;
    case rt::MemoryCategory::OptimizerState: return MemoryCategoryId::OptimizerState;
    case rt::MemoryCategory::Temporary: return MemoryCategoryId::Temporary;
    case rt::MemoryCategory::Other: return MemoryCategoryId::Other;
  }
  return MemoryCategoryId::Other;
}
}  // namespace

void SlotConverter::thread(const ThreadBuffer& b, const std::string& name) {
  auto [it, inserted] = threads_.try_emplace(b.thread_id, out_.threads.size());
  if (inserted) out_.threads.push_back({b.thread_id, b.os_tid, 0});
  ThreadRecord& t = out_.threads[it->second];
  t.name = out_.strings.intern(
      !name.empty() ? name : b.os_tid == uint32_t(::getpid()) ? "main" : fmt::format("thread {}", b.os_tid));
}

void SlotConverter::reset() {
  names_.clear();
  modules_.clear();
  threads_.clear();
  shape_texts_.clear();
}

StringId SlotConverter::name_id(const char* stable) {
  if (!stable) return 0;
  auto [it, inserted] = names_.try_emplace(stable, 0);
  if (inserted) it->second = out_.strings.intern(stable);
  return it->second;
}

StringId SlotConverter::module_id(uint32_t module) {
  if (module == 0) return 0;
  auto [it, inserted] = modules_.try_emplace(module, 0);
  if (inserted) it->second = out_.strings.intern(rt::module_path(module));
  return it->second;
}

void SlotConverter::shape_texts(const Segment& segment, const Slot& slot, OpRecord& op) {
  const bool truncated = (slot.shape_words & kShapesTruncated) != 0;
  const uint32_t count = slot.shape_words & ~kShapesTruncated;
  if (count == 0 && !truncated) return;
  const int64_t* words = segment.shape_words + slot.shapes;
  key_.assign(reinterpret_cast<const char*>(words), count * sizeof(int64_t));
  key_.push_back(truncated ? '\1' : '\0');
  if (auto it = shape_texts_.find(std::string_view(key_)); it != shape_texts_.end()) {
    op.input_shapes = it->second.first;
    op.input_dtypes = it->second.second;
    return;
  }
  format_shape_words(words, count, truncated, shapes_, dtypes_);
  op.input_shapes = out_.strings.intern(shapes_);
  op.input_dtypes = out_.strings.intern(dtypes_);
  shape_texts_.emplace(key_, std::make_pair(op.input_shapes, op.input_dtypes));
}

void SlotConverter::convert(const ThreadBuffer& b, const Segment& segment, const Slot& slot) {
  switch (slot.kind) {
    case SlotKind::Op:
    case SlotKind::BackwardNode:
    case SlotKind::UserRange: {
      OpRecord op;
      op.start_ns = clock_.to_ns(slot.start);
      op.end_ns = clock_.to_ns(slot.end);
      op.thread = b.thread_id;
      op.name = name_id(slot.name);
      op.module = module_id(slot.module);
      op.sequence_nr = slot.value;
      op.correlation_id = slot.correlation;
      op.depth = slot.depth;
      op.kind = slot.kind == SlotKind::Op ? OpKind::Op
                : slot.kind == SlotKind::BackwardNode ? OpKind::BackwardNode
                                                      : OpKind::UserRange;
      if (slot.kind == SlotKind::Op) shape_texts(segment, slot, op);
      out_.ops.push_back(op);
      break;
    }
    case SlotKind::Memory: {
      MemoryRecord m;
      m.time_ns = clock_.to_ns(slot.start);
      m.thread = b.thread_id;
      m.address = slot.correlation;
      m.bytes = slot.value;
      m.total_allocated = slot.end;
      m.device = slot.device;
      m.category = category_of(slot.category);
      m.op = name_id(slot.name);
      out_.memory.push_back(m);
      break;
    }
    case SlotKind::Counter:
      out_.counters.push_back({clock_.to_ns(slot.start), name_id(slot.name), std::bit_cast<double>(slot.value)});
      break;
  }
}

}  // namespace rt::prof::collect
