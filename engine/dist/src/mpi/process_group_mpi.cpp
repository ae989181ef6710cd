// The mpi backend: one MPI communicator per group, every operation a non-blocking MPI call whose Work
// tests the request (mpi/mpi_work.h).
//
// Profiling: ProcessGroup's public methods record each collective's enqueue ("all_reduce", ...). The
// "mpi:<collective>" record the interface describes for a backend's worker has no place here: there is
// no worker thread, and an OpGuard cannot span a completion that happens inside whichever MPI_Test call
// finds it, so only the enqueue is recorded.
//
// Ordering: MPI matches collectives on one communicator in the order they are called, and point-to-point
// messages by (source, tag) in order, so the backend needs no queue of its own; tags map to MPI tags.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <climits>
#include <cstring>
#include <functional>

#include "mpi/mpi_runtime.h"
#include "mpi/mpi_types.h"
#include "mpi/mpi_work.h"
#include "rt/dist/process_group.h"

namespace rt::dist {

namespace {

using mpi::Communicator;
using mpi::MpiWork;
using mpi::Runtime;

// MPI counts are ints.
int count_of(const std::string& what, int64_t elements) {
  if (elements > INT_MAX)
    throw ValueError(fmt::format("{}: {} elements is more than one MPI call can move ({}, MPI counts are int); split "
                                 "the tensor and call once per piece",
                                 what, elements, INT_MAX));
  return int(elements);
}

uint8_t* bytes_of(const Tensor& t) { return t.numel() == 0 ? nullptr : static_cast<uint8_t*>(t.raw_data()); }

bool overlap(const Tensor& a, const Tensor& b) {
  const uint8_t* pa = bytes_of(a);
  const uint8_t* pb = bytes_of(b);
  if (!pa || !pb) return false;
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

class ProcessGroupMpi final : public ProcessGroup {
 public:
  ProcessGroupMpi(int rank, int size, ProcessGroupOptions options, std::shared_ptr<Communicator> comm, int tag_ub)
      : ProcessGroup(rank, size, std::move(options)), comm_(std::move(comm)), tag_ub_(tag_ub) {}

  const char* backend_name() const override { return "mpi"; }

 protected:
  DeviceType device_type() const override { return DeviceType::CPU; }

  WorkPtr run_all_reduce(const Call& c, const Tensor& tensor, ReduceOp op) override {
    auto w = make_work(c, {tensor});
    const int n = count_of(c.what, tensor.numel());
    if (op == ReduceOp::Avg) w->on_success = average(tensor);
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, bytes_of(tensor), n, mpi::datatype_of(tensor.dtype()),
                            reduce_op(tensor, op), comm(), r);
    });
  }

