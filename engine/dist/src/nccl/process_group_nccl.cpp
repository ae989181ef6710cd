// The nccl backend: NCCL collectives on CUDA tensors, one non-blocking communicator per group and device,
// made at the group's first collective on that device (the unique id goes through the store), each with
// its own stream. Operations are enqueued on that stream in call order and complete asynchronously; the
// watchdog fails and aborts what runs past the group's timeout. See Note [NCCL work lifecycle] and
// Note [NCCL abort] in nccl_comm.h.
//
// Data movement (broadcast, all_gather, gather, scatter, all_to_all, send/recv) moves bytes (ncclUint8);
// reductions use the dtype's NCCL type. Point-to-point tags are accepted and not used: NCCL matches a
// send with the receive its peer posts in the same order, as PyTorch's nccl backend does.
#include <fmt/core.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "nccl/nccl_comm.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"

namespace rt::dist {

namespace {

using nccl::Communicator;
using nccl::NcclWork;

uint8_t* bytes_of(const Tensor& t) { return static_cast<uint8_t*>(t.raw_data()); }

// Each process numbers the nccl groups it made under one name, so that a group destroyed and made again
// takes store keys of its own (every rank makes its groups in the same order).
int next_incarnation(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, int> made;
  std::lock_guard<std::mutex> lock(mutex);
  return made[name]++;
}

class NcclGroup final : public ProcessGroup {
 public:
  NcclGroup(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options)
      : ProcessGroup(rank, size, std::move(options)),
        label_(fmt::format("group '{}' (nccl, {} ranks)", group_name(), size)),
        store_(std::make_shared<PrefixStore>(fmt::format("nccl/{}/{}/", group_name(), next_incarnation(group_name())),
                                             std::move(store))) {}

  const char* backend_name() const override { return "nccl"; }

 protected:
  DeviceType device_type() const override { return DeviceType::CUDA; }

  WorkPtr run_all_reduce(const Call& c, const Tensor& t, ReduceOp op) override {
    return launch(c, "nccl:all_reduce", {t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      if (t.numel() == 0) return ncclSuccess;
      return ncclAllReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl::datatype_of(t.dtype()),
                           nccl::op_of(t.dtype(), op), comm, s);
    });
  }

  WorkPtr run_broadcast(const Call& c, const Tensor& t, int root) override {
    return launch(c, "nccl:broadcast", {t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      if (t.nbytes() == 0) return ncclSuccess;
      return ncclBroadcast(t.raw_data(), t.raw_data(), t.nbytes(), ncclUint8, root, comm, s);
    });
  }

  WorkPtr run_reduce(const Call& c, const Tensor& t, int root, ReduceOp op) override {
    return launch(c, "nccl:reduce", {t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      if (t.numel() == 0) return ncclSuccess;
      return ncclReduce(t.raw_data(), t.raw_data(), size_t(t.numel()), nccl::datatype_of(t.dtype()),
                        nccl::op_of(t.dtype(), op), root, comm, s);
    });
  }

  // The outputs are separate tensors: one broadcast from each rank, in one NCCL group.
  WorkPtr run_all_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input) override {
    std::vector<Tensor> tensors = outputs;
    tensors.push_back(input);
    return launch(c, "nccl:all_gather", outputs, std::move(tensors), [&](ncclComm_t comm, cudaStream_t s) {
      const size_t bytes = input.nbytes();
      if (bytes == 0) return ncclSuccess;
      for (int r = 0; r < size(); ++r) {
        const Tensor& out = outputs[size_t(r)];
        const void* send = r == rank() ? input.raw_data() : out.raw_data();
        const ncclResult_t e = ncclBroadcast(send, out.raw_data(), bytes, ncclUint8, r, comm, s);
        if (e != ncclSuccess) return e;
      }
      return ncclSuccess;
    });
  }

  WorkPtr run_all_gather_into_tensor(const Call& c, const Tensor& output, const Tensor& input) override {
    return launch(c, "nccl:all_gather_into_tensor", {output}, {output, input}, [&](ncclComm_t comm, cudaStream_t s) {
      if (input.nbytes() == 0) return ncclSuccess;
      return ncclAllGather(input.raw_data(), output.raw_data(), input.nbytes(), ncclUint8, comm, s);
    });
  }

