// gpu_bench — times the CUDA backend's core workloads with CUDA events and writes JSON; the same
// workloads, shapes and method as bench/gpu/torch_gpu_bench.py. bench/gpu/gpu_table.py compares the
// two; scripts/gpu-check.sh runs all three on a GPU machine.
//
//   build/bin/gpu_bench --json results-ours.json          # every workload
//   build/bin/gpu_bench --only add_f32 matmul_bf16       # some, printed to stdout
//   build/bin/gpu_bench --probe                          # exit 0: the device; exit 77: why there is none
//
// Each workload: random inputs (never zeros), warm-up, then the median of many runs each between two
// CUDA events (bench/gpu/gpu_timing.h), and a check of the last result against a float64 CPU
// reference on a slice (rel_err = ||out - ref|| / ||ref||, bounds from .library METHOD.md). A
// result over its bound is reported with "ok": false (gpu_table.py marks it WRONG). The correctness
// authority is the op check (tests/cuda); this check keeps a fast-but-wrong path out of the table.
// Exit status: 0 all ran and passed their checks, 1 a workload failed or threw, 2 bad arguments,
// 77 no usable CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_models.h"
#include "rt/amp/autocast.h"
#include "gpu_timing.h"
#include "rt/cuda.h"
#include "rt/rt.h"

