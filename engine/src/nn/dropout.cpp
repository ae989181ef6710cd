#include "rt/nn/dropout.h"

#include "repr.h"
#include "rt/ops/nn_functional.h"

namespace rt::nn {

Dropout::Dropout(double prob) : Module("Dropout"), p(prob) {
  if (!(p >= 0.0 && p <= 1.0))
    throw ValueError("Dropout: dropout probability has to be between 0 and 1, but got " + detail::py_float(p));
}

Tensor Dropout::forward(const Tensor& x) { return rt::dropout(x, p, is_training()); }

std::string Dropout::extra_repr() const { return "p=" + detail::py_float(p) + ", inplace=False"; }

}  // namespace rt::nn
