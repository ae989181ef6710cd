// host_tensors.h — the tensors a plugin sees: RtTensor handles over engine tensors, and the host table's
// tensor functions (abi.h, RtHostApi) that read and make them.
//
//   RtHostApi api{};
//   rt::plugin::fill_tensor_functions(api);          // host_api() does this once
//   RtTensor* h = rt::plugin::new_tensor_handle(x);  // lent to a kernel, or handed over
//   rt::Tensor y = rt::plugin::take_tensor_handle(h); // the engine tensor; h is freed
//
// Ownership is abi.h's: a handle the host lends to a kernel (an argument, a saved tensor, an incoming gradient)
// stays the host's and is freed by the host after the call; a handle a plugin got from tensor_empty or
// tensor_contiguous is the plugin's until it calls tensor_release or returns it as a result (the host takes
// it back with take_tensor_handle). No exception crosses: the functions that can fail return an RtStatus with
// the message in RtError.
#pragma once
#include <memory>

#include "rt/dtype.h"
#include "rt/device.h"
#include "rt/plugin/abi.h"
#include "rt/tensor.h"

// The handle behind abi.h's opaque RtTensor.
struct RtTensor {
  rt::Tensor tensor;
};

namespace rt::plugin {

void fill_tensor_functions(RtHostApi& api);

RtTensor* new_tensor_handle(const rt::Tensor& t);
rt::Tensor take_tensor_handle(RtTensor* handle);  // frees the handle

// Frees handles the host lent (RAII over a call's handles).
struct TensorHandleDeleter {
  void operator()(RtTensor* h) const { delete h; }
};
using TensorHandle = std::unique_ptr<RtTensor, TensorHandleDeleter>;

RtDType to_rt_dtype(ScalarType t);
ScalarType from_rt_dtype(int32_t t);  // throws rt::DTypeError for a value abi.h does not define
RtDevice to_rt_device(const Device& d);
Device from_rt_device(const RtDevice& d);  // throws rt::DeviceError for an unknown type

}  // namespace rt::plugin
