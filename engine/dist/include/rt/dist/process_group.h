// rt/dist/process_group.h — a group of processes and the collectives they run together (PyTorch's
// c10d ProcessGroup), on an existing engine: gloo or mpi for CPU tensors, nccl for CUDA tensors.
//
//   auto store = std::make_shared<rt::dist::TCPStore>("127.0.0.1", 29500, world_size, rank == 0);
//   std::shared_ptr<rt::dist::ProcessGroup> pg = rt::dist::make_gloo_group(store, rank, world_size);
//   rt::Tensor grad = rt::ones({1024});
//   pg->all_reduce(grad, rt::dist::ReduceOp::Sum)->wait();          // every rank now holds world_size
//   rt::dist::WorkPtr w = pg->broadcast(weights, /*root=*/0);        // asynchronous: overlap, then
//   ...                                                              // compute that does not touch weights
//   w->wait();                                                       // throws what the broadcast failed with
//
// Contracts (every backend):
// - Ranks here are ranks in the group (0..size()-1); rt/dist/distributed.h's functions take global ranks
//   and translate, as torch.distributed does.
// - Collectives start in the order they were called (a backend may run the next while one waits), and
//   every rank of the group must call the same collectives in the same order with matching dtypes and
//   sizes (a mismatch is caught by the ledger: rt/dist/ledger.h).
// - Tensors are dense and contiguous, of one dtype per call, on the backend's device type (CPU for gloo
//   and mpi, CUDA for nccl); outputs are written in place and stay alive until the Work completes: the
//   Work holds a reference to every tensor it reads or writes. A tensor that breaks these is refused
//   with rt::ValueError (or DeviceError / DTypeError) naming the collective, the argument and the fix,
//   before anything is sent.
// - ReduceOp::Avg is the sum divided by the group size, for floating-point dtypes only; Product, Min,
//   Max and Sum work on every dtype but Bool for Sum/Product, where PyTorch's rules (logical or/and) apply.
// - A collective that does not finish within the group's timeout (or the one passed to Work::wait)
//   fails with DistBackendError naming the collective, its sequence number, the group and the timeout;
//   a peer that died fails it with DistBackendError, which names that peer's rank when the collective
//   ledger can tell (gloo; rt/dist/ledger.h).
// - Every collective is an op for the dispatcher (rt/op_observer.h): observers and the profiler see it
//   by name ("all_reduce", ...) when it is enqueued; gloo's workers record it again as "gloo:all_reduce"
//   while it runs (mpi and nccl progress inside their libraries, so only the enqueue is recorded).
#pragma once
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "rt/dist/errors.h"
#include "rt/dist/store.h"
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::dist {

enum class ReduceOp : uint8_t { Sum, Avg, Product, Min, Max };
const char* reduce_op_name(ReduceOp op);  // "SUM", "AVG", ... (Python's ReduceOp names)

// 30 minutes, as PyTorch's default process-group timeout.
inline constexpr Milliseconds kDefaultCollectiveTimeout = std::chrono::minutes(30);

// The handle of one collective or point-to-point operation (torch.distributed's Work).
class Work {
 public:
  virtual ~Work() = default;
  // True once the operation has finished, successfully or not. Never blocks.
  virtual bool is_completed() = 0;
  // Blocks until the operation finishes; rethrows what it failed with. timeout 0 means the group's
  // timeout. When the timeout passes first: DistBackendError naming the operation and the timeout.
  // nccl: also makes the calling thread's current CUDA stream wait for the operation (PyTorch's
  // semantics), and a timeout aborts the group's communicator, so its later calls fail at once.
  virtual void wait(Milliseconds timeout = Milliseconds(0)) = 0;
  // What the operation failed with; null while it runs and after it succeeded.
  virtual std::exception_ptr exception() = 0;
  bool is_success() { return is_completed() && !exception(); }
  // The tensors the operation wrote (all_reduce's tensor, all_gather's outputs, ...).
  const std::vector<Tensor>& result() const { return outputs_; }
  // "all_reduce #7 in group 'default' (gloo, 2 ranks)": what timeouts and errors name.
  const std::string& description() const { return description_; }

 protected:
  std::vector<Tensor> outputs_;
  std::string description_;
};
using WorkPtr = std::shared_ptr<Work>;

struct ProcessGroupOptions {
  Milliseconds timeout = kDefaultCollectiveTimeout;
  std::string group_name = "default";  // what messages, the ledger and the profiler name it by
  std::vector<int> global_ranks;       // the members' global ranks in group-rank order; empty: 0..size-1
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual const char* backend_name() const = 0;  // "gloo", "mpi", "nccl"
  const std::string& group_name() const { return options_.group_name; }
  Milliseconds timeout() const { return options_.timeout; }
  const std::vector<int>& global_ranks() const { return global_ranks_; }
  int global_rank(int group_rank) const;  // throws IndexError outside 0..size()-1
  int group_rank(int global_rank) const;  // -1 when that process is not a member
  // RT_DISTRIBUTED_DEBUG=DETAIL (rt/dist/distributed.h turns it on): before each collective every member
  // publishes the collective's fingerprint (op, dtypes and shapes) and call site in `store` and waits for
  // the others'; a difference throws DistBackendError naming both ranks' calls, before anything is sent.
  // Costs a store round trip per collective: for debugging. Null turns it off.
  void set_consistency_store(std::shared_ptr<Store> store) { consistency_store_ = std::move(store); }

  // How many collectives this process has issued in this group (the same count on every member when
  // they agree); point-to-point operations are counted apart, since only two members take part.
  uint64_t sequence_number() const { return sequence_; }
  uint64_t p2p_sequence_number() const { return p2p_sequence_; }

  WorkPtr all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
  WorkPtr broadcast(const Tensor& tensor, int root);
  WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op = ReduceOp::Sum);  // result on root only
  // outputs: size() tensors shaped like input (output[i] receives rank i's input).
  WorkPtr all_gather(const std::vector<Tensor>& outputs, const Tensor& input);
  // output: size() * input.numel() elements, rank i's input at [i * n, (i + 1) * n).
  WorkPtr all_gather_into_tensor(const Tensor& output, const Tensor& input);
  // input: size() * output.numel() elements; rank i receives the reduction of every rank's slice i.
  WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum);
  // On root, outputs holds size() tensors shaped like input; elsewhere it is empty.
  WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root);
  // On root, inputs holds size() tensors shaped like output; elsewhere it is empty.
  WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root);
  // Splits along dim 0: input_splits[i] rows go to rank i, output_splits[i] rows come from rank i.
  // Empty split lists mean equal splits (dim 0 divisible by size()).
  WorkPtr all_to_all_single(const Tensor& output, const Tensor& input, std::vector<int64_t> output_splits = {},
                            std::vector<int64_t> input_splits = {});
  WorkPtr send(const Tensor& tensor, int dst, int tag = 0);
  WorkPtr recv(const Tensor& tensor, int src, int tag = 0);
  WorkPtr barrier();

 protected:
  ProcessGroup(int rank, int size, ProcessGroupOptions options);

  // What a backend implements. Arguments arrive checked (contiguous, one dtype, the backend's device,
  // sizes consistent, ranks in range); `seq` is this operation's sequence number in the group and
  // `what` its description for errors.
  struct Call {
    uint64_t seq = 0;
    std::string what;        // "all_reduce #7 in group 'default' (gloo, 2 ranks)"
    uint64_t ledger_id = 0;  // the call's record in the collective ledger: the backend marks it finished
                             // (rt/dist/ledger.h, Note [Ledger slots])
    uint64_t fingerprint = 0;  // op, dtypes and shapes, hashed (the same on every rank that agrees)
  };
  virtual WorkPtr run_all_reduce(const Call& c, const Tensor& tensor, ReduceOp op) = 0;
  virtual WorkPtr run_broadcast(const Call& c, const Tensor& tensor, int root) = 0;
  virtual WorkPtr run_reduce(const Call& c, const Tensor& tensor, int root, ReduceOp op) = 0;
  virtual WorkPtr run_all_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input) = 0;
  virtual WorkPtr run_all_gather_into_tensor(const Call& c, const Tensor& output, const Tensor& input) = 0;
  virtual WorkPtr run_reduce_scatter_tensor(const Call& c, const Tensor& output, const Tensor& input,
                                            ReduceOp op) = 0;
  virtual WorkPtr run_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input, int root) = 0;
  virtual WorkPtr run_scatter(const Call& c, const Tensor& output, const std::vector<Tensor>& inputs, int root) = 0;
  virtual WorkPtr run_all_to_all_single(const Call& c, const Tensor& output, const Tensor& input,
                                        const std::vector<int64_t>& output_splits,
                                        const std::vector<int64_t>& input_splits) = 0;
  virtual WorkPtr run_send(const Call& c, const Tensor& tensor, int dst, int tag) = 0;
  virtual WorkPtr run_recv(const Call& c, const Tensor& tensor, int src, int tag) = 0;
  virtual WorkPtr run_barrier(const Call& c) = 0;
  // The device type this backend's tensors must be on.
  virtual DeviceType device_type() const = 0;

 private:
  Call next_call(const char* collective, bool point_to_point = false);
  // Records `c` in the collective ledger: the shown tensor, the elements moved, the peer (-1: none).
  void record(Call& c, const char* op, const std::vector<const Tensor*>& tensors, int peer,
              bool point_to_point = false);
  void check_consistency(const Call& c);  // consistency_check.cpp

  int rank_;
  int size_;
  ProcessGroupOptions options_;
  std::vector<int> global_ranks_;
  uint64_t sequence_ = 0;
  uint64_t p2p_sequence_ = 0;
  uint32_t ledger_group_ = 0;
  std::shared_ptr<Store> consistency_store_;
};

// ---- backends --------------------------------------------------------------------------
// Each returns a ready group or throws: DistBackendError when a backend is not built into this
// library (the message names the package and CMake option that build it), DistStoreError /
// DistNetworkError when rendezvous fails. `store` is the rendezvous store every member shares; the
// backend keeps keys under its own prefix.
bool is_gloo_available();
bool is_mpi_available();
bool is_nccl_available();

std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store, int rank, int size,
                                              ProcessGroupOptions options = {});
// MPI takes rank and size from MPI itself (mpirun, srun); `global_ranks` picks a sub-communicator.
std::shared_ptr<ProcessGroup> make_mpi_group(ProcessGroupOptions options = {});
std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store, int rank, int size,
                                              ProcessGroupOptions options = {});

}  // namespace rt::dist

RT_API_END
