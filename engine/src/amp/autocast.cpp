// Note [Autocast]
// Autocast is per thread and per device type (CPU, CUDA), as in torch. An eligible op starts
// with an AutocastCall (autocast_policy.h); it casts when all of these hold:
//  - autocast is enabled on this thread for the device type of the op's first defined input,
//    and not excluded (AutocastExcludedGuard: the backward pass, explicit dtype= arguments;
//    a custom function's backward lifts the backward pass's exclusion: it is user code);
//  - the op was called from user code: rt::detail::op_depth() is 0. Ops that other ops call
//    internally keep the dtypes their caller chose. In torch an op with an autocast rule shields
//    its internals the same way; a composite op without one decomposes into ops that autocast
//    one by one, while ours (being a kernel, not a decomposition) keeps its inputs' dtypes;
//  - at least one eligible input (defined, floating, not float64, on that device type) differs
//    from the policy's dtype: lower precision (the region's dtype), float32, or the widest of
//    the region's dtype and the eligible inputs' dtypes (promote). The float32 list is torch's
//    per device type: on CUDA it covers softmax, layer_norm, exp, sum...; on the CPU only the
//    losses and prod (bfloat16 has float32's range), which is what torch's CPU autocast does.
// The op then calls itself with the cast inputs; nothing is left to cast, so the second call
// runs the op. The casts are ordinary `to` ops: differentiable, visible to the profiler.
//
// Zero cost when unused: a thread enabling autocast sets kAutocast in g_dispatch_flags (while
// any thread has it on), which both makes OpGuard track op depth and lets AutocastCall's
// inline check through. Everything else lives here.
//
// Parameter cache: a float32 leaf that requires grad, cast to the lower-precision dtype while
// grad mode is on, is cast once per outermost region (torch's cache, as Apex did). The entry
// holds the source, so its address cannot be reused by another tensor, and its version, so an
// in-place update (an optimizer step inside the region) is never served stale. A cast whose
// backward node a backward pass has released is made again (several losses, each with its own
// backward, in one region). Casts made under no_grad are not cached: a cast without a grad_fn
// must never reach a graph later.
#include "rt/amp/autocast.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "autocast_exclusion.h"
#include "autocast_policy.h"
#include "rt/autograd/grad_mode.h"
#include "rt/autograd/node.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/ops/view.h"

namespace rt::amp {
namespace {

constexpr int kDeviceTypes = 2;
int slot(DeviceType t) { return t == DeviceType::CUDA ? 1 : 0; }

std::mutex g_active_mu;
int g_active_threads = 0;  // threads with autocast on for some device type; guarded by g_active_mu

void count_active_thread(int delta) {
  std::lock_guard<std::mutex> lk(g_active_mu);
  g_active_threads += delta;
  if (g_active_threads > 0) rt::detail::g_dispatch_flags.fetch_or(rt::detail::kAutocast);
  else rt::detail::g_dispatch_flags.fetch_and(~rt::detail::kAutocast);
}

struct CachedCast {
  Tensor source;  // keeps the key's address from being reused
  Tensor cast;
  uint32_t version;
  ScalarType dtype;
};

struct ThreadState {
  bool enabled[kDeviceTypes] = {false, false};
  ScalarType dtype[kDeviceTypes] = {kBFloat16, kFloat16};
  bool cache_enabled = true;
  int excluded = 0;
  int nesting = 0;
  std::unordered_map<const TensorImpl*, CachedCast> cache;

