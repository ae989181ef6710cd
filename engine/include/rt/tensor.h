// rt/tensor.h — the Tensor handle: a strided view over shared storage.
//
//   #include "rt/rt.h"
//   rt::Tensor x = rt::randn({64, 784});                 // float32 on the CPU
//   rt::Tensor w = rt::zeros({784, 10}).requires_grad_();
//   rt::Tensor y = x.matmul(w).relu().sum();
//   y.backward();                                         // w.grad() is now [784, 10]
//   rt::Tensor v = x.view({64, 28, 28}).transpose(1, 2);  // views share x's storage
//
// A Tensor is a cheap, shared handle (like torch::Tensor): copying it aliases the same
// TensorImpl. Methods are thin wrappers over the free functions in rt/ops/*.h, which are
// defined inline there; include "rt/rt.h" to get them all.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rt/device.h"
#include "rt/dtype.h"
#include "rt/error.h"
#include "rt/export.h"
#include "rt/scalar.h"
#include "rt/shape.h"
#include "rt/storage.h"

RT_API_BEGIN

namespace rt {

class Tensor;
using TensorList = std::vector<Tensor>;

namespace autograd {
class Node;
}

// dtype, device and requires_grad for factories:  rt::zeros({3}, rt::TensorOptions(rt::kInt64))
struct TensorOptions {
  ScalarType dtype = kFloat32;
  Device device = Device::cpu();
  bool requires_grad = false;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype(t) {}  // NOLINT: `rt::zeros({2}, rt::kInt64)`
  TensorOptions& with_dtype(ScalarType t) { dtype = t; return *this; }
  TensorOptions& with_device(Device d) { device = d; return *this; }
  TensorOptions& with_requires_grad(bool r = true) { requires_grad = r; return *this; }
};

struct AutogradMeta;

struct TensorImpl {
  Storage storage;
  Shape sizes;
  Shape strides;           // in elements
  int64_t offset = 0;      // in elements
  ScalarType dtype = kFloat32;
  bool is_view = false;    // shares storage with the tensor it was made from
  bool wrapped_number = false;  // made from a Scalar: lower priority in promotion
  std::unique_ptr<AutogradMeta> autograd;  // null until autograd state is needed

