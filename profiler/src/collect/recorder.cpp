#include "collect/recorder.h"

#include <atomic>
#include <bit>

#include "collect/collective_log.h"
#include "collect/stable_names.h"
#include "collect/thread_buffer.h"
#include "rt/error.h"
#include "rt/op_observer.h"

namespace rt::prof::collect {
namespace {

// Read on every event, written only while no session records; atomics keep that race-free.
std::atomic<bool> g_record_shapes{false}, g_profile_memory{false}, g_with_stack{false}, g_recording{false};
std::atomic<void (*)(uint64_t)> g_push_correlation{nullptr};
std::atomic<void (*)()> g_pop_correlation{nullptr};

uint32_t module_now() { return g_with_stack.load(std::memory_order_relaxed) ? rt::current_module_id() : 0; }

void write_shapes(ThreadBuffer& b, OpenFrame& f, const Tensor* const* inputs, size_t n) noexcept {
  int64_t* w = b.shape_space();
  if (!w) {
    b.commit_shapes(f, kShapesTruncated);
    return;
  }
  uint32_t used = 0;
  uint16_t flags = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = *inputs[i];
    if (!t.defined()) continue;
    const Shape& sizes = t.sizes();
    if (used + 1 + sizes.size() > kMaxShapeWordsPerOp) {
      flags = kShapesTruncated;
      break;
    }
    const Device d = t.device();
    w[used++] = shape_header(sizes.size(), unsigned(t.dtype()), unsigned(d.type), unsigned(d.index));
    for (int64_t v : sizes) w[used++] = v;
  }
  b.commit_shapes(f, uint16_t(used | flags));
}

class BufferRecorder final : public rt::EventRecorder {
 public:
  void* op_begin(const char* name, const Tensor* const* inputs, size_t n, int64_t sequence_nr) noexcept override {
    ThreadBuffer* b = this_thread_buffer();
    if (!b) [[unlikely]] return nullptr;
    OpenFrame* f = b->open_frame(SlotKind::Op, name, sequence_nr, module_now());
    if (!f) [[unlikely]] return b;  // dropped; close_frame still pops it
    if (g_record_shapes.load(std::memory_order_relaxed)) write_shapes(*b, *f, inputs, n);
    if (auto push = g_push_correlation.load(std::memory_order_relaxed)) {
      f->correlation = b->next_correlation();
      push(f->correlation);
    }
    f->start = ticks();
    return b;
  }
  void op_end(void* token) noexcept override {
    auto* b = static_cast<ThreadBuffer*>(token);
    if (!b) [[unlikely]] return;
    if (b->close_frame() != 0)
      if (auto pop = g_pop_correlation.load(std::memory_order_relaxed)) pop();
  }
  void node_begin(std::string_view name, int64_t sequence_nr) noexcept override {
    open_named(SlotKind::BackwardNode, name, sequence_nr);
  }
  void node_end() noexcept override {
    if (ThreadBuffer* b = this_thread_buffer()) b->close_frame();
  }
  void memory_event(const MemoryEvent& e, int64_t total_after) noexcept override {
    if (!g_profile_memory.load(std::memory_order_relaxed)) return;
    ThreadBuffer* b = this_thread_buffer();
    if (!b) [[unlikely]] return;
    const int64_t bytes = e.is_alloc ? int64_t(e.bytes) : -int64_t(e.bytes);
    b->record_instant(SlotKind::Memory, e.op, bytes, reinterpret_cast<uint64_t>(e.ptr), total_after,
                      uint8_t(e.category), e.device.is_cpu() ? int16_t(-1) : int16_t(e.device.index));
  }
  void collective_event(const CollectiveEvent& e) noexcept override {
    if (recording()) record_collective(e);
  }

  static bool open_named(SlotKind kind, std::string_view name, int64_t sequence_nr) noexcept {
    ThreadBuffer* b = this_thread_buffer();
    if (!b) [[unlikely]] return false;
    const char* stable = nullptr;
    try {
      stable = stable_name(name);
    } catch (...) {
      stable = "<out of memory>";
    }
    OpenFrame* f = b->open_frame(kind, stable, sequence_nr, kind == SlotKind::UserRange ? module_now() : 0);
    if (f) f->start = ticks();
    return true;
  }
};

BufferRecorder& recorder() {
  static auto* r = new BufferRecorder;  // leaked: the engine may still call it after detach
  return *r;
}

}  // namespace

void start_recording(const RecordingConfig& config) {
  g_record_shapes.store(config.record_shapes);
  g_profile_memory.store(config.profile_memory);
  g_with_stack.store(config.with_stack);
  g_push_correlation.store(config.push_correlation);
  g_pop_correlation.store(config.pop_correlation);
  rt::set_event_recorder(&recorder());
  g_recording.store(true, std::memory_order_release);
}

void stop_recording() {
  g_recording.store(false, std::memory_order_release);
  if (rt::event_recorder() == &recorder()) rt::set_event_recorder(nullptr);
  g_push_correlation.store(nullptr);
  g_pop_correlation.store(nullptr);
}

bool recording() { return g_recording.load(std::memory_order_acquire); }

bool range_begin(std::string_view name) noexcept {
  if (!recording()) return false;
  return BufferRecorder::open_named(SlotKind::UserRange, name, -1);
}

void range_end() noexcept {
  if (ThreadBuffer* b = this_thread_buffer()) b->close_frame();
}

bool record_counter(std::string_view name, double value) noexcept {
  if (!recording()) return false;
  ThreadBuffer* b = this_thread_buffer();
  if (!b) return false;
  try {
    b->record_instant(SlotKind::Counter, stable_name(name), std::bit_cast<int64_t>(value), 0, 0, 0, 0);
  } catch (...) {
    b->note_dropped();
    return false;
  }
  return true;
}

void name_this_thread(std::string_view name) {
  ThreadBuffer* b = this_thread_buffer();
  if (!b)
    throw rt::Error("set_thread_name: this thread cannot record (it is exiting or memory is exhausted)");
  std::lock_guard<std::mutex> lk(b->mu);
  b->name = std::string(name);
}

}  // namespace rt::prof::collect
