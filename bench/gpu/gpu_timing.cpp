#include "gpu_timing.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace gpu_timing {

Timing time_cuda(const std::function<void()>& fn, const Options& options) {
  for (int i = 0; i < options.warmup; ++i) fn();
  rt::cuda::synchronize();
  std::vector<std::unique_ptr<rt::cuda::Event>> starts, ends;
  for (int i = 0; i < options.runs; ++i) {
    starts.push_back(std::make_unique<rt::cuda::Event>(true));
    ends.push_back(std::make_unique<rt::cuda::Event>(true));
  }
  for (int i = 0; i < options.runs; ++i) {
    starts[i]->record();
    fn();
    ends[i]->record();
  }
  ends.back()->synchronize();
  std::vector<double> ms;
  for (int i = 0; i < options.runs; ++i) ms.push_back(starts[i]->elapsed_ms(*ends[i]));
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return {median, ms.front(), ms.back(), options.runs};
}

double rel_err(const rt::Tensor& out, const rt::Tensor& ref) {
  const rt::Tensor o = out.cpu().to(rt::kFloat64), r = ref.cpu().to(rt::kFloat64);
  const double diff = (o - r).square().sum().sqrt().item<double>();
  const double norm = r.square().sum().sqrt().item<double>();
  return norm > 0 ? diff / norm : diff;
}

}  // namespace gpu_timing
