// Per-thread event buffers: the profiler's hot path. See Note [Thread buffers].
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collect/clock.h"
#include "rt/export.h"

namespace rt::prof::collect {

// Note [Thread buffers]
// Each recording thread owns a ThreadBuffer: a chain of fixed-size segments of 64-byte slots
// plus a word arena for input shapes. An op's slot is written when the op ends (so children
// precede parents in a segment) and published by one release store of the segment's count.
// The owner takes the buffer's mutex only to switch to a fresh segment; the drainer takes it
// only to find the undrained segments and to recycle drained ones, and reads the published
// slots without it, so a long drain never stalls the owner. Drained, sealed segments are
// recycled, so steady-state recording neither locks nor allocates. Open ops live in a fixed
// frame stack; their input shapes wait in a per-thread shape stack and are copied next to the
// slot when the op ends.

enum class SlotKind : uint8_t { Op, BackwardNode, UserRange, Memory, Counter };

struct Slot {
  int64_t start;         // ticks; Memory/Counter: the event's time
  int64_t end;           // ticks; Memory: bytes allocated on the device after the event
  const char* name;      // stable text (literal or stable_name()); Memory: owning op or nullptr
  int64_t value;         // Op kinds: sequence_nr; Memory: +/- bytes; Counter: the double's bits
  uint64_t correlation;  // Op kinds: external correlation id; Memory: the block's address
  uint32_t module;       // rt::current_module_id() at the op's start
  uint32_t shapes;       // offset of the op's shape words in its segment
  uint16_t shape_words;  // count | kShapesTruncated
  int16_t depth;
  SlotKind kind;
  uint8_t category;      // Memory: rt::MemoryCategory
  int16_t device;        // Memory: -1 CPU, else the CUDA index
};
static_assert(sizeof(Slot) <= 64);

// Shape words of one op: for each defined input a header word, then its dims.
inline constexpr uint16_t kShapesTruncated = 0x8000;
inline constexpr uint32_t kMaxShapeWordsPerOp = 1024;
inline int64_t shape_header(size_t ndim, unsigned dtype, unsigned device_type, unsigned device_index) {
  return int64_t(ndim) | int64_t(dtype) << 16 | int64_t(device_type) << 24 | int64_t(device_index) << 32;
}
inline size_t header_ndim(int64_t h) { return size_t(h & 0xffff); }
inline unsigned header_dtype(int64_t h) { return unsigned(h >> 16) & 0xff; }
inline unsigned header_device_type(int64_t h) { return unsigned(h >> 24) & 0xff; }
inline unsigned header_device_index(int64_t h) { return unsigned(h >> 32) & 0xffff; }

inline constexpr uint32_t kSlotsPerSegment = 1024;
inline constexpr uint32_t kShapeWordsPerSegment = 8192;

struct Segment {
  std::atomic<uint32_t> published{0};  // slots [0, published) are complete
  uint32_t shape_words_used = 0;       // owner only, until sealed
  Segment* next = nullptr;             // guarded by ThreadBuffer::mu
  Slot slots[kSlotsPerSegment];
  int64_t shape_words[kShapeWordsPerSegment];
};

struct OpenFrame {
  int64_t start;
  const char* name;
  int64_t sequence_nr;
  uint64_t correlation;
  uint64_t generation;
  uint32_t module;
  uint32_t shape_begin;  // into the shape stack
  uint16_t shape_words;
  int16_t depth;
  SlotKind kind;
};

// Bumped by every session start; frames opened under an older generation are not recorded.
extern std::atomic<uint64_t> g_generation;

// Exported from rt_profiler (rt/export.h) for tests/profiler/test_session_store.cpp, which checks that
// buffers reuse their segments.
class RT_API ThreadBuffer {
 public:
  static constexpr uint32_t kMaxFrames = 512;
  static constexpr uint32_t kShapeStackWords = 16384;

  ThreadBuffer(uint64_t thread_id, uint32_t os_tid, uint32_t index);
  ~ThreadBuffer();
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // ---- owner thread ------------------------------------------------------------------
  // Opens a frame (nullptr when nesting is too deep: the op is dropped). Every call pairs with
  // one close_frame(). The caller sets `start = ticks()` last, once it has filled the frame.
  OpenFrame* open_frame(SlotKind kind, const char* name, int64_t sequence_nr, uint32_t module) noexcept {
    const uint32_t index = open_++;
    if (index >= kMaxFrames) [[unlikely]] {
      note_dropped();
      return nullptr;
    }
    OpenFrame& f = frames_[index];
    f.generation = g_generation.load(std::memory_order_relaxed);
    f.depth = index > 0 && frames_[index - 1].generation == f.generation ? int16_t(frames_[index - 1].depth + 1) : 0;
    f.kind = kind;
    f.name = name;
    f.sequence_nr = sequence_nr;
    f.module = module;
    f.correlation = 0;
    f.shape_begin = shape_top_;
    f.shape_words = 0;
    return &f;
  }
  // Shape words of the frame just opened: room for kMaxShapeWordsPerOp, or nullptr.
  int64_t* shape_space() noexcept {
    return shape_top_ + kMaxShapeWordsPerOp <= kShapeStackWords ? shape_stack_ + shape_top_ : nullptr;
  }
  void commit_shapes(OpenFrame& f, uint16_t words_and_flags) noexcept {
    f.shape_words = words_and_flags;
    shape_top_ += words_and_flags & ~kShapesTruncated;
  }
  // Closes the innermost frame and records it. Returns the frame's correlation id (0: none).
  uint64_t close_frame() noexcept;

