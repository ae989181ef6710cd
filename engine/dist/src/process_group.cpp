#include "rt/dist/process_group.h"

#include <fmt/core.h>

#include <numeric>

#include "ledger/ledger_internal.h"
#include "rt/op_observer.h"

namespace rt::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "SUM";
    case ReduceOp::Avg: return "AVG";
    case ReduceOp::Product: return "PRODUCT";
    case ReduceOp::Min: return "MIN";
    case ReduceOp::Max: return "MAX";
  }
  return "?";
}

ProcessGroup::ProcessGroup(int rank, int size, ProcessGroupOptions options)
    : rank_(rank), size_(size), options_(std::move(options)) {
  if (size < 1) throw ValueError(fmt::format("process group '{}': size {} must be at least 1", options_.group_name, size));
  if (rank < 0 || rank >= size)
    throw ValueError(fmt::format("process group '{}': rank {} is outside 0..{}", options_.group_name, rank, size - 1));
  if (options_.timeout.count() <= 0)
    throw ValueError(fmt::format("process group '{}': the timeout must be positive, got {} ms", options_.group_name,
                                 options_.timeout.count()));
  global_ranks_ = options_.global_ranks;
  if (global_ranks_.empty()) {
    global_ranks_.resize(size_t(size));
    std::iota(global_ranks_.begin(), global_ranks_.end(), 0);
  } else if (int(global_ranks_.size()) != size) {
    throw ValueError(fmt::format("process group '{}': {} global ranks given for a group of {}", options_.group_name,
                                 global_ranks_.size(), size));
  }
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::record(Call& c, const char* op, const std::vector<const Tensor*>& tensors, int peer,
                          bool point_to_point) {
  if (ledger_group_ == 0) ledger_group_ = detail::ledger_group_id(group_name());
  detail::LedgerEntry e{op, c.seq, ledger_group_, point_to_point, peer, nullptr, 0, 0};
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    if (!e.first) e.first = t;
    e.numel += t->numel();
    e.shapes_hash = detail::hash_shape(e.shapes_hash, *t);
  }
  uint64_t fp = e.shapes_hash;
  for (const char* p = op; *p; ++p) fp = fp * 1099511628211ull ^ uint64_t(uint8_t(*p));
  c.fingerprint = fp ^ uint64_t(peer + 1) * 0x9e3779b97f4a7c15ull;
  c.ledger_id = detail::ledger_record(e);
  if (consistency_store_ && !point_to_point) check_consistency(c);
}

int ProcessGroup::global_rank(int group_rank) const {
  if (group_rank < 0 || group_rank >= size_)
    throw IndexError(fmt::format("process group '{}' has ranks 0..{}, not {}", group_name(), size_ - 1, group_rank));
  return global_ranks_[size_t(group_rank)];
}

int ProcessGroup::group_rank(int global_rank) const {
  for (int i = 0; i < size_; ++i)
    if (global_ranks_[size_t(i)] == global_rank) return i;
  return -1;
}

ProcessGroup::Call ProcessGroup::next_call(const char* collective, bool point_to_point) {
  Call c;
  c.seq = point_to_point ? ++p2p_sequence_ : ++sequence_;
  c.what = fmt::format("{} #{} in group '{}' ({}, {} ranks)", collective, c.seq, group_name(), backend_name(), size_);
  return c;
}

namespace {

// Checks one tensor argument of a collective; `what` names the collective, `arg` the argument.
void check_tensor(const ProcessGroup& pg, DeviceType device_type, const char* what, const char* arg, const Tensor& t) {
  if (!t.defined()) throw ValueError(fmt::format("{}: {} is an undefined tensor", what, arg));
  if (t.device().type != device_type) {
    const char* want = device_type == DeviceType::CPU ? "cpu" : "cuda";
    throw DeviceError(fmt::format(
        "{}: {} is on {}, but the '{}' backend of group '{}' works on {} tensors. Move it with .to('{}'), or use "
        "a backend for {} (gloo or mpi for cpu, nccl for cuda; init_process_group(backend=\"cpu:gloo,cuda:nccl\") "
        "picks by device)",
        what, arg, t.device().str(), pg.backend_name(), pg.group_name(), want, want, t.device().str()));
  }
  if (!t.is_contiguous())
    throw ValueError(fmt::format("{}: {} (shape {}, strides {}) is not contiguous; collectives write in place, so "
                                 "pass a contiguous tensor (x = x.contiguous(), and copy the result back)",
                                 what, arg, format_shape(t.sizes()), format_shape(t.strides())));
}

void check_same_dtype(const char* what, const char* arg, const Tensor& t, const Tensor& ref, const char* ref_name) {
  if (t.dtype() != ref.dtype())
    throw DTypeError(fmt::format("{}: {} is {} but {} is {}; a collective moves one dtype", what, arg,
                                 dtype_name(t.dtype()), ref_name, dtype_name(ref.dtype())));
}

void check_root(const ProcessGroup& pg, const char* what, const char* arg, int r) {
  if (r < 0 || r >= pg.size())
    throw ValueError(fmt::format("{}: {} {} is not a rank of group '{}' (ranks 0..{})", what, arg, r,
                                 pg.group_name(), pg.size() - 1));
}

void check_reduce_op(const char* what, const Tensor& t, ReduceOp op) {
  if (op == ReduceOp::Avg && !t.is_floating_point())
    throw DTypeError(fmt::format("{}: ReduceOp.AVG needs a floating-point tensor, got {}; use SUM and divide, or "
                                 "convert with .float()",
                                 what, dtype_name(t.dtype())));
}

}  // namespace

