#include "rt/tensor.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "autograd/autograd_meta.h"
#include "cuda/backend.h"
#include "memory/tensor_block.h"
#include "rt/autograd/engine.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt {

TensorImpl::TensorImpl() = default;
TensorImpl::~TensorImpl() = default;

AutogradMeta& TensorImpl::autograd_meta() {
  if (!autograd) autograd = std::make_unique<AutogradMeta>();
  return *autograd;
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

// Sizes whose element count does not fit in int64 would wrap around to a small or negative numel and index
// out of bounds later (and the multiplication itself is undefined behaviour): refused here.
int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      throw ValueError("tensor of shape " + format_shape(shape) + " has more elements than fit in int64; "
                       "check the sizes passed to the op");
  return n;
}

namespace {
// Also the byte count must fit, where tensors are made.
void check_numel_fits(const Shape& shape, size_t element_bytes) {
  const int64_t n = numel_of(shape);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, int64_t(element_bytes), &bytes))
    throw ValueError("tensor of shape " + format_shape(shape) + " needs more bytes than fit in int64");
}
}  // namespace

Tensor make_tensor(const Shape& shape, ScalarType dtype, Device device) {
  return make_tensor(shape, dtype, device.is_cpu() ? cpu_allocator() : cuda::detail::device_allocator(device.index));
}

Tensor make_tensor(const Shape& shape, ScalarType dtype, Allocator* allocator) {
  for (int64_t s : shape)
    if (s < 0) throw ValueError("cannot create a tensor with negative size in shape " + format_shape(shape));
  check_numel_fits(shape, element_size(dtype));
  if (!allocator) allocator = cpu_allocator();
  // Note [One allocation per tensor] (memory/tensor_block.h).
  detail::TensorBlock::Ref block = detail::TensorBlock::create();
  auto storage = std::allocate_shared<StorageImpl>(detail::BlockAllocator<StorageImpl>(block.get()));
  storage->nbytes = size_t(numel_of(shape)) * element_size(dtype);
  storage->data = allocator->allocate(storage->nbytes);
  storage->device = allocator->device();
  storage->allocator = allocator;
  auto impl = std::allocate_shared<TensorImpl>(detail::BlockAllocator<TensorImpl>(block.get()));
  impl->storage = Storage(std::move(storage));
  impl->sizes = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor scalar_to_tensor(const Scalar& s) {
  Tensor t = make_tensor({}, s.type());
  if (s.is_floating()) *t.data_ptr<double>() = s.to_double();
  else if (s.is_bool()) *t.data_ptr<bool>() = s.to_int() != 0;
  else *t.data_ptr<int64_t>() = s.to_int();
  t.impl().wrapped_number = true;
  return t;
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  check_numel_fits(sizes, 1);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->is_view = true;
  return Tensor(std::move(impl));
}

TensorImpl& Tensor::impl() const {
  if (!impl_) throw ValueError("this Tensor is undefined (default-constructed); assign a tensor to it first");
  return *impl_;
}

int64_t Tensor::size(int64_t d) const { return impl().sizes[size_t(wrap_dim(d, dim(), "size"))]; }
int64_t Tensor::stride(int64_t d) const { return impl().strides[size_t(wrap_dim(d, dim(), "stride"))]; }
int64_t Tensor::numel() const { return numel_of(impl().sizes); }

bool Tensor::is_contiguous() const {
  const auto& sz = impl().sizes;
  const auto& st = impl().strides;
  int64_t expected = 1;
  for (size_t i = sz.size(); i-- > 0;) {
    if (sz[i] == 1) continue;
    if (st[i] != expected) return false;
    expected *= sz[i];
  }
  return true;
}

namespace detail {
void throw_cpu_access(const Tensor& t) {
  const char* op = current_op_name();
  throw DeviceError(std::string(op && *op ? op : "this operation") + " has no " + (t.is_cuda() ? "CUDA" : "device") +
                    " implementation yet, and a " + format_shape(t.sizes()) + " input is on " + t.device().str() +
                    ". Move the tensors to the CPU with .cpu() for this step (docs/cuda.md lists the ops that run on CUDA)");
}
}  // namespace detail

void* Tensor::raw_data() const {
  if (!impl().storage.device().is_cpu()) [[unlikely]] detail::throw_cpu_access(*this);
  return static_cast<char*>(impl().storage.data()) + impl().offset * int64_t(element_size());
}

void* Tensor::device_data() const {
  return static_cast<char*>(impl().storage.data()) + impl().offset * int64_t(element_size());
}

Scalar Tensor::item() const {
  if (numel() != 1)
    throw ValueError("item: a Tensor with " + std::to_string(numel()) + " elements cannot be converted to a scalar");
  if (!device().is_cpu()) return cpu().item();
  return visit_dtype(dtype(), [&]<typename T>() -> Scalar {
    const T v = *static_cast<const T*>(raw_data());
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(int64_t(v));
    else return Scalar(double(compute_t<T>(v)));
  });
}

// ---- autograd accessors ------------------------------------------------------------------
bool Tensor::requires_grad() const {
  const auto& m = impl().autograd;
  return m && (m->requires_grad || m->grad_fn);
}

Tensor& Tensor::requires_grad_(bool r) {
  auto& m = impl().autograd_meta();
  if (m.grad_fn && !r)
    throw AutogradError("requires_grad_(false) is only allowed on leaf tensors; use detach() on a result of an op");
  if (r && !is_floating(dtype()))
    throw DTypeError("only floating point tensors can require gradients, got " + std::string(dtype_name(dtype())));
  m.requires_grad = r;
  return *this;
}

Tensor Tensor::grad() const {
  const auto& m = impl().autograd;
  return m ? m->grad : Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined() && g.sizes() != sizes())
    throw ShapeError("set_grad: gradient of shape " + format_shape(g.sizes()) + " does not match tensor shape " +
                     format_shape(sizes()));
  impl().autograd_meta().grad = g;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  const auto& m = impl().autograd;
  return m ? m->grad_fn : none;
}

