#include "memory/tensor_block.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace rt::detail {

namespace {
std::atomic<uint64_t> g_fallbacks{0};
// Fallback pieces are allocated and freed with one alignment, enough for any object made here.
constexpr std::align_val_t kFallbackAlign{64};
}

void* TensorBlock::take(size_t bytes, size_t align) {
  const size_t start = (used_ + align - 1) / align * align;
  void* p;
  if (align <= alignof(std::max_align_t) && start + bytes <= kBytes) {
    p = bytes_ + start;
    used_ = start + bytes;
  } else {
    p = ::operator new(bytes, kFallbackAlign);
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  live_.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void TensorBlock::give_back(void* p, size_t bytes) noexcept {
  if (!owns(p)) {
    ::operator delete(p, kFallbackAlign);
  } else {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_POISON_MEMORY_REGION(p, bytes);
#else
    (void)bytes;
#endif
  }
  release();
}

void TensorBlock::release() noexcept {
  if (live_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(bytes_, sizeof bytes_);
#endif
  delete this;
}

uint64_t TensorBlock::fallback_count() noexcept { return g_fallbacks.load(std::memory_order_relaxed); }

}  // namespace rt::detail