  WorkPtr run_broadcast(const Call& c, const Tensor& tensor, int root) override {
    auto w = make_work(c, {tensor});
    const int n = count_of(c.what, tensor.numel());
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Ibcast(bytes_of(tensor), n, mpi::datatype_of(tensor.dtype()), root, comm(), r);
    });
  }

  WorkPtr run_reduce(const Call& c, const Tensor& tensor, int root, ReduceOp op) override {
    auto w = make_work(c, {tensor});
    const int n = count_of(c.what, tensor.numel());
    const bool is_root = rank() == root;
    if (is_root && op == ReduceOp::Avg) w->on_success = average(tensor);
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Ireduce(is_root ? MPI_IN_PLACE : bytes_of(tensor), is_root ? bytes_of(tensor) : nullptr, n,
                         mpi::datatype_of(tensor.dtype()), reduce_op(tensor, op), root, comm(), r);
    });
  }

  WorkPtr run_all_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input) override {
    auto w = make_work(c, outputs);
    w->inputs = {input};
    const int n = count_of(c.what, input.numel() * size());
    const size_t chunk = input.nbytes();
    w->staging.resize(chunk * size_t(size()));
    MpiWork* raw = w.get();
    w->on_success = [raw, outputs, chunk] {
      for (size_t i = 0; i < outputs.size(); ++i)
        if (chunk) std::memcpy(outputs[i].raw_data(), raw->staging.data() + i * chunk, chunk);
    };
    const MPI_Datatype dt = mpi::datatype_of(input.dtype());
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Iallgather(bytes_of(input), n / size(), dt, w->staging.data(), n / size(), dt, comm(), r);
    });
  }

  WorkPtr run_all_gather_into_tensor(const Call& c, const Tensor& output, const Tensor& input) override {
    auto w = make_work(c, {output});
    w->inputs = {input};
    const int n = count_of(c.what, output.numel()) / size();
    const MPI_Datatype dt = mpi::datatype_of(input.dtype());
    const void* send = bytes_of(input);
    if (send && send == bytes_of(output) + input.nbytes() * size_t(rank())) {
      send = MPI_IN_PLACE;  // input is this rank's slot of output (PyTorch's in-place idiom)
    } else if (overlap(input, output)) {
      send = stage(*w, input);
    }
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Iallgather(send, n, dt, bytes_of(output), n, dt, comm(), r);
    });
  }

  WorkPtr run_reduce_scatter_tensor(const Call& c, const Tensor& output, const Tensor& input,
                                    ReduceOp op) override {
    auto w = make_work(c, {output});
    w->inputs = {input};
    count_of(c.what, input.numel());
    const int n = int(output.numel());
    const void* send = overlap(input, output) ? stage(*w, input) : bytes_of(input);
    if (op == ReduceOp::Avg) w->on_success = average(output);
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Ireduce_scatter_block(send, bytes_of(output), n, mpi::datatype_of(input.dtype()),
                                       reduce_op(input, op), comm(), r);
    });
  }

  WorkPtr run_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input, int root) override {
    auto w = make_work(c, outputs);
    w->inputs = {input};
    const int n = count_of(c.what, input.numel() * size()) / size();
    const size_t chunk = input.nbytes();
    const MPI_Datatype dt = mpi::datatype_of(input.dtype());
    if (rank() == root) {
      w->staging.resize(chunk * size_t(size()));
      MpiWork* raw = w.get();
      w->on_success = [raw, outputs, chunk] {
        for (size_t i = 0; i < outputs.size(); ++i)
          if (chunk) std::memcpy(outputs[i].raw_data(), raw->staging.data() + i * chunk, chunk);
      };
    }
    void* recv = w->staging.empty() ? nullptr : w->staging.data();
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Igather(bytes_of(input), n, dt, recv, n, dt, root, comm(), r);
    });
  }

  WorkPtr run_scatter(const Call& c, const Tensor& output, const std::vector<Tensor>& inputs, int root) override {
    auto w = make_work(c, {output});
    const int n = count_of(c.what, output.numel() * size()) / size();
    const size_t chunk = output.nbytes();
    const MPI_Datatype dt = mpi::datatype_of(output.dtype());
    if (rank() == root) {
      w->staging.resize(chunk * size_t(size()));
      for (size_t i = 0; i < inputs.size(); ++i)
        if (chunk) std::memcpy(w->staging.data() + i * chunk, inputs[i].raw_data(), chunk);
    }
    const void* send = w->staging.empty() ? nullptr : w->staging.data();
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Iscatter(send, n, dt, bytes_of(output), n, dt, root, comm(), r);
    });
  }

  WorkPtr run_all_to_all_single(const Call& c, const Tensor& output, const Tensor& input,
                                const std::vector<int64_t>& output_splits,
                                const std::vector<int64_t>& input_splits) override {
    auto w = make_work(c, {output});
    w->inputs = {input};
    count_of(c.what, input.numel());
    count_of(c.what, output.numel());
    auto row_elements = [](const Tensor& t) {
      int64_t e = 1;
      for (int64_t d = 1; d < t.dim(); ++d) e *= t.size(d);
      return e;
    };
    auto fill = [&](const std::vector<int64_t>& splits, int64_t row, std::vector<int>& counts,
                    std::vector<int>& displs) {
      counts.resize(splits.size());
      displs.resize(splits.size());
      int64_t at = 0;
      for (size_t i = 0; i < splits.size(); ++i) {
        counts[i] = int(splits[i] * row);
        displs[i] = int(at);
        at += splits[i] * row;
      }
    };
    fill(input_splits, row_elements(input), w->counts[0], w->counts[1]);
    fill(output_splits, row_elements(output), w->counts[2], w->counts[3]);
    const void* send = overlap(input, output) ? stage(*w, input) : bytes_of(input);
    const MPI_Datatype dt = mpi::datatype_of(input.dtype());
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Ialltoallv(send, w->counts[0].data(), w->counts[1].data(), dt, bytes_of(output),
                            w->counts[2].data(), w->counts[3].data(), dt, comm(), r);
    });
  }

  WorkPtr run_send(const Call& c, const Tensor& tensor, int dst, int tag) override {
    check_tag(c, tag);
    auto w = make_work(c, {});
    w->inputs = {tensor};
    const int n = count_of(c.what, tensor.numel());
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Isend(bytes_of(tensor), n, mpi::datatype_of(tensor.dtype()), dst, tag, comm(), r);
    });
  }

  WorkPtr run_recv(const Call& c, const Tensor& tensor, int src, int tag) override {
    check_tag(c, tag);
    auto w = make_work(c, {tensor});
    const int n = count_of(c.what, tensor.numel());
    return start(c, w, [&](MPI_Request* r) {
      return MPI_Irecv(bytes_of(tensor), n, mpi::datatype_of(tensor.dtype()), src, tag, comm(), r);
    });
  }

  WorkPtr run_barrier(const Call& c) override {
    auto w = make_work(c, {});
    return start(c, w, [&](MPI_Request* r) { return MPI_Ibarrier(comm(), r); });
  }

 private:
  MPI_Comm comm() const { return comm_->comm; }

  std::shared_ptr<MpiWork> make_work(const Call& c, std::vector<Tensor> outputs) {
    auto w = std::make_shared<MpiWork>(c.what, std::move(outputs), comm_, timeout());
    w->ledger_id = c.ledger_id;
    return w;
  }

  // Starts the MPI call under the runtime's lock; the runtime keeps the Work until it finishes.
  template <typename StartCall>
  WorkPtr start(const Call& c, const std::shared_ptr<MpiWork>& w, StartCall&& call) {
    Runtime& runtime = Runtime::get();
    runtime.prune();
    {
      auto guard = runtime.lock();
      Runtime::check(call(&w->request), c.what);
    }
    runtime.keep_until_finished(w);
    return w;
  }

  MPI_Op reduce_op(const Tensor& t, ReduceOp op) const {
    return mpi::op_of(t.dtype(), op, Runtime::get().half_ops());
  }

  std::function<void()> average(const Tensor& t) const {
    const int divisor = size();
    return [t, divisor] { mpi::divide_in_place(bytes_of(t), t.numel(), t.dtype(), divisor); };
  }

  // Copies `t` into the Work's staging buffer (MPI forbids send and receive buffers that overlap).
  static const void* stage(MpiWork& w, const Tensor& t) {
    w.staging.resize(t.nbytes());
    if (t.nbytes()) std::memcpy(w.staging.data(), t.raw_data(), t.nbytes());
    return w.staging.data();
  }

  void check_tag(const Call& c, int tag) const {
    if (tag > tag_ub_)
      throw ValueError(fmt::format("{}: tag {} is above this MPI's largest tag (MPI_TAG_UB = {}); use a smaller tag",
                                   c.what, tag, tag_ub_));
  }

  std::shared_ptr<Communicator> comm_;
  int tag_ub_;
};

