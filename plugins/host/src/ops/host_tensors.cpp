#include "ops/host_tensors.h"

#include <fmt/format.h>

#include <new>
#include <vector>

#include "rt/error.h"

namespace rt::plugin {
namespace {

RtStatus fail(RtError* error, RtStatus status, const std::string& message) {
  return rt_error_set(error, status, message.c_str());
}

// Runs `f`, turning any exception into an RtStatus: nothing the engine throws reaches the plugin.
template <typename F>
RtStatus guarded(const char* what, RtError* error, F&& f) noexcept {
  try {
    f();
    return RT_STATUS_OK;
  } catch (const rt::OutOfMemoryError& e) {
    return fail(error, RT_STATUS_OUT_OF_MEMORY, fmt::format("{}: {}", what, e.what()));
  } catch (const std::bad_alloc&) {
    return fail(error, RT_STATUS_OUT_OF_MEMORY, fmt::format("{}: out of host memory", what));
  } catch (const rt::DTypeError& e) {
    return fail(error, RT_STATUS_INVALID_ARGUMENT, fmt::format("{}: {}", what, e.what()));
  } catch (const rt::DeviceError& e) {
    return fail(error, RT_STATUS_INVALID_ARGUMENT, fmt::format("{}: {}", what, e.what()));
  } catch (const rt::ValueError& e) {
    return fail(error, RT_STATUS_INVALID_ARGUMENT, fmt::format("{}: {}", what, e.what()));
  } catch (const std::exception& e) {
    return fail(error, RT_STATUS_ERROR, fmt::format("{}: {}", what, e.what()));
  } catch (...) {
    return fail(error, RT_STATUS_ERROR, fmt::format("{}: unknown error", what));
  }
}

int64_t tensor_dim(const RtTensor* t) { return t ? t->tensor.dim() : 0; }
const int64_t* tensor_sizes(const RtTensor* t) { return t ? t->tensor.sizes().data() : nullptr; }
const int64_t* tensor_strides(const RtTensor* t) { return t ? t->tensor.strides().data() : nullptr; }
int64_t tensor_numel(const RtTensor* t) { return t ? t->tensor.numel() : 0; }
int32_t tensor_dtype(const RtTensor* t) { return t ? int32_t(to_rt_dtype(t->tensor.dtype())) : -1; }
RtDevice tensor_device(const RtTensor* t) { return t ? to_rt_device(t->tensor.device()) : RtDevice{-1, -1}; }
void* tensor_data(const RtTensor* t) {
  if (!t || t->tensor.numel() == 0) return nullptr;
  return t->tensor.device_data();
}

RtStatus tensor_empty(int64_t dim, const int64_t* sizes, int32_t dtype, RtDevice device, RtTensor** out,
                      RtError* error) {
  if (!out) return fail(error, RT_STATUS_INVALID_ARGUMENT, "tensor_empty: `out` is NULL");
  *out = nullptr;
  if (dim < 0 || (dim > 0 && !sizes))
    return fail(error, RT_STATUS_INVALID_ARGUMENT, fmt::format("tensor_empty: dim {} with sizes {}", dim,
                                                               sizes ? "given" : "NULL"));
  return guarded("tensor_empty", error, [&] {
    Shape shape(sizes, sizes + dim);
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0) throw rt::ValueError(fmt::format("size {} of dimension {} is negative", shape[i], i));
    *out = new_tensor_handle(rt::make_tensor(shape, from_rt_dtype(dtype), from_rt_device(device)));
  });
}

RtStatus tensor_contiguous(const RtTensor* t, RtTensor** out, RtError* error) {
  if (!out) return fail(error, RT_STATUS_INVALID_ARGUMENT, "tensor_contiguous: `out` is NULL");
  *out = nullptr;
  if (!t) return fail(error, RT_STATUS_INVALID_ARGUMENT, "tensor_contiguous: the tensor is NULL");
  return guarded("tensor_contiguous", error, [&] {
    rt::Tensor c = t->tensor.is_contiguous() ? t->tensor : t->tensor.detach().contiguous();
    *out = new_tensor_handle(c);
  });
}

void tensor_release(RtTensor* t) { delete t; }

}  // namespace

RtTensor* new_tensor_handle(const rt::Tensor& t) { return new RtTensor{t}; }

rt::Tensor take_tensor_handle(RtTensor* handle) {
  TensorHandle owned(handle);
  return owned ? std::move(owned->tensor) : rt::Tensor();
}

void fill_tensor_functions(RtHostApi& api) {
  api.tensor_dim = &tensor_dim;
  api.tensor_sizes = &tensor_sizes;
  api.tensor_strides = &tensor_strides;
  api.tensor_numel = &tensor_numel;
  api.tensor_dtype = &tensor_dtype;
  api.tensor_device = &tensor_device;
  api.tensor_data = &tensor_data;
  api.tensor_empty = &tensor_empty;
  api.tensor_contiguous = &tensor_contiguous;
  api.tensor_release = &tensor_release;
}

RtDType to_rt_dtype(ScalarType t) {
  switch (t) {
    case kBool: return RT_DTYPE_BOOL;
    case kUInt8: return RT_DTYPE_UINT8;
    case kInt32: return RT_DTYPE_INT32;
    case kInt64: return RT_DTYPE_INT64;
    case kFloat16: return RT_DTYPE_FLOAT16;
    case kBFloat16: return RT_DTYPE_BFLOAT16;
    case kFloat32: return RT_DTYPE_FLOAT32;
    case kFloat64: return RT_DTYPE_FLOAT64;
  }
  throw rt::DTypeError(fmt::format("plugin host: dtype {} has no RtDType", int(t)));
}

ScalarType from_rt_dtype(int32_t t) {
  switch (t) {
    case RT_DTYPE_BOOL: return kBool;
    case RT_DTYPE_UINT8: return kUInt8;
    case RT_DTYPE_INT32: return kInt32;
    case RT_DTYPE_INT64: return kInt64;
    case RT_DTYPE_FLOAT16: return kFloat16;
    case RT_DTYPE_BFLOAT16: return kBFloat16;
    case RT_DTYPE_FLOAT32: return kFloat32;
    case RT_DTYPE_FLOAT64: return kFloat64;
    default: throw rt::DTypeError(fmt::format("RtDType {} is not one abi.h defines (0 to 7)", t));
  }
}

RtDevice to_rt_device(const Device& d) {
  return d.is_cpu() ? RtDevice{RT_DEVICE_CPU, 0} : RtDevice{RT_DEVICE_CUDA, int32_t(d.index)};
}

Device from_rt_device(const RtDevice& d) {
  if (d.type == RT_DEVICE_CPU) return Device::cpu();
  if (d.type == RT_DEVICE_CUDA) {
    if (d.index < 0) throw rt::DeviceError(fmt::format("RtDevice cuda:{} has a negative index", d.index));
    return Device::cuda(d.index);
  }
  throw rt::DeviceError(fmt::format("RtDevice type {} is not one abi.h defines (RT_DEVICE_CPU, RT_DEVICE_CUDA)",
                                    d.type));
}

}  // namespace rt::plugin
