// Which backend serves which device type, from a backend spec ("gloo", "cpu:gloo,cuda:nccl", "").
#pragma once
#include <string>

namespace rt::dist::detail {

struct BackendSpec {
  std::string cpu;   // "gloo", "mpi" or "" (none)
  std::string cuda;  // "nccl" or ""
  std::string text() const;  // "gloo", "nccl", "cpu:gloo,cuda:nccl"
};

// Throws ValueError naming the spec and what is accepted. "" picks PyTorch's default: gloo for CPU
// tensors (mpi when gloo is not built), nccl for CUDA tensors when it is built and a GPU is present.
BackendSpec parse_backend_spec(const std::string& spec);

}  // namespace rt::dist::detail