WorkPtr ProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  OpGuard guard("all_reduce", tensor);
  Call c = next_call("all_reduce");
  check_tensor(*this, device_type(), c.what.c_str(), "tensor", tensor);
  check_reduce_op(c.what.c_str(), tensor, op);
  record(c, "all_reduce", {&tensor}, -1);
  return run_all_reduce(c, tensor, op);
}

WorkPtr ProcessGroup::broadcast(const Tensor& tensor, int root) {
  OpGuard guard("broadcast", tensor);
  Call c = next_call("broadcast");
  check_tensor(*this, device_type(), c.what.c_str(), "tensor", tensor);
  check_root(*this, c.what.c_str(), "root", root);
  record(c, "broadcast", {&tensor}, root);
  return run_broadcast(c, tensor, root);
}

WorkPtr ProcessGroup::reduce(const Tensor& tensor, int root, ReduceOp op) {
  OpGuard guard("reduce", tensor);
  Call c = next_call("reduce");
  check_tensor(*this, device_type(), c.what.c_str(), "tensor", tensor);
  check_root(*this, c.what.c_str(), "root", root);
  check_reduce_op(c.what.c_str(), tensor, op);
  record(c, "reduce", {&tensor}, root);
  return run_reduce(c, tensor, root, op);
}

WorkPtr ProcessGroup::all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
  OpGuard guard("all_gather", input);
  Call c = next_call("all_gather");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "input", input);
  if (int(outputs.size()) != size())
    throw ValueError(fmt::format("{}: {} output tensors given, one per rank ({}) needed", what, outputs.size(), size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string arg = fmt::format("output[{}]", i);
    check_tensor(*this, device_type(), what, arg.c_str(), outputs[i]);
    check_same_dtype(what, arg.c_str(), outputs[i], input, "input");
    if (outputs[i].numel() != input.numel())
      throw ShapeError(fmt::format("{}: {} has {} elements (shape {}) but input has {} (shape {})", what, arg,
                                   outputs[i].numel(), format_shape(outputs[i].sizes()), input.numel(),
                                   format_shape(input.sizes())));
  }
  record(c, "all_gather", {&input}, -1);
  return run_all_gather(c, outputs, input);
}

WorkPtr ProcessGroup::all_gather_into_tensor(const Tensor& output, const Tensor& input) {
  OpGuard guard("all_gather_into_tensor", output, input);
  Call c = next_call("all_gather_into_tensor");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "input", input);
  check_tensor(*this, device_type(), what, "output", output);
  check_same_dtype(what, "output", output, input, "input");
  if (output.numel() != input.numel() * size())
    throw ShapeError(fmt::format("{}: output has {} elements (shape {}); it needs size * input.numel() = {} * {} = {}",
                                 what, output.numel(), format_shape(output.sizes()), size(), input.numel(),
                                 input.numel() * size()));
  record(c, "all_gather_into_tensor", {&input, &output}, -1);
  return run_all_gather_into_tensor(c, output, input);
}

WorkPtr ProcessGroup::reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op) {
  OpGuard guard("reduce_scatter_tensor", output, input);
  Call c = next_call("reduce_scatter_tensor");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "input", input);
  check_tensor(*this, device_type(), what, "output", output);
  check_same_dtype(what, "output", output, input, "input");
  check_reduce_op(what, input, op);
  if (input.numel() != output.numel() * size())
    throw ShapeError(fmt::format("{}: input has {} elements (shape {}); it needs size * output.numel() = {} * {} = {}",
                                 what, input.numel(), format_shape(input.sizes()), size(), output.numel(),
                                 output.numel() * size()));
  record(c, "reduce_scatter_tensor", {&input, &output}, -1);
  return run_reduce_scatter_tensor(c, output, input, op);
}