// A tag for MPI_Comm_create_group that the members agree on without talking: from the member list.
int creation_tag(const std::vector<int>& ranks) {
  uint32_t h = 2166136261u;
  for (int r : ranks) h = (h ^ uint32_t(r)) * 16777619u;
  return int(h % 32768u);  // MPI guarantees tags up to 32767
}

}  // namespace

bool is_mpi_available() { return true; }

std::shared_ptr<ProcessGroup> make_mpi_group(ProcessGroupOptions options) {
  Runtime& runtime = Runtime::get();
  int world_rank = 0, world_size = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  const std::string what = fmt::format("make_mpi_group('{}')", options.group_name);
  int rank = 0, size = 0;
  {
    auto guard = runtime.lock();
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  }
  if (options.global_ranks.empty()) {
    rank = world_rank;
    size = world_size;
    auto guard = runtime.lock();
    Runtime::check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), what);
  } else {
    const std::vector<int>& ranks = options.global_ranks;
    std::vector<bool> seen(size_t(world_size), false);
    rank = -1;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const int r = ranks[i];
      if (r < 0 || r >= world_size)
        throw ValueError(fmt::format("{}: global rank {} is not in MPI_COMM_WORLD (ranks 0..{}); list ranks of the "
                                     "job that mpirun or srun started",
                                     what, r, world_size - 1));
      if (seen[size_t(r)])
        throw ValueError(fmt::format("{}: global rank {} is listed twice in global_ranks {}; list each member once",
                                     what, r, ranks));
      seen[size_t(r)] = true;
      if (r == world_rank) rank = int(i);
    }
    if (rank < 0)
      throw ValueError(fmt::format(
          "{}: this process (global rank {}) is not a member of global_ranks {}; with MPI only the members create a "
          "sub-group, so call make_mpi_group for it on those ranks only (torch.distributed.new_group does this for "
          "you)",
          what, world_rank, ranks));
    size = int(ranks.size());
    auto guard = runtime.lock();
    MPI_Group world_group = MPI_GROUP_NULL, members = MPI_GROUP_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, size, ranks.data(), &members);
    const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, members, creation_tag(ranks), &comm);
    MPI_Group_free(&members);
    MPI_Group_free(&world_group);
    Runtime::check(rc, what);
  }
  auto communicator = std::make_shared<Communicator>(comm);
  int tag_ub = 32767;
  {
    auto guard = runtime.lock();
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int* value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    if (found && value) tag_ub = *value;
  }
  return std::make_shared<ProcessGroupMpi>(rank, size, std::move(options), std::move(communicator), tag_ub);
}

}  // namespace rt::dist
