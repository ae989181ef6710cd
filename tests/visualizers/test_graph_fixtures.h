// Hand-built GraphSnapshots for the graph view model's tests and bench/viz_graph: chains, diamonds,
// an MLP with modules and a transformer-like graph with nested module paths, wired as autograd wires
// them (an edge goes from the consuming node to the producing one).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rt/autograd/graph_snapshot.h"

namespace rt::viz::fixtures {

class SnapshotBuilder {
 public:
  // A backward node for a forward op; `inputs` are the nodes that produced its differentiable inputs.
  uint64_t op(const std::string& name, const std::string& forward_op, const std::string& module, Shape out,
              const std::vector<uint64_t>& inputs = {}) {
    autograd::GraphNodeInfo n;
    n.id = next_id_;
    next_id_ += 16;
    n.name = name;
    n.sequence_nr = seq_++;
    n.forward_op = forward_op;
    n.module = module;
    n.output_shapes = {out};
    nodes_.push_back(n);
    for (uint64_t in : inputs) edges_.push_back({n.id, in, 0, shape_of(in)});
    return n.id;
  }
  uint64_t leaf(const std::string& module, Shape shape) {
    autograd::GraphNodeInfo n;
    n.id = next_id_;
    next_id_ += 16;
    n.name = "AccumulateGrad";
    n.sequence_nr = UINT64_MAX;
    n.module = module;
    n.is_leaf = true;
    n.leaf_shape = shape;
    leaves_.push_back(n);
    return n.id;
  }
  // Linear: AddmmBackward0 fed by x, TBackward0 <- weight leaf, and the bias leaf.
  uint64_t linear(const std::string& module, uint64_t x, int64_t in, int64_t out, int64_t rows = 8) {
    const uint64_t w = leaf(module, {out, in});
    const uint64_t t = op("TBackward0", "t", module, {in, out}, {w});
    const uint64_t b = leaf(module, {out});
    return op("AddmmBackward0", "linear", module, {rows, out}, {b, x, t});
  }
  autograd::GraphSnapshot build() const {
    autograd::GraphSnapshot s;
    s.nodes.assign(nodes_.rbegin(), nodes_.rend());  // sequence_nr descending, leaves last
    s.nodes.insert(s.nodes.end(), leaves_.begin(), leaves_.end());
    s.edges = edges_;
    return s;
  }

