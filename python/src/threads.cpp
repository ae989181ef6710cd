// torch.set_num_threads / get_num_threads: the engine's CPU kernel thread count (rt/parallel.h).
// OpenMP's count is set with it, which the OpenMP build of OpenBLAS follows. DataLoader workers set 1.
// Also the CPU kernels' instruction-set level (rt.backends.cpu.get_cpu_capability()).
#include <stdexcept>
#include <string>

#include "bind.h"
#include "rt/cpu_capability.h"
#include "rt/parallel.h"

namespace rtpy {

void bind_threads(py::module_& m) {
  m.def(
      "set_num_threads",
      [](int n) {
        if (n <= 0) throw std::runtime_error("set_num_threads expects a positive integer, got " + std::to_string(n));
        rt::set_num_threads(n);
      },
      py::arg("int"), "Sets how many threads the engine's CPU kernels (and OpenMP) use.");
  m.def("get_num_threads", &rt::get_num_threads, "How many threads the engine's CPU kernels use.");
  m.def("_get_cpu_capability", &rt::cpu_capability,
        "The instruction-set level the CPU kernels run at: DEFAULT, AVX2 or AVX512 (RT_CPU_CAPABILITY).");
}

}  // namespace rtpy