namespace {

using nlohmann::json;
using gpu_timing::rel_err;
using gpu_timing::time_cuda;

const rt::Device kGpu = rt::Device::cuda(0);

// Drawn on the device (a 2^28-element randn on the host takes seconds of the script's budget).
rt::Tensor randn_gpu(const rt::Shape& shape) { return rt::randn(shape, rt::TensorOptions(rt::kFloat32).with_device(kGpu)); }

// One measured workload. bytes or flops (per run) give the rate; bound 0 means no error bound
// (then only a NaN err fails).
struct Measure {
  std::string op, shape;
  gpu_timing::Timing t;
  double bytes = 0, flops = 0;
  double err = 0, bound = 0;
};

json to_json(const std::string& id, const Measure& m) {
  json j = {{"id", id}, {"op", m.op}, {"shape", m.shape}, {"median_ms", m.t.median_ms},
            {"min_ms", m.t.min_ms}, {"max_ms", m.t.max_ms}, {"runs", m.t.runs}};
  if (m.bytes > 0) j["gb_per_s"] = m.bytes / (m.t.median_ms * 1e-3) / 1e9;
  if (m.flops > 0) j["tflop_per_s"] = m.flops / (m.t.median_ms * 1e-3) / 1e12;
  if (m.bound > 0) {
    j["rel_err"] = m.err;
    j["err_bound"] = m.bound;
    j["ok"] = std::isfinite(m.err) && m.err <= m.bound;
  } else {
    j["ok"] = std::isfinite(m.err);
  }
  return j;
}

constexpr int64_t kStreamN = int64_t(1) << 28;  // 2^28 float32 = 1 GiB per tensor, ~18x the H200's L2

Measure copy_f32() {
  const rt::Tensor src = randn_gpu({kStreamN});
  rt::Tensor dst = rt::empty({kStreamN}, rt::TensorOptions().with_device(kGpu));
  Measure m{"device copy (copy_)", "[268435456] f32", time_cuda([&] { dst.copy_(src); }, {3, 20})};
  m.bytes = 2.0 * kStreamN * 4;
  m.err = rel_err(dst.narrow(0, kStreamN - 65536, 65536), src.narrow(0, kStreamN - 65536, 65536));
  m.bound = 1e-12;
  return m;
}

Measure add_f32() {
  const rt::Tensor a = randn_gpu({kStreamN}), b = randn_gpu({kStreamN});
  rt::Tensor c;
  Measure m{"add", "[268435456] f32", time_cuda([&] { c = a + b; }, {3, 20})};
  m.bytes = 3.0 * kStreamN * 4;
  const int64_t k = 65536, off = kStreamN - k;
  m.err = rel_err(c.narrow(0, off, k), a.narrow(0, off, k).cpu().to(rt::kFloat64) + b.narrow(0, off, k).cpu().to(rt::kFloat64));
  m.bound = 1e-6;
  return m;
}

Measure softmax_f32(int64_t rows, int64_t cols) {
  const rt::Tensor x = randn_gpu({rows, cols}) * 3.0;
  rt::Tensor y;
  Measure m{"softmax (dim -1)", "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] f32",
            time_cuda([&] { y = rt::softmax(x, -1); }, {5, 30})};
  m.bytes = 2.0 * rows * cols * 4;
  const int64_t r0 = rows - 64;
  m.err = rel_err(y.narrow(0, r0, 64), rt::softmax(x.narrow(0, r0, 64).cpu().to(rt::kFloat64), -1));
  m.bound = 1e-5;
  return m;
}

Measure layer_norm_f32(int64_t rows, int64_t cols) {
  const rt::Tensor x = randn_gpu({rows, cols}) + 0.5, w = randn_gpu({cols}), b = randn_gpu({cols});
  rt::Tensor y;
  Measure m{"layer_norm (weight, bias)", "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] f32",
            time_cuda([&] { y = rt::layer_norm(x, {cols}, w, b, 1e-5); }, {5, 30})};
  m.bytes = 2.0 * rows * cols * 4;
  const int64_t r0 = rows - 64;
  auto f64 = [](const rt::Tensor& t) { return t.cpu().to(rt::kFloat64); };
  m.err = rel_err(y.narrow(0, r0, 64), rt::layer_norm(f64(x.narrow(0, r0, 64)), {cols}, f64(w), f64(b), 1e-5));
  m.bound = 1e-5;
  return m;
}

Measure matmul(rt::ScalarType dtype, bool tf32, const std::string& label, double bound) {
  constexpr int64_t n = 4096;
  const rt::Tensor a = randn_gpu({n, n}).to(dtype), b = randn_gpu({n, n}).to(dtype);
  const bool saved = rt::cuda::allow_tf32();
  rt::cuda::set_allow_tf32(tf32);
  rt::Tensor c;
  Measure m{label, "4096 x 4096 x 4096", time_cuda([&] { c = rt::matmul(a, b); }, {5, 30})};
  rt::cuda::set_allow_tf32(saved);
  m.flops = 2.0 * n * n * n;
  // 64 rows against the same (rounded) inputs in float64.
  m.err = rel_err(c.narrow(0, n - 64, 64), rt::matmul(a.narrow(0, n - 64, 64).cpu().to(rt::kFloat64), b.cpu().to(rt::kFloat64)));
  m.bound = bound;
  return m;
}

// One training step (zero_grad, forward, cross-entropy, backward, Adam) of a Linear/ReLU MLP; with
// `autocast`, the forward and the loss run in an autocast region of that dtype (backward outside, as in torch).
Measure mlp_step(const std::vector<int64_t>& sizes, int64_t batch, int runs,
                 std::optional<rt::ScalarType> autocast = std::nullopt) {
  rt::manual_seed(0);
  gpu_models::Mlp mlp(sizes, kGpu);
  rt::optim::Adam opt(mlp.parameters(), {.lr = 1e-3});
  const rt::Tensor x = randn_gpu({batch, sizes.front()});
  const rt::Tensor y = rt::randint(0, sizes.back(), {batch}).to(kGpu);
  rt::Tensor loss;
  std::string shape = "batch " + std::to_string(batch) + ", ";
  for (size_t i = 0; i < sizes.size(); ++i) shape.append(i ? "-" : "").append(std::to_string(sizes[i]));
  std::string op = "MLP training step (Adam";
  if (autocast) op.append(", autocast ").append(rt::dtype_name(*autocast));
  op.append(")");
  Measure m{op, shape, time_cuda([&] {
              opt.zero_grad();
              {
                std::optional<rt::amp::AutocastGuard> region;
                if (autocast) region.emplace(rt::DeviceType::CUDA, *autocast);
                loss = rt::cross_entropy(mlp.forward(x), y);
              }
              loss.backward();
              opt.step();
            }, {5, runs})};
  m.err = std::isfinite(loss.item<double>()) ? 0.0 : NAN;  // no bound: a finite loss is the check
  return m;
}

struct Workload {
  std::string id;
  std::function<Measure()> run;
};

std::vector<Workload> workloads() {
  return {
      {"copy_f32", copy_f32},
      {"add_f32", add_f32},
      {"softmax_f32_16384x4096", [] { return softmax_f32(16384, 4096); }},
      {"softmax_f32_4096x32768", [] { return softmax_f32(4096, 32768); }},
      {"layer_norm_f32_16384x4096", [] { return layer_norm_f32(16384, 4096); }},
      {"matmul_f32", [] { return matmul(rt::kFloat32, false, "matmul f32 (TF32 off)", 1e-4); }},
      {"matmul_tf32", [] { return matmul(rt::kFloat32, true, "matmul f32 (TF32 on)", 2e-3); }},
      {"matmul_bf16", [] { return matmul(rt::kBFloat16, false, "matmul bf16", 1e-2); }},
      {"mlp_step_small", [] { return mlp_step({784, 512, 512, 10}, 128, 50); }},
      {"mlp_step_large", [] { return mlp_step({784, 4096, 4096, 10}, 4096, 20); }},
      {"mlp_step_large_autocast_bf16", [] { return mlp_step({784, 4096, 4096, 10}, 4096, 20, rt::kBFloat16); }},
      // Shapes of transformer training (not issue-7 targets): attention scores, 128 per row, and layer_norm
      // at d_model 768, both a warp per row.
      {"softmax_f32_262144x128", [] { return softmax_f32(262144, 128); }},
      {"layer_norm_f32_65536x768", [] { return layer_norm_f32(65536, 768); }},
  };
}

int probe() {
  if (!rt::cuda::is_available()) {
    std::printf("no CUDA device: %s\n", rt::cuda::unavailable_reason().c_str());
    return 77;
  }
  const rt::cuda::DeviceProperties p = rt::cuda::device_properties(0);
  std::printf("%s, compute capability %d.%d, %.1f GiB, %d SMs; %s\n", p.name.c_str(), p.major, p.minor,
              double(p.total_memory) / (1 << 30), p.multiprocessors, rt::cuda::version_string().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--probe") return probe();
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--only") {
      while (i + 1 < argc && argv[i + 1][0] != '-') only.push_back(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      std::puts("usage: gpu_bench [--json FILE] [--only WORKLOAD...] | --probe\nworkloads:");
      for (const auto& w : workloads()) std::printf("  %s\n", w.id.c_str());
      return 0;
    } else {
      std::fprintf(stderr, "gpu_bench: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (!rt::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n", rt::cuda::unavailable_reason().c_str());
    return 77;
  }
  std::vector<Workload> chosen;
  for (auto& w : workloads())
    if (only.empty() || std::find(only.begin(), only.end(), w.id) != only.end()) chosen.push_back(w);
  if (chosen.size() != (only.empty() ? workloads().size() : only.size())) {
    std::fprintf(stderr, "gpu_bench: unknown workload among --only (try --help)\n");
    return 2;
  }

  const rt::cuda::DeviceProperties p = rt::cuda::device_properties(0);
  json out = {{"library", "RustyTorch++"}, {"device", p.name}, {"cuda", rt::cuda::version_string()},
              {"results", json::array()}};
  // Rewritten after each workload: a run stopped by its time limit keeps the figures it has.
  auto write_json = [&] {
    if (json_path.empty()) return true;
    const std::string tmp = json_path + ".tmp";  // renamed over the file: a kill mid-write leaves the last one whole
    {
      std::ofstream f(tmp);
      f << out.dump(1) << "\n";
      if (!f) {
        std::fprintf(stderr, "gpu_bench: cannot write %s\n", tmp.c_str());
        return false;
      }
    }
    if (std::rename(tmp.c_str(), json_path.c_str()) != 0) {
      std::fprintf(stderr, "gpu_bench: cannot rename %s to %s\n", tmp.c_str(), json_path.c_str());
      return false;
    }
    return true;
  };
  bool all_ok = true;
  for (const auto& w : chosen) {
    json r;
    try {
      r = to_json(w.id, w.run());
    } catch (const std::exception& e) {
      r = {{"id", w.id}, {"error", e.what()}, {"ok", false}};
    }
    rt::cuda::empty_cache();
    all_ok = all_ok && r["ok"].get<bool>();
    std::printf("%s\n", r.dump().c_str());
    std::fflush(stdout);
    out["results"].push_back(r);
    if (!write_json()) return 1;
  }
  return all_ok ? 0 : 1;
}
