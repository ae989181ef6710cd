// rt/storage.h — the reference-counted buffer that tensor views share.
//
// A Storage owns bytes on a device plus the version counter that every view of it shares:
// in-place ops bump it, and autograd compares it with the version a saved tensor had
// (see Note [Saved tensor versions] in rt/autograd/node.h).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "rt/allocator.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

struct StorageImpl {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  Allocator* allocator = nullptr;        // null when the memory is external
  std::function<void(void*)> deleter;    // for external memory (numpy arrays, mmapped files)
  std::atomic<uint32_t> version{0};

  StorageImpl() = default;
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl();
};

class Storage {
 public:
  Storage() = default;
  // Allocates `nbytes` through `alloc` (the CPU allocator by default).
  static Storage allocate(size_t nbytes, Allocator* alloc = nullptr);
  // Wraps memory owned elsewhere; `deleter(data)` runs when the last view dies.
  static Storage external(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  // Adopts a StorageImpl built by the caller (make_tensor builds one beside its TensorImpl).
  explicit Storage(std::shared_ptr<StorageImpl> impl) noexcept : impl_(std::move(impl)) {}

  void* data() const { return impl_ ? impl_->data : nullptr; }
  size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_ ? impl_->device : Device::cpu(); }
  Allocator* allocator() const { return impl_ ? impl_->allocator : nullptr; }  // null: external memory
  uint32_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void bump_version() const { impl_->version.fetch_add(1, std::memory_order_relaxed); }
  bool defined() const { return bool(impl_); }
  bool is_same(const Storage& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

 private:
  std::shared_ptr<StorageImpl> impl_;
};

}  // namespace rt

RT_API_END
