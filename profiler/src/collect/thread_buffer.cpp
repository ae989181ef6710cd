#include "collect/thread_buffer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "rt/thread_name.h"

namespace rt::prof::collect {

std::atomic<uint64_t> g_generation{0};

ThreadBuffer::ThreadBuffer(uint64_t thread_id, uint32_t os_tid, uint32_t index)
    : thread_id(thread_id), os_tid(os_tid), index_(index) {
  head_ = tail_ = new Segment;
}

ThreadBuffer::~ThreadBuffer() {
  for (Segment* s = head_; s;) {
    Segment* next = s->next;
    delete s;
    s = next;
  }
  for (Segment* s : free_) delete s;
}

bool ThreadBuffer::advance() noexcept {
  std::lock_guard<std::mutex> lk(mu);
  Segment* fresh = nullptr;
  if (!free_.empty()) {
    fresh = free_.back();
    free_.pop_back();
  } else {
    fresh = new (std::nothrow) Segment;
    if (!fresh) return false;
  }
  tail_->next = fresh;
  tail_ = fresh;
  tail_count_ = 0;
  return true;
}

Slot* ThreadBuffer::next_slot(uint32_t shape_words, int64_t** shapes) noexcept {
  if (tail_count_ == kSlotsPerSegment || tail_->shape_words_used + shape_words > kShapeWordsPerSegment) [[unlikely]] {
    if (!advance()) return nullptr;
  }
  if (shape_words) {
    *shapes = tail_->shape_words + tail_->shape_words_used;
    tail_->shape_words_used += shape_words;
  }
  return &tail_->slots[tail_count_];
}

uint64_t ThreadBuffer::close_frame() noexcept {
  const int64_t end = ticks();
  if (open_ == 0) [[unlikely]] return 0;
  const uint32_t index = --open_;
  if (index >= kMaxFrames) [[unlikely]] return 0;  // counted as dropped when it opened
  const OpenFrame& f = frames_[index];
  shape_top_ = f.shape_begin;
  if (f.generation != g_generation.load(std::memory_order_relaxed)) [[unlikely]] return f.correlation;
  const uint32_t words = f.shape_words & ~kShapesTruncated;
  int64_t* shapes = nullptr;
  Slot* s = next_slot(words, &shapes);
  if (!s) [[unlikely]] {
    note_dropped();
    return f.correlation;
  }
  s->start = f.start;
  s->end = end;
  s->name = f.name;
  s->value = f.sequence_nr;
  s->correlation = f.correlation;
  s->module = f.module;
  s->shape_words = f.shape_words;
  s->shapes = words ? uint32_t(shapes - tail_->shape_words) : 0;
  s->depth = f.depth;
  s->kind = f.kind;
  if (words) std::memcpy(shapes, shape_stack_ + f.shape_begin, words * sizeof(int64_t));
  publish();
  return f.correlation;
}

void ThreadBuffer::record_instant(SlotKind kind, const char* name, int64_t value, uint64_t address,
                                  int64_t total_after, uint8_t category, int16_t device) noexcept {
  const int64_t now = ticks();
  Slot* s = next_slot(0, nullptr);
  if (!s) [[unlikely]] {
    note_dropped();
    return;
  }
  s->start = now;
  s->end = total_after;
  s->name = name;
  s->value = value;
  s->correlation = address;
  s->module = 0;
  s->shapes = 0;
  s->shape_words = 0;
  s->depth = 0;
  s->kind = kind;
  s->category = category;
  s->device = device;
  publish();
}

bool ThreadBuffer::fully_drained() {
  return head_ == tail_ && head_drained_ == tail_->published.load(std::memory_order_acquire);
}

std::string ThreadBuffer::thread_name() {
  std::lock_guard<std::mutex> lk(mu);
  return name;
}

size_t ThreadBuffer::segment_count() const {
  size_t n = free_.size();
  for (const Segment* s = head_; s; s = s->next) ++n;
  return n;
}

namespace {
std::atomic<uint32_t> g_next_index{1};

thread_local ThreadBuffer* t_buffer = nullptr;
thread_local bool t_exiting = false;

// Marks the buffer exited when its thread ends (the registry frees it once drained); events
// recorded later in the thread's teardown are dropped.
struct ThreadBufferHandle {
  ThreadBuffer* buffer = nullptr;
  ~ThreadBufferHandle() {
    t_exiting = true;
    t_buffer = nullptr;
    if (buffer) buffer->mark_exited();
  }
};

ThreadBuffer* create_buffer() noexcept {
  if (t_exiting) return nullptr;
  try {
    static thread_local ThreadBufferHandle handle;
    auto b = std::make_unique<ThreadBuffer>(rt::current_thread_id(), uint32_t(::syscall(SYS_gettid)),
                                            g_next_index.fetch_add(1));
    b->name = rt::this_thread_name();  // rt/thread_name.h; "" gives the default name
    ThreadBuffer* raw = b.get();
    BufferRegistry::instance().add(std::move(b));
    handle.buffer = raw;
    t_buffer = raw;
    return raw;
  } catch (...) {
    return nullptr;
  }
}
}  // namespace

ThreadBuffer* this_thread_buffer() noexcept {
  ThreadBuffer* b = t_buffer;
  if (b) [[likely]] return b;
  return create_buffer();
}

BufferRegistry& BufferRegistry::instance() {
  static auto* registry = new BufferRegistry;  // leaked: threads may record during static destruction
  return *registry;
}

void BufferRegistry::add(std::unique_ptr<ThreadBuffer> b) {
  std::lock_guard<std::mutex> lk(mu_);
  buffers_.push_back(std::move(b));
}

void BufferRegistry::prune() {
  std::lock_guard<std::mutex> lk(mu_);
  std::erase_if(buffers_, [](const std::unique_ptr<ThreadBuffer>& b) {
    std::lock_guard<std::mutex> blk(b->mu);
    return b->exited() && b->fully_drained();
  });
}

}  // namespace rt::prof::collect
