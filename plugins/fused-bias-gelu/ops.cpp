// rtx::fused_bias_gelu: the op's registration, its argument checks, and its self test.
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "gelu_math.h"
#include "rt/plugin/sdk.h"
#if defined(FBG_WITH_CUDA)
#include "cuda_kernels.h"
#endif

namespace {

using rt::plugin::sdk::BackwardContext;
using rt::plugin::sdk::Error;
using rt::plugin::sdk::KernelContext;
using rt::plugin::sdk::Tensor;

// rows and n of x viewed as [rows, n], after checking x and b against each other.
struct Geometry {
  int64_t rows = 0, n = 0;
};
Geometry check_inputs(const Tensor& x, const Tensor& b) {
  RT_PLUGIN_CHECK(x.dim() >= 1, "fused_bias_gelu: x must have at least one dimension (got a 0-d tensor)");
  RT_PLUGIN_CHECK(b.dim() == 1, "fused_bias_gelu: b must be 1-D, got ", b.dim(), " dimensions");
  RT_PLUGIN_CHECK(b.size(0) == x.size(-1), "fused_bias_gelu: b has ", b.size(0), " elements but x's last dimension is ",
                  x.size(-1), "; b is added along x's last dimension");
  RT_PLUGIN_CHECK(x.dtype() == b.dtype(), "fused_bias_gelu: x is ", x.dtype_name(), " but b is ", b.dtype_name(),
                  "; cast one of them");
  if (x.dtype() != RT_DTYPE_FLOAT32 && x.dtype() != RT_DTYPE_FLOAT64)
    throw Error(std::string("fused_bias_gelu: ") + x.dtype_name() + " is not supported (float32 and float64 are)",
                RT_STATUS_UNSUPPORTED);
  const int64_t n = x.size(-1);
  return {n == 0 ? 0 : x.numel() / n, n};
}

Tensor forward_cpu(const Tensor& x_in, const Tensor& b_in) {
  const Geometry g = check_inputs(x_in, b_in);
  Tensor x = x_in.contiguous(), b = b_in.contiguous(), y = Tensor::empty_like(x);
  if (x.dtype() == RT_DTYPE_FLOAT32) fbg::forward_cpu(x.data<float>(), b.data<float>(), y.data<float>(), g.rows, g.n);
  else fbg::forward_cpu(x.data<double>(), b.data<double>(), y.data<double>(), g.rows, g.n);
  return y;
}

void backward_cpu(BackwardContext& ctx) {
  const Geometry g = check_inputs(ctx.arg(0), ctx.arg(1));
  Tensor x = ctx.arg(0).contiguous(), b = ctx.arg(1).contiguous(), gy = ctx.grad_output(0).contiguous();
  Tensor gx = Tensor::empty_like(x);
  Tensor gb = ctx.needs_grad(1) ? Tensor::empty_like(b) : Tensor();
  if (x.dtype() == RT_DTYPE_FLOAT32)
    fbg::backward_cpu(x.data<float>(), b.data<float>(), gy.data<float>(), gx.data<float>(),
                      gb.defined() ? gb.data<float>() : nullptr, g.rows, g.n);
  else
    fbg::backward_cpu(x.data<double>(), b.data<double>(), gy.data<double>(), gx.data<double>(),
                      gb.defined() ? gb.data<double>() : nullptr, g.rows, g.n);
  if (ctx.needs_grad(0)) ctx.set_grad(0, std::move(gx));
  if (gb.defined()) ctx.set_grad(1, std::move(gb));
}

#if defined(FBG_WITH_CUDA)
void check_launch(const char* error, const char* what) {
  if (error) throw Error(std::string("fused_bias_gelu: ") + what + ": " + error, RT_STATUS_ERROR);
}

Tensor forward_cuda(const KernelContext& ctx, const Tensor& x_in, const Tensor& b_in) {
  const Geometry g = check_inputs(x_in, b_in);
  Tensor x = x_in.contiguous(), b = b_in.contiguous(), y = Tensor::empty_like(x);
  if (x.dtype() == RT_DTYPE_FLOAT32)
    check_launch(fbg::forward_cuda(x.data<float>(), b.data<float>(), y.data<float>(), g.rows, g.n, ctx.cuda_stream),
                 "forward kernel");
  else
    check_launch(fbg::forward_cuda(x.data<double>(), b.data<double>(), y.data<double>(), g.rows, g.n, ctx.cuda_stream),
                 "forward kernel");
  return y;
}

void backward_cuda(BackwardContext& ctx) {
  const Geometry g = check_inputs(ctx.arg(0), ctx.arg(1));
  Tensor x = ctx.arg(0).contiguous(), b = ctx.arg(1).contiguous(), gy = ctx.grad_output(0).contiguous();
  Tensor gx = Tensor::empty_like(x);
  Tensor gb = ctx.needs_grad(1) ? Tensor::empty_like(b) : Tensor();
  // The bias sum's scratch; the host's allocator reuses it once the stream is past it.
  const int64_t chunks = gb.defined() ? fbg::bias_grad_chunks(g.rows, g.n) : 0;
  Tensor partial = chunks > 0 ? Tensor::empty(ctx.host(), {chunks * g.n}, RT_DTYPE_FLOAT64, ctx.device()) : Tensor();
  double* scratch = partial.defined() ? partial.data<double>() : nullptr;
  if (x.dtype() == RT_DTYPE_FLOAT32)
    check_launch(fbg::backward_cuda(x.data<float>(), b.data<float>(), gy.data<float>(), gx.data<float>(),
                                    gb.defined() ? gb.data<float>() : nullptr, scratch, chunks, g.rows,
                                    g.n, ctx.cuda_stream()),
                 "backward kernels");
  else
    check_launch(fbg::backward_cuda(x.data<double>(), b.data<double>(), gy.data<double>(), gx.data<double>(),
                                    gb.defined() ? gb.data<double>() : nullptr, scratch, chunks, g.rows,
                                    g.n, ctx.cuda_stream()),
                 "backward kernels");
  if (ctx.needs_grad(0)) ctx.set_grad(0, std::move(gx));
  if (gb.defined()) ctx.set_grad(1, std::move(gb));
}
#endif

// The CPU kernels (float32 and float64) against gelu computed in long double from the definition, on values
// across GELU's range, the far tails included. Every x + b is exact in float, so only the kernels' error counts;
// float's tolerance allows for -z^2 rounded in float, which the tail's exp magnifies.
void self_test(const RtHostApi* host) {
  const std::vector<double> xs = {-12.0, -5.5, -3.0, -1.25, -0.5, -0.0009765625, 0.0, 0.0001220703125, 0.75, 1.5,
                                  3.25, 8.0};
  const std::vector<double> bs = {0.25, -0.125, 0.0};
  const int64_t n = int64_t(bs.size()), rows = int64_t(xs.size());
  auto reference = [](long double v) { return v * 0.5L * std::erfc(-v / std::sqrt(2.0L)); };
  auto check = [&](auto tag, double relative, double absolute) {
    using T = decltype(tag);
    const std::vector<int64_t> x_sizes = {rows, n}, b_sizes = {n};
    const int32_t dtype = std::is_same_v<T, float> ? RT_DTYPE_FLOAT32 : RT_DTYPE_FLOAT64;
    Tensor x = Tensor::empty(host, x_sizes, dtype, {RT_DEVICE_CPU, 0});
    Tensor b = Tensor::empty(host, b_sizes, dtype, {RT_DEVICE_CPU, 0});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) x.data<T>()[r * n + j] = T(xs[size_t(r)] - bs[size_t(j)] * (j + 1));
    for (int64_t j = 0; j < n; ++j) b.data<T>()[j] = T(bs[size_t(j)]);
    Tensor y = forward_cpu(x, b);
    for (int64_t i = 0; i < rows * n; ++i) {
      const long double v = (long double)x.data<T>()[i] + (long double)b.data<T>()[i % n];
      const long double want = reference(v), got = y.data<T>()[i];
      const long double err = std::fabs(got - want);
      RT_PLUGIN_CHECK(err <= relative * std::fabs(want) + absolute, "self test: ",
                      sizeof(T) == 4 ? "float32" : "float64", " gelu(", double(v), ") = ", double(got), ", expected ",
                      double(want));
    }
  };
  check(float{}, 1e-5, 1e-7);
  check(double{}, 1e-13, 1e-300);
}

}  // namespace

RT_PLUGIN_OPS(rtx, m) {
  auto op = m.def("fused_bias_gelu(Tensor x, Tensor b) -> Tensor",
                  "gelu(x + b) in one pass, b broadcast over x's last dimension; GELU with the exact erf, as "
                  "torch.nn.functional.gelu(x + b). float32 and float64, CPU and CUDA, differentiable in x and b.");
  op.impl_cpu(&forward_cpu).backward_cpu(&backward_cpu);
#if defined(FBG_WITH_CUDA)
  op.impl_cuda(&forward_cuda).backward_cuda(&backward_cuda);
#endif
}

RT_PLUGIN_ENTRY(info) {
  info.id = "org.rustytorch.fused-bias-gelu";
  info.version = "1.0.0";
  info.self_test = &rt::plugin::sdk::guarded_self_test<&self_test>;
}