  void record_instant(SlotKind kind, const char* name, int64_t value, uint64_t address, int64_t total_after,
                      uint8_t category, int16_t device) noexcept;

  uint32_t index() const { return index_; }
  uint64_t next_correlation() noexcept { return uint64_t(index_) << 40 | ++correlation_counter_; }
  void note_dropped() noexcept { dropped_.fetch_add(1, std::memory_order_relaxed); }

  // ---- drainer (one at a time, inside BufferRegistry::for_each) ---------------------------
  // Calls consume(const Segment&, const Slot&) for every published, undrained slot, then
  // recycles sealed segments; takes mu only around finding and recycling them, never while
  // `consume` runs. `consume` may be a no-op to discard.
  template <typename Consume>
  void drain(Consume&& consume);
  std::string thread_name();  // takes mu
  uint64_t take_dropped() { return dropped_.exchange(0); }
  bool exited() const { return exited_.load(std::memory_order_acquire); }
  void mark_exited() { exited_.store(true, std::memory_order_release); }
  bool fully_drained();  // caller holds mu
  size_t segment_count() const;  // segments held, in use or free for reuse; caller holds mu

  std::mutex mu;          // the drainer's bookkeeping; the owner when switching segments
  std::string name;       // guarded by mu; "" until set_thread_name
  const uint64_t thread_id;
  const uint32_t os_tid;

 private:
  Slot* next_slot(uint32_t shape_words, int64_t** shapes) noexcept;
  void publish() noexcept { tail_->published.store(++tail_count_, std::memory_order_release); }
  bool advance() noexcept;  // seals the tail segment, takes a fresh one

  const uint32_t index_;
  uint64_t correlation_counter_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> exited_{false};
  // segment chain: head_ (oldest undrained) ... tail_ (owner writes); guarded by mu except tail_count_
  Segment* head_ = nullptr;
  Segment* tail_ = nullptr;
  uint32_t tail_count_ = 0;
  uint32_t head_drained_ = 0;
  std::vector<Segment*> free_;
  uint32_t open_ = 0;
  uint32_t shape_top_ = 0;
  OpenFrame frames_[kMaxFrames];
  int64_t shape_stack_[kShapeStackWords];
};

template <typename Consume>
void ThreadBuffer::drain(Consume&& consume) {
  Segment* first = nullptr;
  Segment* last = nullptr;
  uint32_t from = 0;
  {
    std::lock_guard<std::mutex> lk(mu);
    first = head_;
    last = tail_;
    from = head_drained_;
  }
  // Segments before `last` are sealed: the owner published their last slot and linked the next
  // under mu before we read tail_. Only `last` may still grow, up to its published count.
  uint32_t last_count = 0;
  for (Segment* s = first; s; s = s->next) {
    const uint32_t n = s->published.load(std::memory_order_acquire);
    for (uint32_t i = s == first ? from : 0; i < n; ++i) consume(*s, s->slots[i]);
    if (s == last) {
      last_count = n;
      break;
    }
  }
  std::lock_guard<std::mutex> lk(mu);
  while (head_ != last) {
    Segment* done = head_;
    head_ = done->next;
    done->published.store(0, std::memory_order_relaxed);
    done->shape_words_used = 0;
    done->next = nullptr;
    free_.push_back(done);
  }
  head_drained_ = last_count;
}

// The calling thread's buffer, created and registered on first use; nullptr when the thread
// is exiting or memory is exhausted.
RT_API ThreadBuffer* this_thread_buffer() noexcept;

// Every live buffer, for the drainer. Buffers of exited threads are freed by prune().
class BufferRegistry {
 public:
  static BufferRegistry& instance();
  template <typename Visit>
  // visit(ThreadBuffer&) for each buffer; none is added or freed meanwhile.
  void for_each(Visit&& visit) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& b : buffers_) visit(*b);
  }
  void add(std::unique_ptr<ThreadBuffer> b);
  void prune();  // frees buffers whose thread exited and whose records were all drained

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
};

}  // namespace rt::prof::collect