WorkPtr ProcessGroup::gather(const std::vector<Tensor>& outputs, const Tensor& input, int root) {
  OpGuard guard("gather", input);
  Call c = next_call("gather");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "input", input);
  check_root(*this, what, "dst", root);
  if (rank() == root) {
    if (int(outputs.size()) != size())
      throw ValueError(fmt::format("{}: the root needs one gather_list tensor per rank ({}), got {}", what, size(),
                                   outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string arg = fmt::format("gather_list[{}]", i);
      check_tensor(*this, device_type(), what, arg.c_str(), outputs[i]);
      check_same_dtype(what, arg.c_str(), outputs[i], input, "input");
      if (outputs[i].numel() != input.numel())
        throw ShapeError(fmt::format("{}: {} has {} elements but input has {}", what, arg, outputs[i].numel(),
                                     input.numel()));
    }
  } else if (!outputs.empty()) {
    throw ValueError(fmt::format("{}: gather_list must be empty (None) on ranks other than the root {}", what, root));
  }
  record(c, "gather", {&input}, root);
  return run_gather(c, outputs, input, root);
}

WorkPtr ProcessGroup::scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root) {
  OpGuard guard("scatter", output);
  Call c = next_call("scatter");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "output", output);
  check_root(*this, what, "src", root);
  if (rank() == root) {
    if (int(inputs.size()) != size())
      throw ValueError(fmt::format("{}: the root needs one scatter_list tensor per rank ({}), got {}", what, size(),
                                   inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string arg = fmt::format("scatter_list[{}]", i);
      check_tensor(*this, device_type(), what, arg.c_str(), inputs[i]);
      check_same_dtype(what, arg.c_str(), inputs[i], output, "output");
      if (inputs[i].numel() != output.numel())
        throw ShapeError(fmt::format("{}: {} has {} elements but output has {}", what, arg, inputs[i].numel(),
                                     output.numel()));
    }
  } else if (!inputs.empty()) {
    throw ValueError(fmt::format("{}: scatter_list must be empty (None) on ranks other than the root {}", what, root));
  }
  record(c, "scatter", {&output}, root);
  return run_scatter(c, output, inputs, root);
}

WorkPtr ProcessGroup::all_to_all_single(const Tensor& output, const Tensor& input, std::vector<int64_t> output_splits,
                                        std::vector<int64_t> input_splits) {
  OpGuard guard("all_to_all_single", output, input);
  Call c = next_call("all_to_all_single");
  const char* what = c.what.c_str();
  check_tensor(*this, device_type(), what, "input", input);
  check_tensor(*this, device_type(), what, "output", output);
  check_same_dtype(what, "output", output, input, "input");
  auto fill_splits = [&](std::vector<int64_t>& splits, const Tensor& t, const char* name) {
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    if (splits.empty()) {
      if (rows % size() != 0)
        throw ShapeError(fmt::format("{}: {} has {} rows in dim 0, which {} ranks cannot split equally; pass "
                                     "{}_split_sizes",
                                     what, name, rows, size(), name));
      splits.assign(size_t(size()), rows / size());
    }
    if (int(splits.size()) != size())
      throw ValueError(fmt::format("{}: {}_split_sizes has {} entries, one per rank ({}) needed", what, name,
                                   splits.size(), size()));
    int64_t total = 0;
    for (int64_t s : splits) {
      if (s < 0) throw ValueError(fmt::format("{}: {}_split_sizes has a negative entry {}", what, name, s));
      total += s;
    }
    if (total != rows)
      throw ShapeError(fmt::format("{}: {}_split_sizes add up to {} but {} has {} rows in dim 0", what, name, total,
                                   name, rows));
  };
  fill_splits(output_splits, output, "output");
  fill_splits(input_splits, input, "input");
  record(c, "all_to_all_single", {&input, &output}, -1);
  return run_all_to_all_single(c, output, input, output_splits, input_splits);
}

WorkPtr ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
  OpGuard guard("send", tensor);
  Call c = next_call("send", true);
  check_tensor(*this, device_type(), c.what.c_str(), "tensor", tensor);
  check_root(*this, c.what.c_str(), "dst", dst);
  if (dst == rank()) throw ValueError(fmt::format("{}: a rank cannot send to itself (dst {})", c.what, dst));
  if (tag < 0) throw ValueError(fmt::format("{}: tag {} must be non-negative", c.what, tag));
  record(c, "send", {&tensor}, dst, true);
  return run_send(c, tensor, dst, tag);
}

WorkPtr ProcessGroup::recv(const Tensor& tensor, int src, int tag) {
  OpGuard guard("recv", tensor);
  Call c = next_call("recv", true);
  check_tensor(*this, device_type(), c.what.c_str(), "tensor", tensor);
  check_root(*this, c.what.c_str(), "src", src);
  if (src == rank()) throw ValueError(fmt::format("{}: a rank cannot receive from itself (src {})", c.what, src));
  if (tag < 0) throw ValueError(fmt::format("{}: tag {} must be non-negative", c.what, tag));
  record(c, "recv", {&tensor}, src, true);
  return run_recv(c, tensor, src, tag);
}

WorkPtr ProcessGroup::barrier() {
  OpGuard guard("barrier");
  Call c = next_call("barrier");
  record(c, "barrier", {}, -1);
  return run_barrier(c);
}

}  // namespace rt::dist
