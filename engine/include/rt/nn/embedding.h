// rt/nn/embedding.h — a lookup table of vectors (torch.nn.Embedding).
//
//   rt::nn::Embedding emb(10000, 256, {.padding_idx = 0});
//   rt::Tensor ids = rt::tensor({5, 0, 42}, {1, 3});      // int64 indices
//   rt::Tensor v = emb(ids);                               // [1, 3, 256]; row 0 is zeros
//
// weight [num_embeddings, embedding_dim] ~ N(0, 1); the padding_idx row is zeroed and gets no
// gradient. A negative padding_idx counts from the end (-1 is the last row); it must lie in
// [-num_embeddings, num_embeddings) (ValueError).
#pragma once
#include <optional>

#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

struct EmbeddingOptions {
  std::optional<int64_t> padding_idx = std::nullopt;
};

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, const EmbeddingOptions& options = {});
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;  // "10000, 256, padding_idx=0"
  void reset_parameters();

  const int64_t num_embeddings, embedding_dim;
  const std::optional<int64_t> padding_idx;  // normalised to [0, num_embeddings)
  Tensor weight;
};

}  // namespace rt::nn

RT_API_END
