// The category and event names the exporter writes and the importer recognises. Kineto's names where
// PyTorch has one, so PyTorch tooling (and HTA) reads our traces and we read theirs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rt/prof/events.h"

namespace rt::prof::trace {

inline constexpr std::string_view kCatOp = "cpu_op";
inline constexpr std::string_view kCatBackward = "backward";
inline constexpr std::string_view kCatUserRange = "user_annotation";
inline constexpr std::string_view kCatCpuToGpu = "ac2g";
inline constexpr std::string_view kCatForwardBackward = "fwdbwd";
inline constexpr std::string_view kCatMemoryEvent = "cpu_instant_event";
inline constexpr std::string_view kCatMemoryCounter = "memory";
inline constexpr std::string_view kCatCounter = "counter";
// Collectives (CollectiveRecord): one Chrome-trace thread per lane (Note [Collective lanes]), named
// kCollectivesThreadName, " 2", " 3"...; their args use Kineto's names where it has one.
inline constexpr std::string_view kCatCollective = "collective";
inline constexpr std::string_view kCollectivesThreadName = "collectives";
inline constexpr std::string_view kCatNonFiniteCounter = "counter_nonfinite";
inline constexpr std::string_view kMemoryEventName = "[memory]";
inline constexpr std::string_view kStepPrefix = "ProfilerStep#";
inline constexpr std::string_view kStepsThreadName = "Steps";
// PyTorch names backward nodes "autograd::engine::evaluate_function: AddmmBackward0".
inline constexpr std::string_view kBackwardPrefix = "autograd::engine::evaluate_function: ";
inline constexpr size_t kMemoryCategoryCount = 6;

inline std::string_view gpu_category(GpuActivityKind k) {
  switch (k) {
    case GpuActivityKind::Kernel: return "kernel";
    case GpuActivityKind::Memcpy: return "gpu_memcpy";
    case GpuActivityKind::Memset: return "gpu_memset";
    case GpuActivityKind::Synchronization: return "cuda_sync";
    case GpuActivityKind::Runtime: return "cuda_runtime";
    case GpuActivityKind::Driver: return "cuda_driver";
  }
  return "kernel";
}

inline std::string_view memory_category_name(MemoryCategoryId c) {
  switch (c) {
    case MemoryCategoryId::Parameter: return "parameter";
    case MemoryCategoryId::Gradient: return "gradient";
    case MemoryCategoryId::Activation: return "activation";
    case MemoryCategoryId::OptimizerState: return "optimizer_state";
    case MemoryCategoryId::Temporary: return "temporary";
    case MemoryCategoryId::Other: return "other";
  }
  return "other";
}

inline std::string memory_counter_name(int32_t device) {
  return device < 0 ? std::string("Memory (CPU)") : "Memory (cuda:" + std::to_string(device) + ")";
}

}  // namespace rt::prof::trace