  bool any_enabled() const { return enabled[0] || enabled[1]; }
  ~ThreadState() {
    if (any_enabled()) count_active_thread(-1);
  }
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

bool eligible(const Tensor& t, DeviceType device_type) {
  return t.defined() && is_floating(t.dtype()) && t.dtype() != kFloat64 && t.device().type == device_type;
}

// A backward without retain_graph released the cast's node: a graph built on it could not be
// differentiated again, so the cast is made anew (torch's node survives, having saved nothing).
bool backward_released(const Tensor& cast) {
  const auto& node = cast.grad_fn();
  return node && node->released();
}

Tensor cached_cast(ThreadState& s, const Tensor& t, ScalarType dtype, DeviceType device_type) {
  const bool can_cache = s.cache_enabled && dtype == s.dtype[slot(device_type)] && t.dtype() == kFloat32 &&
                         t.requires_grad() && t.is_leaf() && !t.impl().is_view && GradMode::is_enabled();
  if (!can_cache) return to_dtype(t, dtype);
  const TensorImpl* key = &t.impl();
  if (auto it = s.cache.find(key); it != s.cache.end() && it->second.version == t.version() &&
                                    it->second.dtype == dtype && !backward_released(it->second.cast))
    return it->second.cast;
  Tensor cast = to_dtype(t, dtype);
  s.cache[key] = CachedCast{t, cast, t.version(), dtype};
  return cast;
}

}  // namespace

bool is_autocast_enabled(DeviceType device_type) { return state().enabled[slot(device_type)]; }

void set_autocast_enabled(DeviceType device_type, bool enabled) {
  ThreadState& s = state();
  const bool was = s.any_enabled();
  s.enabled[slot(device_type)] = enabled;
  if (s.any_enabled() != was) count_active_thread(enabled ? 1 : -1);
}

ScalarType autocast_dtype(DeviceType device_type) { return state().dtype[slot(device_type)]; }

void set_autocast_dtype(DeviceType device_type, ScalarType dtype) {
  if (dtype != kFloat16 && dtype != kBFloat16)
    throw DTypeError("autocast: dtype " + std::string(dtype_name(dtype)) + " is not a lower-precision dtype; " +
                     "use float16 or bfloat16 (float32 ops need no autocast: disable it instead)");
  state().dtype[slot(device_type)] = dtype;
}

bool is_autocast_cache_enabled() { return state().cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { state().cache_enabled = enabled; }
void clear_autocast_cache() { state().cache.clear(); }
int increment_autocast_nesting() { return ++state().nesting; }
int decrement_autocast_nesting() {
  ThreadState& s = state();
  if (s.nesting > 0) --s.nesting;
  return s.nesting;
}

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<ScalarType> dtype, bool enabled, bool cache_enabled)
    : device_type_(device_type),
      prev_enabled_(is_autocast_enabled(device_type)),
      prev_dtype_(autocast_dtype(device_type)),
      prev_cache_(is_autocast_cache_enabled()) {
  if (dtype) set_autocast_dtype(device_type, *dtype);  // validates before anything changes
  set_autocast_enabled(device_type, enabled);
  set_autocast_cache_enabled(cache_enabled);
  increment_autocast_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (decrement_autocast_nesting() == 0) clear_autocast_cache();
  set_autocast_enabled(device_type_, prev_enabled_);
  state().dtype[slot(device_type_)] = prev_dtype_;
  set_autocast_cache_enabled(prev_cache_);
}

AutocastExcludedGuard::AutocastExcludedGuard() { ++state().excluded; }
AutocastExcludedGuard::~AutocastExcludedGuard() { --state().excluded; }

detail::AutocastExclusionLift::AutocastExclusionLift() : saved_(std::exchange(state().excluded, 0)) {}
detail::AutocastExclusionLift::~AutocastExclusionLift() { state().excluded = saved_; }

namespace detail {

void AutocastCall::prepare(CastPolicy policy, const Tensor* const* inputs, size_t n) {
  ThreadState& s = state();
  if (!s.any_enabled() || s.excluded > 0 || rt::detail::op_depth() != 0) return;
  const Tensor* first = nullptr;
  for (size_t i = 0; i < n && !first; ++i)
    if (inputs[i]->defined()) first = inputs[i];
  if (!first) return;
  const DeviceType device_type = first->device().type;
  if (!s.enabled[slot(device_type)]) return;
  if (policy == CastPolicy::Float32OnCuda) {
    if (device_type != DeviceType::CUDA) return;
    policy = CastPolicy::Float32;
  }

  ScalarType target = policy == CastPolicy::Float32 ? kFloat32 : s.dtype[slot(device_type)];
  if (policy == CastPolicy::Promote)
    for (size_t i = 0; i < n; ++i)
      if (eligible(*inputs[i], device_type)) target = promote_types(target, inputs[i]->dtype());
  bool needed = false;
  for (size_t i = 0; i < n && !needed; ++i) needed = eligible(*inputs[i], device_type) && inputs[i]->dtype() != target;
  if (!needed) return;

  cast_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = *inputs[i];
    cast_.push_back(eligible(t, device_type) && t.dtype() != target ? cached_cast(s, t, target, device_type) : t);
  }
}

void AutocastCall::prepare(CastPolicy policy, const TensorList& inputs) {
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(inputs.size());
  for (const auto& t : inputs) ptrs.push_back(&t);
  prepare(policy, ptrs.data(), ptrs.size());
}

}  // namespace detail

TensorList autocast_inputs(OpCastPolicy policy, const TensorList& inputs) {
  const detail::CastPolicy p = policy == OpCastPolicy::LowerPrecision ? detail::CastPolicy::LowerPrecision
                               : policy == OpCastPolicy::Float32      ? detail::CastPolicy::Float32
                                                                      : detail::CastPolicy::Promote;
  detail::AutocastCall call(p, inputs);
  return call ? call.tensors() : TensorList{};
}

}  // namespace rt::amp
