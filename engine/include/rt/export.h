// rt/export.h — what the engine's and the profiler's shared libraries export.
//
//   // A public header (engine/include/rt/..., profiler/include/rt/prof/...): its declarations are API.
//   #pragma once
//   #include "rt/export.h"
//   #include "rt/tensor.h"
//   RT_API_BEGIN
//   namespace rt { Tensor relu(const Tensor& x); }
//   RT_API_END
//
//   // One declaration from an internal header that tests or plugins link against:
//   class RT_API CachingAllocator { ... };
//
// rt_engine and rt_profiler compile with -fvisibility=hidden: whatever is declared outside these
// regions and without RT_API (engine/src/, profiler/src/) stays inside its library, so the dynamic
// symbol table is the API and nothing else (faster loading, no interposition, a plugin cannot bind to
// internals by accident). tests/architecture/test_layering.py checks that every public header opens
// and closes its region. The kernels/cpu/ headers are exported the same way (plugin CPU kernels build
// on ElementwiseLoop). Device code compiled by nvcc keeps the default visibility, so the macros are
// empty there.
#pragma once

#if defined(__CUDACC__) || !defined(__GNUC__)
#define RT_API
#define RT_API_BEGIN
#define RT_API_END
#else
#define RT_API __attribute__((visibility("default")))
#define RT_API_BEGIN _Pragma("GCC visibility push(default)")
#define RT_API_END _Pragma("GCC visibility pop")
#endif