  TensorImpl();
  ~TensorImpl();
  AutogradMeta& autograd_meta();  // creates it on first use
};

// Gradient hook: receives the gradient, returns a replacement or an undefined Tensor to keep it.
using GradHook = std::function<Tensor(const Tensor&)>;

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata -------------------------------------------------------------------------
  bool defined() const { return bool(impl_); }
  int64_t dim() const { return int64_t(impl().sizes.size()); }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& shape() const { return impl().sizes; }
  int64_t size(int64_t d) const;    // negative d counts from the end
  const Shape& strides() const { return impl().strides; }
  int64_t stride(int64_t d) const;
  int64_t numel() const;
  ScalarType dtype() const { return impl().dtype; }
  ScalarType scalar_type() const { return impl().dtype; }
  Device device() const { return impl().storage.device(); }
  size_t element_size() const { return rt::element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  int64_t storage_offset() const { return impl().offset; }
  const Storage& storage() const { return impl().storage; }
  bool is_contiguous() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  std::string str() const;   // PyTorch-like repr: "tensor([[1., 2.]], requires_grad=True)"
  TensorImpl& impl() const;  // throws ValueError on an undefined tensor
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // Raw element access for CPU code. data_ptr<T>() checks that T matches dtype(); both throw
  // DeviceError for a tensor on a GPU (CPU code reading device memory would crash), naming
  // the op when someone observes ops (rt/op_observer.h): a CPU kernel handed a GPU tensor fails there, clearly.
  void* raw_data() const;
  // Address of element 0 on whatever device holds it, unchecked: for device kernels.
  void* device_data() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  template <typename T> T* data_ptr() const;
  // Value of a one-element tensor, converted to T.
  template <typename T> T item() const;
  Scalar item() const;
  // All elements in row-major order, converted to T.
  template <typename T> std::vector<T> to_vector() const;

  // ---- autograd (rt/autograd/*.h) --------------------------------------------------------
  bool requires_grad() const;
  Tensor& requires_grad_(bool r = true);  // leaves only; returns *this
  Tensor grad() const;                    // undefined until backward reaches this leaf
  void set_grad(const Tensor& g) const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  void backward(const Tensor& gradient = {}, bool retain_graph = false) const;
  Tensor detach() const;                  // shares storage and version, no history
  Tensor& detach_();
  void retain_grad() const;               // keep .grad on a non-leaf
  bool retains_grad() const;
  // Hook on this tensor's gradient; returns a handle for remove_hook.
  size_t register_hook(GradHook hook) const;
  void remove_hook(size_t handle) const;
  uint32_t version() const { return impl().storage.version(); }
  void bump_version() const { impl().storage.bump_version(); }

  // ---- views (rt/ops/view.h) ------------------------------------------------------------
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor permute(const Shape& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& o) const;
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;
  Tensor slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1) const;
  Tensor select(int64_t d, int64_t index) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t d, const Shape& sizes) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(ScalarType dtype) const;
  Tensor to(Device device) const;      // copies across devices; same device: *this
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }
  Tensor cpu() const { return to(Device::cpu()); }

  // ---- in-place basics (rt/ops/elementwise.h) -------------------------------------------
  Tensor& copy_(const Tensor& src);
  Tensor& fill_(const Scalar& v);
  Tensor& zero_();

  // ---- elementwise (rt/ops/elementwise.h) -----------------------------------------------
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& o);
  Tensor& div_(const Tensor& o);
  Tensor& add_(const Scalar& o);
  Tensor& sub_(const Scalar& o);
  Tensor& mul_(const Scalar& o);
  Tensor& div_(const Scalar& o);
  Tensor remainder(const Tensor& o) const;  // Python's % (operator%)
  Tensor remainder(const Scalar& o) const;
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(const Scalar& o) const;
  Tensor floor_divide(const Tensor& o) const;  // Python's //
  Tensor floor_divide(const Scalar& o) const;
  Tensor& remainder_(const Tensor& o);
  Tensor& remainder_(const Scalar& o);
  Tensor& fmod_(const Tensor& o);
  Tensor& fmod_(const Scalar& o);
  Tensor& floor_divide_(const Tensor& o);
  Tensor& floor_divide_(const Scalar& o);
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor& neg_();
  Tensor& abs_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& tanh_();
  Tensor& sigmoid_();
  Tensor& relu_();
  Tensor& pow_(const Scalar& exponent);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);

  // ---- reductions (rt/ops/reduce.h); empty dims = all dims ------------------------------
  Tensor sum(const Shape& dims = {}, bool keepdim = false) const;
  Tensor mean(const Shape& dims = {}, bool keepdim = false) const;
  Tensor prod(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // values, indices
  std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const Shape& dims = {}, bool keepdim = false) const;
  Tensor amin(const Shape& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const Shape& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(const Shape& dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2, const Shape& dims = {}, bool keepdim = false) const;
  Tensor logsumexp(const Shape& dims, bool keepdim = false) const;
  Tensor all(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor any(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;

  // ---- linear algebra (rt/ops/linalg.h) -------------------------------------------------
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;

  // ---- shape ops (rt/ops/shape.h) -------------------------------------------------------
  TensorList split(int64_t split_size, int64_t d = 0) const;
  TensorList split(const Shape& sizes, int64_t d = 0) const;
  TensorList chunk(int64_t chunks, int64_t d = 0) const;
  Tensor gather(int64_t d, const Tensor& index) const;
  Tensor scatter_add(int64_t d, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t d, const Tensor& index) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

  // ---- sorting and searching (rt/ops/sort.h); values, indices pairs -----------------------
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  Tensor msort() const;
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  std::pair<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;

  // ---- selection (rt/ops/select.h) --------------------------------------------------------
  Tensor nonzero() const;
  Tensor argwhere() const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor take(const Tensor& index) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;

  // ---- scans (rt/ops/scan.h) --------------------------------------------------------------
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::pair<Tensor, Tensor> cummax(int64_t dim) const;
  std::pair<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor logcumsumexp(int64_t dim) const;

  // ---- nn functional (rt/ops/nn_functional.h) -------------------------------------------
  Tensor softmax(int64_t d) const;
  Tensor log_softmax(int64_t d) const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Operators (+, -, *, / with tensors and scalars) are defined in rt/ops/elementwise.h.

// ---- construction helpers used by ops ----------------------------------------------------
// Contiguous strides for a shape.
Shape contiguous_strides(const Shape& shape);
int64_t numel_of(const Shape& shape);  // throws rt::ValueError when the count does not fit in int64
// A new, uninitialised, contiguous tensor (no autograd).
Tensor make_tensor(const Shape& shape, ScalarType dtype, Device device = Device::cpu());
// The same with memory from `allocator`, on its device (pinned host memory, say).
Tensor make_tensor(const Shape& shape, ScalarType dtype, Allocator* allocator);
// A 0-dim tensor holding `s`, marked as a wrapped number for promotion.
Tensor scalar_to_tensor(const Scalar& s);
// An alias of `base` with new geometry (no autograd; rt/ops/view.h records it).
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset);

namespace detail {
// Throws DeviceError: CPU code asked for the host address of `t`, which lives on a GPU.
[[noreturn]] void throw_cpu_access(const Tensor& t);
}  // namespace detail

// ---- template definitions ------------------------------------------------------------
template <typename T> T* Tensor::data_ptr() const {
  if (dtype_of_v<T> != dtype())
    throw DTypeError("data_ptr: tensor has dtype " + std::string(dtype_name(dtype())) +
                     " but was read as " + std::string(dtype_name(dtype_of_v<T>)));
  return static_cast<T*>(raw_data());
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  Tensor c = cpu().to(dtype_of_v<T>).contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

template <typename T> T Tensor::item() const {
  if (numel() != 1)
    throw ValueError("item: a Tensor with " + std::to_string(numel()) +
                     " elements cannot be converted to a scalar");
  return item().to<T>();
}

}  // namespace rt

RT_API_END
