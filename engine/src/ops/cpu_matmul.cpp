// dispatch::matmul's CPU kernel: kernels/cpu/gemm.h's batched GEMM on views, after dense copies of
// the operands BLAS cannot read in place and, for float16/bfloat16, a float32 round trip. The
// copies and the float32 buffers are engine tensors (their memory shows in profiles as the
// matmul's); no engine op runs inside.
#include "cpu/gemm.h"
#include "dispatch_stubs.h"
#include "ops/cpu_view.h"
#include "rt/cancel.h"

namespace rt {
namespace {

// A dense copy of t in dtype dt; batch dims with stride 0 stay broadcast (not materialised).
Tensor compact_copy(const Tensor& t, ScalarType dt) {
  const int64_t nd = t.dim();
  Shape core = t.sizes();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.stride(d) == 0) core[size_t(d)] = 1;
  cpu::TensorView src = cpu_view(t);
  for (int64_t d = 0; d < nd - 2; ++d) src.sizes[d] = core[size_t(d)];
  Tensor dst = make_tensor(core, dt);
  cpu::copy_kernel(cpu_view(dst), src);
  Shape st = dst.strides();
  for (int64_t d = 0; d < nd - 2; ++d)
    if (t.stride(d) == 0) st[size_t(d)] = 0;
  return make_view(dst, t.sizes(), st, 0);
}

// t as BLAS can read it in dtype dt: itself when it can, else a dense copy.
Tensor blas_operand(const Tensor& t, ScalarType dt) {
  return t.dtype() == dt && cpu::matrix_layout(cpu_view(t)).ok ? t : compact_copy(t, dt);
}

bool poll_cancel(const void* token) { return static_cast<const CancelToken*>(token)->requested(); }

void cpu_matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  if (out.numel() == 0) return;
  const ScalarType dt = out.dtype();
  if (dt == kFloat16 || dt == kBFloat16) {
    Tensor o32 = make_tensor(out.sizes(), kFloat32);
    if (beta != 0.0) cpu::copy_kernel(cpu_view(o32), cpu_view(out));
    cpu_matmul(o32, compact_copy(a, kFloat32), compact_copy(b, kFloat32), alpha, beta);
    cpu::copy_kernel(cpu_view(out), cpu_view(o32));
    return;
  }
  const Tensor ad = blas_operand(a, dt), bd = blas_operand(b, dt);
  const CancelToken cancel = CancelToken::current();  // the kernel's OpenMP workers poll the caller's request
  cpu::batched_matmul(cpu_view(out), cpu_view(ad), cpu_view(bd), alpha, beta, cpu::StopRequest{poll_cancel, &cancel});
  check_cancel();
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::matmul, DeviceType::CPU, cpu_matmul);

}  // namespace rt
