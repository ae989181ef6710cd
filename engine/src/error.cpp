#include "rt/error.h"

#include "rt/op_observer.h"

namespace rt {

std::string format_shape(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string module_context() {
  std::string m = current_module_path();
  return m.empty() ? std::string() : " (in module '" + m + "')";
}

void throw_shape_error(const std::string& op, const std::string& what, const std::string& hint) {
  std::string msg = op + ": " + what + module_context() + ".";
  if (!hint.empty()) msg += " Hint: " + hint;
  throw ShapeError(msg);
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = ndim == 0 ? 1 : ndim;  // a 0-dim tensor accepts dim 0 and -1, like PyTorch
  if (dim < -n || dim >= n)
    throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(ndim) + "-d tensor (expected a value in [" + std::to_string(-n) + ", " +
                     std::to_string(n - 1) + "])" + module_context());
  return dim < 0 ? dim + n : dim;
}

}  // namespace rt