  WorkPtr run_reduce_scatter_tensor(const Call& c, const Tensor& output, const Tensor& input,
                                    ReduceOp op) override {
    return launch(c, "nccl:reduce_scatter_tensor", {output}, {output, input}, [&](ncclComm_t comm, cudaStream_t s) {
      if (output.numel() == 0) return ncclSuccess;
      return ncclReduceScatter(input.raw_data(), output.raw_data(), size_t(output.numel()),
                               nccl::datatype_of(input.dtype()), nccl::op_of(input.dtype(), op), comm, s);
    });
  }

  WorkPtr run_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input, int root) override {
    std::vector<Tensor> tensors = outputs;
    tensors.push_back(input);
    return launch(c, "nccl:gather", outputs, std::move(tensors), [&](ncclComm_t comm, cudaStream_t s) {
      const size_t bytes = input.nbytes();
      if (bytes == 0) return ncclSuccess;
      if (rank() != root) return ncclSend(input.raw_data(), bytes, ncclUint8, root, comm, s);
      for (int r = 0; r < size(); ++r) {
        const ncclResult_t e = r == rank() ? copy(outputs[size_t(r)].raw_data(), input.raw_data(), bytes, s)
                                           : ncclRecv(outputs[size_t(r)].raw_data(), bytes, ncclUint8, r, comm, s);
        if (e != ncclSuccess) return e;
      }
      return ncclSuccess;
    });
  }

  WorkPtr run_scatter(const Call& c, const Tensor& output, const std::vector<Tensor>& inputs, int root) override {
    std::vector<Tensor> tensors = inputs;
    tensors.push_back(output);
    return launch(c, "nccl:scatter", {output}, std::move(tensors), [&](ncclComm_t comm, cudaStream_t s) {
      const size_t bytes = output.nbytes();
      if (bytes == 0) return ncclSuccess;
      if (rank() != root) return ncclRecv(output.raw_data(), bytes, ncclUint8, root, comm, s);
      for (int r = 0; r < size(); ++r) {
        const ncclResult_t e = r == rank() ? copy(output.raw_data(), inputs[size_t(r)].raw_data(), bytes, s)
                                           : ncclSend(inputs[size_t(r)].raw_data(), bytes, ncclUint8, r, comm, s);
        if (e != ncclSuccess) return e;
      }
      return ncclSuccess;
    });
  }

  WorkPtr run_all_to_all_single(const Call& c, const Tensor& output, const Tensor& input,
                                const std::vector<int64_t>& output_splits,
                                const std::vector<int64_t>& input_splits) override {
    return launch(c, "nccl:all_to_all_single", {output}, {output, input}, [&](ncclComm_t comm, cudaStream_t s) {
      auto row_bytes = [](const Tensor& t) {
        const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
        return rows == 0 ? size_t(0) : t.nbytes() / size_t(rows);
      };
      const size_t in_row = row_bytes(input), out_row = row_bytes(output);
      size_t in_offset = 0, out_offset = 0;
      for (int r = 0; r < size(); ++r) {
        const size_t send = size_t(input_splits[size_t(r)]) * in_row;
        const size_t recv = size_t(output_splits[size_t(r)]) * out_row;
        ncclResult_t e = ncclSuccess;
        if (r == rank()) {
          if (send != recv) return ncclInvalidUsage;  // checked below, before anything is enqueued
          if (send > 0) e = copy(bytes_of(output) + out_offset, bytes_of(input) + in_offset, send, s);
        } else {
          if (send > 0) e = ncclSend(bytes_of(input) + in_offset, send, ncclUint8, r, comm, s);
          if (e == ncclSuccess && recv > 0) e = ncclRecv(bytes_of(output) + out_offset, recv, ncclUint8, r, comm, s);
        }
        if (e != ncclSuccess) return e;
        in_offset += send;
        out_offset += recv;
      }
      return ncclSuccess;
    }, [&] {
      const int64_t in_rows = input.dim() == 0 ? 1 : input.size(0), out_rows = output.dim() == 0 ? 1 : output.size(0);
      const int64_t send = in_rows ? input_splits[size_t(rank())] * (input.numel() / in_rows) : 0;
      const int64_t recv = out_rows ? output_splits[size_t(rank())] * (output.numel() / out_rows) : 0;
      if (send != recv)
        throw ShapeError(fmt::format("{}: this rank sends itself {} elements (input_split_sizes[{}]) but expects {} "
                                     "(output_split_sizes[{}]); the two must agree",
                                     c.what, send, rank(), recv, rank()));
    });
  }

  WorkPtr run_send(const Call& c, const Tensor& t, int dst, int /*tag*/) override {
    return launch(c, "nccl:send", {t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      if (t.nbytes() == 0) return ncclSuccess;
      return ncclSend(t.raw_data(), t.nbytes(), ncclUint8, dst, comm, s);
    });
  }

  WorkPtr run_recv(const Call& c, const Tensor& t, int src, int /*tag*/) override {
    return launch(c, "nccl:recv", {t}, {t}, [&](ncclComm_t comm, cudaStream_t s) {
      if (t.nbytes() == 0) return ncclSuccess;
      return ncclRecv(t.raw_data(), t.nbytes(), ncclUint8, src, comm, s);
    });
  }

  // A one-element all_reduce on the device this group used last (else the current device). Its Work's
  // wait() blocks the host until every rank has reached the barrier (the end event has completed).
  WorkPtr run_barrier(const Call& c) override {
    int device = last_device_.load();
    if (device < 0) device = rt::cuda::current_device();
    Tensor token = rt::zeros({1}, TensorOptions().with_device(Device::cuda(device)));
    return launch(c, "nccl:barrier", {}, {token}, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(token.raw_data(), token.raw_data(), 1, ncclFloat32, ncclSum, comm, s);
    });
  }

 private:
  static ncclResult_t copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? ncclSuccess
                                                                                        : ncclUnhandledCudaError;
  }

  // Every tensor of one call on one device: that device's index.
  int device_of(const Call& c, const std::vector<Tensor>& tensors) const {
    const int device = tensors.front().device().index;
    for (const Tensor& t : tensors)
      if (t.device().index != device)
        throw DeviceError(fmt::format("{}: its tensors are on {} and {}; one NCCL call works on one device, so move "
                                      "them to one (.to('cuda:{}'))",
                                      c.what, tensors.front().device().str(), t.device().str(), device));
    return device;
  }

  // Fails at once when the group can no longer run collectives (Note [NCCL abort]).
  void check_usable(const Call& c) const {
    if (!broken_.empty()) throw DistBackendError(fmt::format("{} cannot run: {}", c.what, broken_));
    for (const auto& [device, comm] : comms_)
      if (comm->aborted())
        throw DistBackendError(fmt::format("{} cannot run: the NCCL communicator of {} on cuda:{} was aborted, so "
                                           "the group is unusable (destroy it and create a new one, or restart the "
                                           "job). It was aborted because: {}",
                                           c.what, label_, device, comm->abort_reason()));
  }

  // The group's communicator on `device`, made at its first use: rank 0 makes the unique id and sets it
  // in the store, the others get it (the store's timeout applies), then every rank joins.
  std::shared_ptr<Communicator> communicator(const Call& c, int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_usable(c);
    if (auto it = comms_.find(device); it != comms_.end()) return it->second;
    const std::string key = fmt::format("comm{}/unique_id", comms_made_++);
    ncclUniqueId id{};
    try {
      if (rank() == 0) {
        const ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
          throw DistBackendError(fmt::format("{}: ncclGetUniqueId failed: {}", c.what, nccl::describe(r, nullptr)));
        const auto* p = reinterpret_cast<const uint8_t*>(&id);
        store_->set(key, Bytes(p, p + sizeof id));
      } else {
        const Bytes b = store_->get(key);
        if (b.size() != sizeof id)
          throw DistStoreError(fmt::format("{}: the store holds {} bytes under the NCCL unique id's key '{}', not {}: "
                                           "another program uses this store's 'nccl/' keys",
                                           c.what, b.size(), key, sizeof id));
        std::memcpy(&id, b.data(), sizeof id);
      }
    } catch (const DistStoreError& e) {
      broken_ = fmt::format("rank {} of {} could not exchange the NCCL unique id through the store: {}", rank(),
                            label_, e.what());
      throw DistStoreError(fmt::format("{}: {}", c.what, broken_));
    }
    try {
      auto comm = std::make_shared<Communicator>(id, rank(), size(), device, timeout(), label_);
      comms_.emplace(device, comm);
      return comm;
    } catch (const DistBackendError& e) {
      broken_ = e.what();
      throw DistBackendError(fmt::format("{}: {}", c.what, e.what()));
    }
  }

  // Orders the group's stream after the caller's current stream, enqueues `enqueue(comm, stream)` between
  // ncclGroupStart and ncclGroupEnd, records the end event and hands the Work to the watchdog. `check`
  // runs first, before the communicator exists.
  template <typename Enqueue, typename Check = void (*)()>
  WorkPtr launch(const Call& c, const char* name, std::vector<Tensor> outputs, std::vector<Tensor> tensors,
                 Enqueue&& enqueue, Check&& check = [] {}) {
    OpGuard guard(name, tensors);
    check();
    const int device = device_of(c, tensors);
    std::shared_ptr<Communicator> comm = communicator(c, device);
    last_device_.store(device);
    nccl::DeviceGuard on_device(device);
    const rt::cuda::Stream& stream = comm->stream();
    stream.wait_stream(rt::cuda::Stream::current(device));
    auto work = std::make_shared<NcclWork>(c.what, comm, timeout(), std::move(outputs), tensors);
    work->ledger_id = c.ledger_id;
    std::string error;
    {
      std::lock_guard<std::mutex> lock(comm->enqueue_mutex());
      if (comm->aborted()) {
        std::lock_guard<std::mutex> group_lock(mutex_);
        check_usable(c);
      }
      ncclResult_t r = ncclGroupStart();
      if (r == ncclSuccess) {
        r = enqueue(comm->comm(), static_cast<cudaStream_t>(stream.handle()));
        const ncclResult_t end = ncclGroupEnd();
        if (r == ncclSuccess || r == ncclInProgress) r = end;
      }
      if (r == ncclInProgress) r = comm->wait_ready(nccl::Clock::now() + timeout());
      if (r == ncclSuccess) {
        work->record_end();
      } else {
        error = r == ncclInProgress
                    ? fmt::format("{}: NCCL did not accept the operation within the group's timeout of {} ms; the "
                                  "communicator of {} on cuda:{} was aborted",
                                  c.what, timeout().count(), label_, device)
                    : fmt::format("{} failed in NCCL: {}; the communicator of {} on cuda:{} was aborted. Hint: "
                                  "NCCL_DEBUG=INFO makes NCCL say more",
                                  c.what, nccl::describe(r, comm->comm()), label_, device);
      }
    }
    if (!error.empty()) {
      comm->abort(error);  // its thread takes the enqueue mutex: release it first (scope above)
      throw DistBackendError(error);
    }
    for (const Tensor& t : tensors) {
      try {
        rt::cuda::record_stream(t, stream);
      } catch (const ValueError&) {
        // Memory the caching allocator does not own: the Work holds the tensor (Note [NCCL work lifecycle]).
      }
    }
    nccl::Watchdog::instance().add(work);
    return work;
  }

  std::string label_;  // "group 'default' (nccl, 2 ranks)"
  std::shared_ptr<Store> store_;
  std::mutex mutex_;   // guards comms_, comms_made_ and broken_
  std::map<int, std::shared_ptr<Communicator>> comms_;
  int comms_made_ = 0;
  std::string broken_;  // why the group cannot run collectives (a failed rendezvous); "" while it can
  std::atomic<int> last_device_{-1};
};

}  // namespace

bool is_nccl_available() { return true; }

std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store, int rank, int size,
                                              ProcessGroupOptions options) {
  if (!store) throw ValueError("make_nccl_group: the rendezvous store is null; pass the store every rank shares");
  if (!rt::cuda::is_available())
    throw DistBackendError(fmt::format("the nccl backend ({}) needs a usable CUDA device, and this process has none: "
                                       "{}. Use gloo or mpi for CPU tensors",
                                       nccl::version_string(), rt::cuda::unavailable_reason()));
  return std::make_shared<NcclGroup>(std::move(store), rank, size, std::move(options));
}

}  // namespace rt::dist
