#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

#include "backend_spec.h"
#include "rt/cuda.h"
#include "rt/dist/distributed.h"

namespace rt::dist {

namespace {

size_t slot(DeviceType t) { return t == DeviceType::CPU ? 0 : 1; }

}  // namespace

Group::Group(std::string name, std::vector<int> global_ranks, int rank, std::string backend_spec,
             std::shared_ptr<Store> store, Milliseconds timeout)
    : name_(std::move(name)),
      global_ranks_(std::move(global_ranks)),
      rank_(rank),
      backend_spec_(std::move(backend_spec)),
      store_(std::move(store)),
      timeout_(timeout) {
  const detail::BackendSpec spec = detail::parse_backend_spec(backend_spec_);
  backend_for_[0] = spec.cpu;
  backend_for_[1] = spec.cuda;
  backend_spec_ = spec.text();
  // CPU backends connect now, so a rendezvous problem shows at init_process_group / new_group as in
  // PyTorch; NCCL communicators wait for the first CUDA collective.
  if (!backend_for_[0].empty()) for_device(DeviceType::CPU);
}

Group::~Group() = default;

int Group::group_rank(int global_rank) const {
  auto it = std::find(global_ranks_.begin(), global_ranks_.end(), global_rank);
  return it == global_ranks_.end() ? -1 : int(it - global_ranks_.begin());
}

ProcessGroup& Group::for_device(DeviceType device) {
  const size_t i = slot(device);
  std::lock_guard<std::mutex> lock(mutex_);
  if (groups_[i]) return *groups_[i];
  const std::string& backend = backend_for_[i];
  const char* device_name = device == DeviceType::CPU ? "cpu" : "cuda";
  if (backend.empty())
    throw DistBackendError(fmt::format(
        "group '{}' (backend \"{}\") has no backend for {} tensors. Hint: {}", name_, backend_spec_, device_name,
        device == DeviceType::CPU ? "add gloo: init_process_group(backend=\"cpu:gloo,cuda:nccl\")"
                                  : "move the tensor to the CPU, or use nccl for CUDA tensors: "
                                    "init_process_group(backend=\"cpu:gloo,cuda:nccl\")"));
  ProcessGroupOptions options;
  options.timeout = timeout_;
  options.group_name = name_;
  options.global_ranks = global_ranks_;
  if (backend == "gloo") {
    groups_[i] = make_gloo_group(store_, rank_, size(), options);
  } else if (backend == "mpi") {
    groups_[i] = make_mpi_group(options);
  } else {
    groups_[i] = make_nccl_group(store_, rank_, size(), options);
  }
  if (debug_level() == DebugLevel::Detail)
    groups_[i]->set_consistency_store(std::make_shared<PrefixStore>(std::string("detail-") + device_name, store_));
  return *groups_[i];
}

ProcessGroup& Group::for_barrier() {
  return !backend_for_[1].empty() && rt::cuda::is_available() ? for_device(DeviceType::CUDA)
                                                               : for_device(DeviceType::CPU);
}

}  // namespace rt::dist

namespace rt::dist {

DebugLevel debug_level() {
  const char* v = std::getenv("RT_DISTRIBUTED_DEBUG");
  if (!v || !*v) v = std::getenv("TORCH_DISTRIBUTED_DEBUG");
  if (!v || !*v) return DebugLevel::Off;
  const std::string s(v);
  if (s == "DETAIL" || s == "detail") return DebugLevel::Detail;
  if (s == "INFO" || s == "info") return DebugLevel::Info;
  return DebugLevel::Off;
}

}  // namespace rt::dist
