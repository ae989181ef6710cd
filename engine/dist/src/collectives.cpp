// torch.distributed's collective functions: global ranks in, the group's backend for the tensor's device.
#include <fmt/core.h>

#include "rt/dist/distributed.h"

namespace rt::dist {

namespace {

GroupPtr resolve(const GroupPtr& group) { return group ? group : default_group(); }

int to_group_rank(const Group& g, int global, const char* what, const char* arg) {
  const int r = g.group_rank(global);
  if (r < 0)
    throw ValueError(fmt::format("{}: {} {} is not a member of group '{}' (its global ranks: {})", what, arg, global,
                                 g.name(), format_shape(std::vector<int64_t>(g.global_ranks().begin(),
                                                                             g.global_ranks().end()))));
  return r;
}

WorkPtr finish(WorkPtr w, bool async_op) {
  if (!async_op) w->wait();
  return w;
}

DeviceType device_of(const std::vector<Tensor>& list, const Tensor& fallback) {
  return fallback.defined() ? fallback.device().type : (list.empty() ? DeviceType::CPU : list[0].device().type);
}

}  // namespace

WorkPtr all_reduce(const Tensor& tensor, ReduceOp op, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(tensor.device().type).all_reduce(tensor, op), async_op);
}

WorkPtr broadcast(const Tensor& tensor, int src, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(tensor.device().type).broadcast(tensor, to_group_rank(*g, src, "broadcast", "src")),
                async_op);
}

WorkPtr reduce(const Tensor& tensor, int dst, ReduceOp op, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(tensor.device().type).reduce(tensor, to_group_rank(*g, dst, "reduce", "dst"), op),
                async_op);
}

WorkPtr all_gather(const std::vector<Tensor>& tensor_list, const Tensor& tensor, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(tensor.device().type).all_gather(tensor_list, tensor), async_op);
}

WorkPtr all_gather_into_tensor(const Tensor& output, const Tensor& input, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(input.device().type).all_gather_into_tensor(output, input), async_op);
}

WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, const GroupPtr& group,
                              bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(input.device().type).reduce_scatter_tensor(output, input, op), async_op);
}

WorkPtr gather(const Tensor& tensor, const std::vector<Tensor>& gather_list, int dst, const GroupPtr& group,
               bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(device_of(gather_list, tensor))
                    .gather(gather_list, tensor, to_group_rank(*g, dst, "gather", "dst")),
                async_op);
}

WorkPtr scatter(const Tensor& tensor, const std::vector<Tensor>& scatter_list, int src, const GroupPtr& group,
                bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(device_of(scatter_list, tensor))
                    .scatter(tensor, scatter_list, to_group_rank(*g, src, "scatter", "src")),
                async_op);
}

WorkPtr all_to_all_single(const Tensor& output, const Tensor& input, std::vector<int64_t> output_split_sizes,
                          std::vector<int64_t> input_split_sizes, const GroupPtr& group, bool async_op) {
  GroupPtr g = resolve(group);
  return finish(g->for_device(input.device().type)
                    .all_to_all_single(output, input, std::move(output_split_sizes), std::move(input_split_sizes)),
                async_op);
}

WorkPtr isend(const Tensor& tensor, int dst, const GroupPtr& group, int tag) {
  GroupPtr g = resolve(group);
  return g->for_device(tensor.device().type).send(tensor, to_group_rank(*g, dst, "send", "dst"), tag);
}

WorkPtr irecv(const Tensor& tensor, int src, const GroupPtr& group, int tag) {
  GroupPtr g = resolve(group);
  return g->for_device(tensor.device().type).recv(tensor, to_group_rank(*g, src, "recv", "src"), tag);
}

void send(const Tensor& tensor, int dst, const GroupPtr& group, int tag) { isend(tensor, dst, group, tag)->wait(); }

void recv(const Tensor& tensor, int src, const GroupPtr& group, int tag) { irecv(tensor, src, group, tag)->wait(); }

WorkPtr barrier(const GroupPtr& group, bool async_op) { return finish(resolve(group)->for_barrier().barrier(), async_op); }

}  // namespace rt::dist
