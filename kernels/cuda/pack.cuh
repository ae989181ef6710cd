// kernels/cuda/pack.cuh — V elements of T moved by one aligned vector load or store. Private to
// kernels/cuda/*.cu.
//
//   using P = Pack<float, 4>;                                  // 16 bytes: one LDG.128 / STG.128
//   P x = load_pack<float, 4>(src, i);                         // src + i is 16-byte aligned
//   for (int e = 0; e < 4; ++e) x.v[e] *= 2.f;
//   store_pack<float, 4>(dst, i, x);                           // dst: global memory
//
// The alignment of the struct (sizeof(T) * V) is what lets the compiler emit one vector access
// instead of V scalar ones; the caller checks that the addresses have it.
#pragma once
#include <cstdint>
#include <cstring>

namespace rt::cuda_kernels {

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Elements per 16-byte pack.
template <typename T>
inline constexpr int kPack16 = 16 / int(sizeof(T));

template <typename T>
using Pack16 = Pack<T, kPack16<T>>;

// The pack of V elements starting at element i of p.
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p, int64_t i) {
  return *reinterpret_cast<const Pack<T, V>*>(p + i);
}

// p points to global memory (a tensor's data). A 16-byte pack is written with one st.global.v4:
// built element by element in an unrolled loop, a plain struct store is often split by the
// compiler into scalar stores (seen in the row kernels' PTX), a quarter of the store bandwidth
// per instruction.
template <typename T, int V>
__device__ __forceinline__ void store_pack(T* p, int64_t i, const Pack<T, V>& x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Pack<T, V>) == 16) {
    uint32_t w[4];
    memcpy(w, &x, sizeof(w));
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p + i), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                 : "memory");
    return;
  }
#endif
  *reinterpret_cast<Pack<T, V>*>(p + i) = x;  // the CUDA emulator's build (kernels/cuda_emulator/)
}

// Starts a 16-byte copy from global memory (src) to shared memory (dst) that does not pass through
// registers (cp.async, sm_80+), so a thread can have many in flight next to its register loads.
// The copies are complete, for the thread that started them, after cp_async_wait_all().
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned shared_dst = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_dst), "l"(src));
#else
  *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);
#endif
}

__device__ __forceinline__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace rt::cuda_kernels
