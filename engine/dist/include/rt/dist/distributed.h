// rt/dist/distributed.h — torch.distributed's functions in C++: one default group per process, groups
// of subsets, and collectives that take global ranks.
//
//   // Every rank (started by `rtorch launch`, which sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT):
//   rt::dist::init_process_group({.backend = "gloo"});         // init_method "env://"
//   rt::Tensor g = rt::full({4}, float(rt::dist::get_rank()));
//   rt::dist::all_reduce(g);                                    // synchronous: g is the sum on return
//   auto w = rt::dist::broadcast(g, /*src=*/0, nullptr, /*async_op=*/true);
//   w->wait();
//   auto evens = rt::dist::new_group({0, 2});                   // every rank calls it; members get a group
//   if (evens) rt::dist::all_reduce(g, rt::dist::ReduceOp::Max, evens);
//   rt::dist::destroy_process_group();
//
// Contracts:
// - init_method: "env://" reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (rank/world_size given
//   here win); "tcp://HOST:PORT" and "file:///PATH" need rank and world_size; a given store wins over
//   every init_method. Rank 0 hosts the TCPStore. Backend "mpi" takes rank and size from MPI.
// - backend: "gloo", "mpi", "nccl", or per device "cpu:gloo,cuda:nccl"; empty picks "gloo" for CPU
//   tensors plus "nccl" for CUDA tensors when NCCL is built and a GPU is present (PyTorch's default).
//   A group runs each tensor's collective on the backend for its device; the nccl communicators are
//   created at the first CUDA collective.
// - new_group must be called by every rank of the default group, in the same order, with the same
//   ranks (global, sorted or not); it returns nullptr on ranks that are not members, and collectives
//   given a null group use the default group.
// - src/dst arguments are global ranks, as in torch.distributed; Work and errors are as in
//   rt/dist/process_group.h. With async_op false the call waits and returns the completed Work.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rt/dist/process_group.h"
#include "rt/dist/store.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::dist {

// What new_group and init_process_group make: the members, and one ProcessGroup per device type.
class Group {
 public:
  Group(std::string name, std::vector<int> global_ranks, int rank, std::string backend_spec,
        std::shared_ptr<Store> store, Milliseconds timeout);
  ~Group();
  const std::string& name() const { return name_; }
  int rank() const { return rank_; }  // this process's rank in the group
  int size() const { return int(global_ranks_.size()); }
  const std::vector<int>& global_ranks() const { return global_ranks_; }
  int group_rank(int global_rank) const;  // -1 when not a member
  const std::string& backend() const { return backend_spec_; }  // "gloo", "cpu:gloo,cuda:nccl", ...
  Milliseconds timeout() const { return timeout_; }
  const std::shared_ptr<Store>& store() const { return store_; }  // this group's keys (prefixed)
  // The backend for tensors on `device`, created on first use; throws DistBackendError naming the
  // backend spec and what to use instead when none serves that device.
  ProcessGroup& for_device(DeviceType device);
  // The group a barrier and monitored_barrier use: the CUDA backend when there is one, else the CPU one.
  ProcessGroup& for_barrier();

 private:
  std::string name_;
  std::vector<int> global_ranks_;
  int rank_;
  std::string backend_spec_;
  std::shared_ptr<Store> store_;
  Milliseconds timeout_;
  std::string backend_for_[2];  // per DeviceType: "gloo", "mpi", "nccl" or ""
  std::shared_ptr<ProcessGroup> groups_[2];
  std::mutex mutex_;  // guards creating groups_ on first use
};
using GroupPtr = std::shared_ptr<Group>;

// RT_DISTRIBUTED_DEBUG (or PyTorch's TORCH_DISTRIBUTED_DEBUG): OFF (default), INFO, DETAIL. DETAIL checks
// every collective's fingerprint across the group before running it (ProcessGroup::set_consistency_store).
enum class DebugLevel { Off, Info, Detail };
DebugLevel debug_level();  // read from the environment at each call

struct InitOptions {
  std::string backend;
  std::string init_method;  // empty: "env://" unless a store is given
  int rank = -1;
  int world_size = -1;
  Milliseconds timeout = kDefaultCollectiveTimeout;
  std::shared_ptr<Store> store;
  std::string group_name;   // the default group's name in messages and the ledger ("default")
};

void init_process_group(const InitOptions& options);
// Destroys `group`, or every group and the default one (null): collectives then need a new init.
void destroy_process_group(const GroupPtr& group = nullptr);
bool is_initialized();
GroupPtr default_group();  // throws DistError when not initialized, saying what to call
int get_rank(const GroupPtr& group = nullptr);        // -1 when this process is not a member
int get_world_size(const GroupPtr& group = nullptr);  // -1 when this process is not a member
std::string get_backend(const GroupPtr& group = nullptr);
GroupPtr new_group(std::vector<int> ranks = {}, Milliseconds timeout = Milliseconds(0), std::string backend = "");

WorkPtr all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum, const GroupPtr& group = nullptr,
                   bool async_op = false);
WorkPtr broadcast(const Tensor& tensor, int src, const GroupPtr& group = nullptr, bool async_op = false);
WorkPtr reduce(const Tensor& tensor, int dst, ReduceOp op = ReduceOp::Sum, const GroupPtr& group = nullptr,
               bool async_op = false);
WorkPtr all_gather(const std::vector<Tensor>& tensor_list, const Tensor& tensor, const GroupPtr& group = nullptr,
                   bool async_op = false);
WorkPtr all_gather_into_tensor(const Tensor& output, const Tensor& input, const GroupPtr& group = nullptr,
                               bool async_op = false);
WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum,
                              const GroupPtr& group = nullptr, bool async_op = false);
WorkPtr gather(const Tensor& tensor, const std::vector<Tensor>& gather_list, int dst, const GroupPtr& group = nullptr,
               bool async_op = false);
WorkPtr scatter(const Tensor& tensor, const std::vector<Tensor>& scatter_list, int src,
                const GroupPtr& group = nullptr, bool async_op = false);
WorkPtr all_to_all_single(const Tensor& output, const Tensor& input, std::vector<int64_t> output_split_sizes = {},
                          std::vector<int64_t> input_split_sizes = {}, const GroupPtr& group = nullptr,
                          bool async_op = false);
WorkPtr isend(const Tensor& tensor, int dst, const GroupPtr& group = nullptr, int tag = 0);
WorkPtr irecv(const Tensor& tensor, int src, const GroupPtr& group = nullptr, int tag = 0);
void send(const Tensor& tensor, int dst, const GroupPtr& group = nullptr, int tag = 0);
void recv(const Tensor& tensor, int src, const GroupPtr& group = nullptr, int tag = 0);
WorkPtr barrier(const GroupPtr& group = nullptr, bool async_op = false);
// Every rank reports to rank 0 within `timeout`; rank 0 throws DistBackendError naming the ranks that
// did not arrive (all of them with wait_all_ranks, else the first), and the others then fail too.
void monitored_barrier(const GroupPtr& group = nullptr, Milliseconds timeout = Milliseconds(0),
                       bool wait_all_ranks = false);

}  // namespace rt::dist

RT_API_END
