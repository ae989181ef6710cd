// rt/dispatch_stub.h — the kernel table: for each kernel an op calls, one slot per device type.
//
// An op checks its arguments, allocates its output on the operands' device, records autograd, and
// calls its stub with that device; the stub runs the kernel registered for the device's type:
//
//   // declared where the op and the backends both see it (engine/src/ops/dispatch_stubs.h, a plugin's header):
//   using ScaleKernel = void(const rt::Tensor& out, const rt::Tensor& x, double factor);
//   extern rt::DispatchStub<ScaleKernel> scale_stub;
//   // defined once, constant-initialised, with the name its errors show:
//   constinit rt::DispatchStub<ScaleKernel> scale_stub{"scale"};
//   // each backend registers its kernel, from any translation unit, at load time:
//   RT_REGISTER_KERNEL(scale_stub, rt::DeviceType::CUDA, scale_cuda);
//   // the op:
//   scale_stub(out.device(), out, x, 2.0);
//   // without a kernel for that device it throws rt::DeviceError:
//   //   "scale has no kernel for cuda:0 (kernels: cpu). Move the tensors to the CPU with .cpu() ..."
//
// A call costs one relaxed atomic load and an indirect call; registering is for load time (a
// backend initialising, a plugin being loaded) and takes a lock. A slot holds one kernel:
// registering a second for the same device type throws (clear_kernel first, as a plugin's unload does).
// rt::kernel_table() lists every living stub that has had a kernel, for tools and tests.
// See Note [Kernel table] in engine/src/dispatch_stub.cpp.
#pragma once
#include <array>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "rt/device.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

inline constexpr size_t kDeviceTypeCount = 2;  // DeviceType::CPU, DeviceType::CUDA

namespace detail {
// The type-erased part of a stub: its name, its slots, and the table it joins on first registration.
class DispatchStubBase {
 public:
  const char* name() const { return name_; }
  bool has_kernel(DeviceType t) const { return slots_[index(t)].load(std::memory_order_relaxed) != nullptr; }
  // Device types with a kernel, in DeviceType order: "cpu, cuda", or "none".
  std::string kernel_devices() const;
  // Removes the kernel of device type `t` (a plugin unloading); a no-op when there is none.
  void clear_kernel(DeviceType t);

 protected:
  constexpr explicit DispatchStubBase(const char* name) : name_(name) {}
  ~DispatchStubBase();  // leaves the table (a stub of an unloaded plugin, or a local one in a test)
  static constexpr size_t index(DeviceType t) { return size_t(t); }
  void register_erased(DeviceType t, void* kernel);
  [[noreturn]] void throw_missing_kernel(Device d) const;

  const char* name_;
  std::array<std::atomic<void*>, kDeviceTypeCount> slots_{};
};
}  // namespace detail

template <typename Signature>
class DispatchStub;

template <typename R, typename... Args>
class DispatchStub<R(Args...)> : public detail::DispatchStubBase {
 public:
  using Kernel = R (*)(Args...);

  constexpr explicit DispatchStub(const char* name) : DispatchStubBase(name) {}
  DispatchStub(const DispatchStub&) = delete;
  DispatchStub& operator=(const DispatchStub&) = delete;

  // Throws rt::Error when device type `t` has a kernel already (naming the stub and the device type).
  void register_kernel(DeviceType t, Kernel k) { register_erased(t, reinterpret_cast<void*>(k)); }

  // Runs the kernel of d's device type; rt::DeviceError naming the stub and d when there is none.
  R operator()(Device d, Args... args) const {
    void* k = slots_[index(d.type)].load(std::memory_order_relaxed);
    if (!k) [[unlikely]] throw_missing_kernel(d);
    return reinterpret_cast<Kernel>(k)(std::forward<Args>(args)...);
  }
};

// One row of the table: a stub and the device types it has kernels for.
struct KernelTableEntry {
  std::string name;
  std::vector<DeviceType> devices;
};
// Every stub that has had a kernel registered, sorted by name.
std::vector<KernelTableEntry> kernel_table();

}  // namespace rt

#define RT_KERNEL_CONCAT_INNER(a, b) a##b
#define RT_KERNEL_CONCAT(a, b) RT_KERNEL_CONCAT_INNER(a, b)
// Registers `fn` as `stub`'s kernel for device type `type` when the library loads.
#define RT_REGISTER_KERNEL(stub, type, fn)                                          \
  [[maybe_unused]] static const bool RT_KERNEL_CONCAT(rt_kernel_registered_, __LINE__) = \
      ((stub).register_kernel((type), (fn)), true)

RT_API_END