bool Tensor::is_leaf() const { return !grad_fn(); }
uint32_t Tensor::output_nr() const { return impl().autograd ? impl().autograd->output_nr : 0; }

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this}, gradient.defined() ? TensorList{gradient} : TensorList{}, retain_graph);
}

Tensor Tensor::detach() const { return rt::detach(*this); }

Tensor& Tensor::detach_() {
  if (impl().is_view && requires_grad())
    throw AutogradError("detach_: cannot detach a view in place; use detach() instead");
  if (auto& m = impl().autograd) {
    m->grad_fn.reset();
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

void Tensor::retain_grad() const {
  if (!requires_grad()) throw AutogradError("retain_grad: cannot retain the gradient of a tensor that does not require grad");
  auto& m = impl().autograd_meta();
  if (is_leaf() || m.retains_grad) return;
  m.retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  register_hook([weak](const Tensor& g) {
    if (auto p = weak.lock()) {
      auto& meta = p->autograd_meta();
      if (!meta.grad.defined()) meta.grad = g.clone();
      else meta.grad = meta.grad + g;
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const { return impl().autograd && impl().autograd->retains_grad; }

// ---- repr -------------------------------------------------------------------------------
namespace {
void format_elements(std::ostringstream& os, const Tensor& c, int64_t dim, int64_t offset, bool is_float, int indent) {
  const int64_t n = c.size(dim);
  const int64_t stride = c.stride(dim);
  const bool summarize = c.numel() > 1000 && n > 6;
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && i == 3) {
      os << "...";
      i = n - 3;
      os << (dim + 1 == c.dim() ? ", " : ",\n" + std::string(size_t(indent + 1), ' '));
    }
    if (dim + 1 == c.dim()) {
      const double v = c.data_ptr<double>()[offset + i * stride];
      char buf[64];
      if (c.dtype() == kBool) std::snprintf(buf, sizeof buf, "%s", v != 0 ? "True" : "False");
      else if (!is_float) std::snprintf(buf, sizeof buf, "%lld", (long long)v);
      else if (std::isnan(v)) std::snprintf(buf, sizeof buf, "nan");
      else if (std::isinf(v)) std::snprintf(buf, sizeof buf, "%sinf", v < 0 ? "-" : "");
      else std::snprintf(buf, sizeof buf, "%.4f", v);
      os << buf;
    } else {
      format_elements(os, c, dim + 1, offset + i * stride, is_float, indent + 1);
    }
    if (i + 1 < n) os << (dim + 1 == c.dim() ? ", " : ",\n" + std::string(size_t(indent + 1), ' '));
  }
  os << ']';
}
}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream os;
  os << "tensor(";
  Tensor c = cpu().to(kFloat64).contiguous();
  if (dim() == 0) {
    const double v = *c.data_ptr<double>();
    char buf[64];
    if (dtype() == kBool) std::snprintf(buf, sizeof buf, "%s", v != 0 ? "True" : "False");
    else if (!is_floating_point()) std::snprintf(buf, sizeof buf, "%lld", (long long)v);
    else std::snprintf(buf, sizeof buf, "%.4f", v);
    os << buf;
  } else {
    format_elements(os, c, 0, 0, is_floating_point(), 7);
  }
  if (!device().is_cpu()) os << ", device='" << device().str() << "'";
  if (dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool) os << ", dtype=" << dtype_name(dtype());
  if (grad_fn()) os << ", grad_fn=<" << grad_fn()->name() << ">";
  else if (requires_grad()) os << ", requires_grad=True";
  os << ')';
  return os.str();
}

}  // namespace rt
