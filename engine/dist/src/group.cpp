#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "rt/cuda.h"
#include "rt/dist/distributed.h"

namespace rt::dist {

namespace {

size_t slot(DeviceType t) { return t == DeviceType::CPU ? 0 : 1; }

bool is_known_backend(const std::string& b) { return b == "gloo" || b == "mpi" || b == "nccl"; }

// "gloo" -> cpu: gloo; "nccl" -> cuda: nccl; "cpu:gloo,cuda:nccl" -> both; "" -> PyTorch's default.
void parse_backend_spec(const std::string& spec, std::string (&out)[2]) {
  if (spec.empty()) {
    out[0] = is_gloo_available() ? "gloo" : (is_mpi_available() ? "mpi" : "gloo");
    if (is_nccl_available() && rt::cuda::is_available()) out[1] = "nccl";
    return;
  }
  if (spec.find(':') == std::string::npos) {
    if (!is_known_backend(spec))
      throw ValueError(fmt::format("unknown backend '{}': use \"gloo\" or \"mpi\" (CPU tensors), \"nccl\" (CUDA "
                                   "tensors), or one per device as \"cpu:gloo,cuda:nccl\"",
                                   spec));
    out[spec == "nccl" ? 1 : 0] = spec;
    return;
  }
  std::stringstream parts(spec);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t colon = part.find(':');
    const std::string device = part.substr(0, colon);
    const std::string backend = colon == std::string::npos ? "" : part.substr(colon + 1);
    if ((device != "cpu" && device != "cuda") || !is_known_backend(backend))
      throw ValueError(fmt::format("backend '{}': '{}' is not DEVICE:BACKEND with DEVICE cpu or cuda and BACKEND gloo, "
                                   "mpi or nccl (e.g. \"cpu:gloo,cuda:nccl\")",
                                   spec, part));
    if ((device == "cpu") == (backend == "nccl"))
      throw ValueError(fmt::format("backend '{}': {} does not run {} tensors (gloo and mpi: cpu; nccl: cuda)", spec,
                                   backend, device));
    out[slot(device == "cpu" ? DeviceType::CPU : DeviceType::CUDA)] = backend;
  }
}

}  // namespace

Group::Group(std::string name, std::vector<int> global_ranks, int rank, std::string backend_spec,
             std::shared_ptr<Store> store, Milliseconds timeout)
    : name_(std::move(name)),
      global_ranks_(std::move(global_ranks)),
      rank_(rank),
      backend_spec_(std::move(backend_spec)),
      store_(std::move(store)),
      timeout_(timeout) {
  parse_backend_spec(backend_spec_, backend_for_);
  if (backend_spec_.empty())
    backend_spec_ = backend_for_[1].empty() ? backend_for_[0] : "cpu:" + backend_for_[0] + ",cuda:" + backend_for_[1];
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
  return *groups_[i];
}

ProcessGroup& Group::for_barrier() {
  return !backend_for_[1].empty() && rt::cuda::is_available() ? for_device(DeviceType::CUDA)
                                                               : for_device(DeviceType::CPU);
}

}  // namespace rt::dist
