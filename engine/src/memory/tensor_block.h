// tensor_block.h — one heap block for a new tensor's TensorImpl and StorageImpl.
//
//   TensorBlock::Ref block = TensorBlock::create();
//   auto storage = std::allocate_shared<StorageImpl>(BlockAllocator<StorageImpl>(block.get()));
//   auto impl = std::allocate_shared<TensorImpl>(BlockAllocator<TensorImpl>(block.get()));
//   // one malloc for both objects and both shared_ptr control blocks; freed when both are
//
// Note [One allocation per tensor]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// make_tensor used to make four heap allocations besides the data: the TensorImpl and the
// StorageImpl with their shared_ptr control blocks, and the sizes and strides vectors. Shapes
// are now inline (Note [Inline shapes]), and the two objects are built with allocate_shared
// inside one TensorBlock. Each keeps its own control block, so their lifetimes stay
// independent, exactly as with make_shared: the TensorImpl is destroyed when its last Tensor
// (and weak_ptr) lets go, while a view can keep the StorageImpl alive much longer. The block
// counts the objects carved out of it and is freed by the last one's deallocation. A request
// the block has no room for (never, for the two objects it is sized for) falls back to
// operator new; fallback_count() lets a test prove it stays zero.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "rt/export.h"
#include "rt/storage.h"
#include "rt/tensor.h"

namespace rt::detail {

// Exported for tests/engine/test_inline_shape.cpp (fallback_count).
class RT_API TensorBlock {
 public:
  // Owns one reference to a block for as long as the caller is still carving it.
  class Ref {
   public:
    explicit Ref(TensorBlock* b) noexcept : block_(b) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() { block_->release(); }
    TensorBlock* get() const noexcept { return block_; }

   private:
    TensorBlock* block_;
  };

  static Ref create() { return Ref(new TensorBlock); }

  // `bytes` with `align` from the block, or from operator new when it is full.
  void* take(size_t bytes, size_t align);
  // Returns what take() gave out (`bytes` long); frees the block after its last piece and its Ref.
  // Every piece, a fallback one too, holds a reference, so the block outlives whatever came from it.
  // Under AddressSanitizer a returned piece is poisoned while the block lives on (a TensorImpl freed
  // while a view keeps the storage), so a use after free of it is still reported.
  void give_back(void* p, size_t bytes) noexcept;

  // How many take() calls did not fit since the process started.
  static uint64_t fallback_count() noexcept;

 private:
  TensorBlock() = default;
  void release() noexcept;
  bool owns(const void* p) const noexcept {
    auto* c = static_cast<const unsigned char*>(p);
    return c >= bytes_ && c < bytes_ + sizeof bytes_;
  }

  // Two control blocks from allocate_shared: each the object, two counts, a vtable pointer and
  // the allocator; 64 bytes of slack for alignment and library differences.
  static constexpr size_t kBytes = sizeof(TensorImpl) + sizeof(StorageImpl) + 4 * sizeof(void*) * 2 + 64;

  std::atomic<int> live_{1};  // the creator's Ref plus one per piece handed out
  size_t used_ = 0;           // only the creating thread carves, before the pieces are shared
  alignas(std::max_align_t) unsigned char bytes_[kBytes];
};

// A std allocator over one TensorBlock, for std::allocate_shared.
template <typename T>
struct BlockAllocator {
  using value_type = T;
  TensorBlock* block;

  explicit BlockAllocator(TensorBlock* b) noexcept : block(b) {}
  template <typename U>
  BlockAllocator(const BlockAllocator<U>& o) noexcept : block(o.block) {}  // NOLINT: rebinding
  T* allocate(size_t n) { return static_cast<T*>(block->take(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) noexcept { block->give_back(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const BlockAllocator<U>& o) const noexcept { return block == o.block; }
};

}  // namespace rt::detail
