// kernels/cuda/device_error_flag.h — how a kernel reports one bad input value (an out-of-range
// index or class) back to its launcher, which turns it into an rt::IndexError.
//
//   // caller: 16 bytes of device scratch (kDeviceErrorFlagBytes) per launch
//   rt::cuda_kernels::embedding_forward(out, weight, idx, scratch, stream);   // may throw IndexError
//
// Layout: two int64 words, {found, value}. The launcher zeroes them before the kernel; the first
// thread that meets a bad value sets found = 1 with atomicCAS and stores the value; the launcher
// copies both words back and synchronises the stream (the price of a Python-style exception;
// PyTorch instead raises a device-side assert that kills the context).
#pragma once
#include <cstddef>

namespace rt::cuda_kernels {

inline constexpr size_t kDeviceErrorFlagBytes = 16;

}  // namespace rt::cuda_kernels
