// Internal: how allocators report memory events (engine/src/allocator.cpp defines it).
// The CPU allocator and the CUDA caching allocator (engine/src/memory/caching_allocator.cpp) call it
// for every block they hand out or take back; it costs one relaxed atomic load when nothing
// observes. See Note [Memory categories] in engine/src/allocator.cpp.
#pragma once
#include <cstddef>

#include "rt/allocator.h"

namespace rt::detail {

// total_after: bytes allocated on device `d` once this event has happened.
void emit_memory_event(bool is_alloc, const void* p, size_t bytes, Device d, MemoryCategory c, size_t total_after);

}  // namespace rt::detail
