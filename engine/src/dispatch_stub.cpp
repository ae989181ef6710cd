// Note [Kernel table]
// Each DispatchStub is a global object whose slots are constant-initialised (constinit), so a
// registration running in another translation unit's static initialiser always finds it ready,
// whatever the order the loader runs initialisers in. Registration happens at load time (the CUDA
// backend's files register their kernels when librt_engine loads; a plugin when it is loaded), so
// calls read a slot with one relaxed load: a slot is written before any op can reach it, and a
// plugin's unload clears it only once its ops are gone. A stub joins the table, the list
// kernel_table() reads, on its first registration, and leaves it when destroyed (a plugin's
// library unloading, or a stub local to a test).
#include "rt/dispatch_stub.h"

#include <algorithm>
#include <mutex>

#include "rt/error.h"
#include "rt/op_observer.h"

namespace rt {
namespace {

struct Table {
  std::mutex mu;
  std::vector<detail::DispatchStubBase*> stubs;
};
Table& table() {
  static auto* t = new Table;  // leaked: stubs may register from other libraries' initialisers
  return *t;
}

const char* type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
  }
  return "?";
}

}  // namespace

namespace detail {

std::string DispatchStubBase::kernel_devices() const {
  std::string out;
  for (size_t i = 0; i < kDeviceTypeCount; ++i) {
    if (slots_[i].load(std::memory_order_relaxed) == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += type_name(DeviceType(i));
  }
  return out.empty() ? "none" : out;
}

void DispatchStubBase::register_erased(DeviceType t, void* kernel) {
  if (!kernel) throw ValueError(std::string("register_kernel: a null kernel for ") + name_ + " on " + type_name(t));
  Table& tab = table();
  std::lock_guard<std::mutex> lk(tab.mu);
  void* expected = nullptr;
  if (!slots_[index(t)].compare_exchange_strong(expected, kernel, std::memory_order_release))
    throw Error(std::string("register_kernel: ") + name_ + " already has a kernel for " + type_name(t) +
                "; clear_kernel(DeviceType::" + (t == DeviceType::CPU ? "CPU" : "CUDA") +
                ") first to replace it (two backends or plugins registered the same kernel)");
  if (std::find(tab.stubs.begin(), tab.stubs.end(), this) == tab.stubs.end()) tab.stubs.push_back(this);
}

DispatchStubBase::~DispatchStubBase() {
  Table& tab = table();
  std::lock_guard<std::mutex> lk(tab.mu);
  tab.stubs.erase(std::remove(tab.stubs.begin(), tab.stubs.end(), this), tab.stubs.end());
}

void DispatchStubBase::clear_kernel(DeviceType t) {
  std::lock_guard<std::mutex> lk(table().mu);
  slots_[index(t)].store(nullptr, std::memory_order_release);
}

void DispatchStubBase::throw_missing_kernel(Device d) const {
  const char* op = current_op_name();  // known while someone observes ops (a profiler, anomaly mode)
  std::string what = std::string(name_) + " has no kernel for " + d.str();
  if (op && *op && std::string_view(op) != name_) what += " (in " + std::string(op) + ")";
  what += " (kernels: " + kernel_devices() + ").";
  if (d.is_cpu())
    what += " Nothing registered a CPU kernel for it; a plugin does with " + std::string(name_) +
            ".register_kernel(rt::DeviceType::CPU, ...) (rt/dispatch_stub.h)";
  else
    what += " Move the tensors to the CPU with .cpu() for this step; docs/cuda.md lists the ops that run on CUDA";
  throw DeviceError(what + module_context());
}

}  // namespace detail

std::vector<KernelTableEntry> kernel_table() {
  Table& tab = table();
  std::vector<KernelTableEntry> rows;
  {
    std::lock_guard<std::mutex> lk(tab.mu);
    for (const auto* s : tab.stubs) {
      KernelTableEntry row{s->name(), {}};
      for (size_t i = 0; i < kDeviceTypeCount; ++i)
        if (s->has_kernel(DeviceType(i))) row.devices.push_back(DeviceType(i));
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return rows;
}

}  // namespace rt
