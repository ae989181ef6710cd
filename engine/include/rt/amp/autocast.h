// rt/amp/autocast.h — automatic mixed precision: matrix products and convolutions run in
// float16/bfloat16, numerically sensitive ops in float32, as with torch.autocast.
//
//   rt::Tensor loss;
//   {
//     rt::amp::AutocastGuard autocast(rt::DeviceType::CUDA);   // float16 (the CPU's default: bfloat16)
//     rt::Tensor h = rt::linear(x, w, b);                      // float16: x, w and b are cast on the way in
//     loss = rt::cross_entropy(h, target);                      // float32: h is cast up first
//   }
//   loss.backward();   // outside the region, as in torch: gradients come back in each leaf's dtype
//
// Which ops cast, as torch's lists (see Note [Autocast] in engine/src/amp/autocast.cpp):
//   lower precision: matmul, mm, bmm, addmm, linear, conv1d, conv2d, scaled_dot_product_attention
//   float32:         cross_entropy, nll_loss, mse_loss, binary_cross_entropy_with_logits, prod
//   float32 on CUDA: exp, log, log1p, rsqrt, reciprocal, pow, softplus, softmax, log_softmax,
//                    layer_norm, sum, norm, logsumexp (on the CPU they keep their input's dtype)
//   widest input:    cat, stack, scatter_add
// Every other op runs in the dtype its inputs have. Only floating tensors on the region's device
// type are cast, never float64 ones. Autocast applies to the ops user code calls, not to the ops
// those call internally, and never to the backward pass.
//
// State is per thread and per device type. Within the outermost region, the float32 -> float16
// cast of a leaf that requires grad (a parameter) is made once and reused until the parameter
// is modified in place or the region ends.
#pragma once
#include <optional>

#include "rt/device.h"
#include "rt/dtype.h"
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::amp {

bool is_autocast_enabled(DeviceType device_type);
void set_autocast_enabled(DeviceType device_type, bool enabled);
// The dtype lower-precision ops run in: float16 on CUDA, bfloat16 on the CPU unless set.
ScalarType autocast_dtype(DeviceType device_type);
// Throws DTypeError unless dtype is float16 or bfloat16.
void set_autocast_dtype(DeviceType device_type, ScalarType dtype);
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
// Drops this thread's cached parameter casts (AutocastGuard does it when the outermost region ends).
void clear_autocast_cache();
// Regions nest; the Python context manager counts them with these. Each returns the new depth.
int increment_autocast_nesting();
int decrement_autocast_nesting();

// Enables autocast for one device type for the guard's lifetime and restores the previous
// state (enabled, dtype, cache) afterwards. enabled = false switches it off inside an
// autocast region. On a machine without a GPU a CUDA region is harmless: no tensor is on CUDA.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device_type, std::optional<ScalarType> dtype = std::nullopt, bool enabled = true,
                         bool cache_enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_;
};

// Ops run as if autocast were off, whatever the regions say (the backward pass uses it, and
// ops called with an explicit dtype). Restores on destruction.
class AutocastExcludedGuard {
 public:
  AutocastExcludedGuard();
  ~AutocastExcludedGuard();
  AutocastExcludedGuard(const AutocastExcludedGuard&) = delete;
  AutocastExcludedGuard& operator=(const AutocastExcludedGuard&) = delete;
};

// Ops that are not the engine's own (plugin ops, rt/plugin/abi.h's RtAutocastPolicy) declare one of these;
// autocast_inputs applies it as the engine's ops apply theirs:
//   rt::TensorList cast = rt::amp::autocast_inputs(rt::amp::OpCastPolicy::LowerPrecision, {x, w});
//   if (!cast.empty()) { x = cast[0]; w = cast[1]; }
// Returns the inputs, each floating one on the region's device type cast (float64 never), when autocast applies
// to an op called here (a region of the first defined input's device type is on, the op is called from user
// code, not from another op or the backward pass, and some input needs a cast); otherwise an empty list.
enum class OpCastPolicy { LowerPrecision, Float32, Promote };
TensorList autocast_inputs(OpCastPolicy policy, const TensorList& inputs);

}  // namespace rt::amp

RT_API_END
