#include "rt/nn/embedding.h"

#include "rt/autograd/grad_mode.h"
#include "rt/nn/init.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/view.h"

namespace rt::nn {

namespace {

std::optional<int64_t> normalise_padding(std::optional<int64_t> idx, int64_t n) {
  if (!idx) return std::nullopt;
  if (*idx < -n || *idx >= n)
    throw ValueError("Embedding: padding_idx must be within num_embeddings: got " + std::to_string(*idx) +
                     " for num_embeddings=" + std::to_string(n));
  return *idx < 0 ? *idx + n : *idx;
}

}  // namespace

Embedding::Embedding(int64_t n, int64_t dim, const EmbeddingOptions& o)
    : Module("Embedding"), num_embeddings(n), embedding_dim(dim), padding_idx(normalise_padding(o.padding_idx, n)) {
  if (n < 0 || dim < 0)
    throw ValueError("Embedding: num_embeddings and embedding_dim must be non-negative, got " + std::to_string(n) +
                     " and " + std::to_string(dim));
  weight = register_parameter("weight", empty_parameter({n, dim}));
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard ng;
    weight.select(0, *padding_idx).fill_(0);
  }
}

Tensor Embedding::forward(const Tensor& indices) {
  if (is_floating(indices.dtype()) || indices.dtype() == kBool)
    throw DTypeError("Embedding: expected integer indices (int64 or int32), got " +
                     std::string(dtype_name(indices.dtype())) + module_context());
  return rt::embedding(weight, indices, padding_idx.value_or(-1));
}

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
  return s;
}

}  // namespace rt::nn
