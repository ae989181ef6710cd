#include "rt/storage.h"

namespace rt {

StorageImpl::~StorageImpl() {
  if (allocator) allocator->deallocate(data, nbytes);
  else if (deleter) deleter(data);
}

Storage Storage::allocate(size_t nbytes, Allocator* alloc) {
  Storage s;
  s.impl_ = std::make_shared<StorageImpl>();
  Allocator* a = alloc ? alloc : cpu_allocator();
  s.impl_->data = a->allocate(nbytes);
  s.impl_->nbytes = nbytes;
  s.impl_->device = a->device();
  s.impl_->allocator = a;
  return s;
}

Storage Storage::external(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter) {
  Storage s;
  s.impl_ = std::make_shared<StorageImpl>();
  s.impl_->data = data;
  s.impl_->nbytes = nbytes;
  s.impl_->device = device;
  s.impl_->deleter = std::move(deleter);
  return s;
}

}  // namespace rt