 private:
  Shape shape_of(uint64_t id) const {
    for (const auto& n : nodes_)
      if (n.id == id) return n.output_shapes.front();
    for (const auto& n : leaves_)
      if (n.id == id) return n.leaf_shape;
    return {};
  }
  uint64_t next_id_ = 0x1000;
  uint64_t seq_ = 100;
  std::vector<autograd::GraphNodeInfo> nodes_, leaves_;
  std::vector<autograd::GraphEdgeInfo> edges_;
};

// n ops in a row at the top level: op0 <- op1 <- ... (op0 first in forward order).
inline autograd::GraphSnapshot chain(int n) {
  SnapshotBuilder b;
  uint64_t prev = b.leaf("", {4});
  for (int i = 0; i < n; ++i) prev = b.op("Op" + std::to_string(i) + "Backward0", "op" + std::to_string(i), "", {4}, {prev});
  return b.build();
}

// x -> a, x -> b, (a, b) -> add: the classic diamond.
inline autograd::GraphSnapshot diamond() {
  SnapshotBuilder b;
  const uint64_t x = b.leaf("", {3, 3});
  const uint64_t e = b.op("ExpBackward0", "exp", "", {3, 3}, {x});
  const uint64_t l = b.op("SinBackward0", "sin", "", {3, 3}, {e});
  const uint64_t r = b.op("CosBackward0", "cos", "", {3, 3}, {e});
  const uint64_t s = b.op("AddBackward0", "add", "", {3, 3}, {l, r});
  b.op("SumBackward0", "sum", "", {}, {s});
  return b.build();
}

// Sequential(fc1, relu, fc2) under "net", then cross entropy at the top level.
inline autograd::GraphSnapshot mlp() {
  SnapshotBuilder b;
  const uint64_t x = b.leaf("", {8, 64});
  uint64_t h = b.linear("net.fc1", x, 64, 128);
  h = b.op("ReluBackward0", "relu", "net.act", {8, 128}, {h});
  h = b.linear("net.fc2", h, 128, 10);
  h = b.op("LogSoftmaxBackward0", "log_softmax", "", {8, 10}, {h});
  b.op("NllLossBackward0", "nll_loss", "", {}, {h});
  return b.build();
}

// A GPT-like graph: embeddings, `blocks` blocks "blocks.<b>" with ln1, attention ("attn" with q/k/v/proj
// linears and `heads` modules "attn.heads.<h>" of 9 ops each), ln2, an MLP, residual adds; then ln_f,
// head and the loss. 4 blocks of 5 heads give 330 nodes; 4 blocks of 51 heads 1,986.
inline autograd::GraphSnapshot transformer(int blocks, int heads, int64_t d = 64, int64_t t = 32) {
  SnapshotBuilder b;
  auto norm = [&](const std::string& m, uint64_t x) {
    const uint64_t w = b.leaf(m, {d}), bias = b.leaf(m, {d});
    return b.op("NativeLayerNormBackward0", "layer_norm", m, {t, d}, {x, w, bias});
  };
  const uint64_t tok = b.op("EmbeddingBackward0", "embedding", "tok_emb", {t, d}, {b.leaf("tok_emb", {65, d})});
  const uint64_t pos = b.op("EmbeddingBackward0", "embedding", "pos_emb", {t, d}, {b.leaf("pos_emb", {t, d})});
  uint64_t x = b.op("AddBackward0", "add", "", {t, d}, {tok, pos});
  for (int k = 0; k < blocks; ++k) {
    const std::string blk = "blocks." + std::to_string(k);
    const uint64_t a_in = norm(blk + ".ln1", x);
    const std::string at = blk + ".attn";
    const uint64_t q = b.linear(at + ".q", a_in, d, d, t), kk = b.linear(at + ".k", a_in, d, d, t),
                   v = b.linear(at + ".v", a_in, d, d, t);
    std::vector<uint64_t> outs;
    for (int h = 0; h < heads; ++h) {
      const std::string hm = at + ".heads." + std::to_string(h);
      const int64_t hd = std::max<int64_t>(1, d / heads);
      const uint64_t qh = b.op("SliceBackward0", "slice", hm, {t, hd}, {q});
      const uint64_t kh = b.op("SliceBackward0", "slice", hm, {t, hd}, {kk});
      const uint64_t vh = b.op("SliceBackward0", "slice", hm, {t, hd}, {v});
      const uint64_t kt = b.op("TransposeBackward0", "transpose", hm, {hd, t}, {kh});
      uint64_t s = b.op("MmBackward0", "matmul", hm, {t, t}, {qh, kt});
      s = b.op("DivBackward0", "div", hm, {t, t}, {s});
      s = b.op("MaskedFillBackward0", "masked_fill", hm, {t, t}, {s});
      s = b.op("SoftmaxBackward0", "softmax", hm, {t, t}, {s});
      outs.push_back(b.op("MmBackward0", "matmul", hm, {t, hd}, {s, vh}));
    }
    const uint64_t cat = b.op("CatBackward0", "cat", at, {t, d}, outs);
    const uint64_t proj = b.linear(at + ".proj", cat, d, d, t);
    x = b.op("AddBackward0", "add", blk, {t, d}, {x, proj});
    const uint64_t m_in = norm(blk + ".ln2", x);
    uint64_t m = b.linear(blk + ".mlp.fc1", m_in, d, 4 * d, t);
    m = b.op("GeluBackward0", "gelu", blk + ".mlp", {t, 4 * d}, {m});
    m = b.linear(blk + ".mlp.fc2", m, 4 * d, d, t);
    x = b.op("AddBackward0", "add", blk, {t, d}, {x, m});
  }
  x = norm("ln_f", x);
  x = b.linear("head", x, d, 65, t);
  x = b.op("LogSoftmaxBackward0", "log_softmax", "", {t, 65}, {x});
  b.op("NllLossBackward0", "nll_loss", "", {}, {x});
  return b.build();
}

}  // namespace rt::viz::fixtures
