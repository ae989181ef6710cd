#include "rt/autograd/function.h"

#include <cxxabi.h>

#include <cstdlib>

namespace rt::autograd {

TensorList AutogradContext::get_saved_variables() const {
  TensorList out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_) out.push_back(s.unpack());
  return out;
}

namespace detail {

std::string custom_function_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && d ? d : mangled;
  std::free(d);
  // Drop the namespaces (those before any template arguments): ns::ScaledTanh -> ScaledTanh.
  const size_t args = name.find('<');
  const size_t colon = name.rfind("::", args);
  if (colon != std::string::npos) name = name.substr(colon + 2);
  return name;
}

bool contains(const TensorList& list, const Tensor& t) {
  if (!t.defined()) return false;
  for (const Tensor& x : list)
    if (x.is_same(t)) return true;
  return false;
}

TensorList tensor_argument_grads(const std::string& node, TensorList grads, const std::vector<bool>& arg_is_tensor) {
  const size_t n = arg_is_tensor.size();
  if (grads.size() < n)
    throw AutogradError("function " + node + " returned an incorrect number of gradients (expected " +
                        std::to_string(n) + ", got " + std::to_string(grads.size()) + ")");
  for (size_t i = n; i < grads.size(); ++i)
    if (grads[i].defined())
      throw AutogradError("function " + node + " returned an incorrect number of gradients (expected " +
                          std::to_string(n) + ", got " + std::to_string(grads.size()) + ")");
  TensorList out;
  for (size_t i = 0; i < n; ++i) {
    if (arg_is_tensor[i]) {
      out.push_back(std::move(grads[i]));
    } else if (grads[i].defined()) {
      throw AutogradError("function " + node + " returned a gradient different than None at position " +
                          std::to_string(i + 1) + ", but the corresponding forward input was not a Variable");
    }
  }
  return out;
}

}  // namespace detail
}  // namespace rt::autograd
