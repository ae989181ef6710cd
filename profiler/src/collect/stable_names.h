// Names that outlive their source: node names, user ranges and counter names arrive as
// temporary strings, but hot-path records store a `const char*`. stable_name() returns a
// pointer to a process-lifetime copy; each thread caches its lookups, so only the first use
// of a name on a thread takes a lock and allocates.
#pragma once
#include <string_view>

namespace rt::prof::collect {

// Never returns nullptr; the same text gives the same pointer on every thread. Throws
// std::bad_alloc only when the name is new and memory is exhausted.
const char* stable_name(std::string_view name);

}  // namespace rt::prof::collect
