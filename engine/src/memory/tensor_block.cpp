#include "memory/tensor_block.h"

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

void TensorBlock::give_back(void* p) noexcept {
  if (!owns(p)) ::operator delete(p, kFallbackAlign);
  release();
}

uint64_t TensorBlock::fallback_count() noexcept { return g_fallbacks.load(std::memory_order_relaxed); }

}  // namespace rt::detail
