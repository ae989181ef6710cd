// rt_cuda_op_check: every op with a CUDA path, run on the CPU and on cuda:0 from the same random
// inputs, outputs and gradients compared (see harness.h).
//
//   rt_cuda_op_check [--self-test] [--max-elements N] [FILTER]
//
// FILTER keeps the cases whose "op variant" contains it. --self-test compares the CPU with itself
// instead (needs no GPU): every case must run there and be deterministic. --max-elements skips the
// cases with more input elements (the CUDA emulator's build runs it so). Exit codes: 0 all passed,
// 1 a case failed, 77 no usable CUDA device (ctest reports the test as skipped, reason printed).
//
// Every op of the engine has a case. An op without a CUDA path would throw DeviceError "<op> has
// no CUDA implementation yet" on a GPU tensor (tests/cuda/test_cuda_dispatch.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cases.h"
#include "rt/cuda.h"

int main(int argc, char** argv) {
  using namespace rt::op_check;
  bool self_test = false;
  int64_t max_elements = 0;
  std::string filter;
  const char* usage = "usage: rt_cuda_op_check [--self-test] [--max-elements N] [FILTER]";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--self-test") {
      self_test = true;
    } else if (a == "--max-elements") {
      char* end = nullptr;
      max_elements = i + 1 < argc ? std::strtoll(argv[i + 1], &end, 10) : 0;
      if (max_elements <= 0 || *end != '\0') {
        std::fprintf(stderr, "rt_cuda_op_check: --max-elements takes a positive count; %s\n", usage);
        return 2;
      }
      ++i;
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "rt_cuda_op_check: unknown option %s; %s\n", a.c_str(), usage);
      return 2;
    } else {
      filter = a;
    }
  }
  rt::Device other = rt::Device::cpu();
  if (self_test) {
    std::printf("rt_cuda_op_check --self-test: every case on the CPU twice (no GPU involved)\n\n");
  } else {
    if (!rt::cuda::is_available()) {
      std::printf("SKIPPED: %s\n", rt::cuda::unavailable_reason().c_str());
      return 77;
    }
    other = rt::Device::cuda(0);
    rt::cuda::set_allow_tf32(false);
    const rt::cuda::DeviceProperties p = rt::cuda::device_properties(0);
    std::printf("rt_cuda_op_check: cpu vs cuda:0 (%s, sm_%d%d), %s, TF32 off\n\n", p.name.c_str(), p.major, p.minor,
                rt::cuda::version_string().c_str());
  }
  rt::manual_seed(20240607);

  OpCheck check(filter, other, max_elements);
  add_arith_cases(check);
  add_unary_cases(check);
  add_pow_clamp_cases(check);
  add_logic_cases(check);
  add_reduce_cases(check);
  add_nn_cases(check);
  add_index_cases(check);
  add_linalg_cases(check);
  add_conv_pool_cases(check);
  add_memory_cases(check);
  add_model_cases(check);
  return check.summary();
}
