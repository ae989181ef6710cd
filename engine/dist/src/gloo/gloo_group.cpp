// The gloo backend: PyTorch's own CPU collective library (Debian's libgloo), TCP transport, rendezvous
// through our store. Collectives start in call order on the group's two worker threads (gloo's calls
// block; two let one collective start while the previous waits for a slow peer); send and recv go straight to gloo's unbound buffers, so a pending recv never holds up
// the collectives queued behind it. See Note [Gloo tags and slots].
#include <fmt/core.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include <cstring>

#include "async_work.h"
#include "gloo_device.h"
#include "ledger/ledger_internal.h"
#include "ledger/ledger_monitor.h"
#include "reduce_functions.h"
#include "rt/op_observer.h"

namespace rt::dist {

namespace {

using detail::AsyncWork;
using detail::WorkerThreads;

// Note [Gloo tags and slots]
// gloo matches messages by slot. Collectives take a 32-bit tag that gloo turns into slots of its own;
// we pass the collective's sequence number, unique in the group and equal on every rank. Point-to-point
// buffers take a 64-bit slot directly: the user's tag with a high prefix no collective slot uses.
constexpr uint64_t kPointToPointSlotPrefix = uint64_t(0x5250) << 48;  // "RP"
// Collectives in flight at once per group (PyTorch's gloo default): each on its own tag.
constexpr int kWorkerThreads = 2;

class GlooStoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(std::shared_ptr<rt::dist::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    Bytes b = store_->get(key);
    return std::vector<char>(b.begin(), b.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<rt::dist::Store> store_;
};

// Calls f with a value of the C++ type gloo should move `dtype`'s elements as.
template <typename F>
void with_element_type(ScalarType dtype, F&& f) {
  switch (dtype) {
    case kBool:
    case kUInt8: f(uint8_t{}); break;
    case kInt32: f(int32_t{}); break;
    case kInt64: f(int64_t{}); break;
    case kFloat16:
    case kBFloat16: f(uint16_t{}); break;
    case kFloat32: f(float{}); break;
    case kFloat64: f(double{}); break;
  }
}

template <typename T>
T* typed(const Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

class GlooGroup final : public ProcessGroup {
 public:
  GlooGroup(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options)
      : ProcessGroup(rank, size, std::move(options)) {
    auto device = detail::make_gloo_device();
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout());
    GlooStoreAdapter adapter(std::make_shared<PrefixStore>("gloo/" + group_name(), std::move(store)));
    try {
      context->connectFullMesh(adapter, device);
    } catch (const gloo::Exception& e) {
      throw DistNetworkError(fmt::format(
          "gloo could not connect rank {} of group '{}' ({} ranks) to its peers: {}. Hint: every rank must reach "
          "every other on the address gloo picked ({}); set GLOO_SOCKET_IFNAME to the network interface to use",
          rank, group_name(), size, e.what(), device->str()));
    }
    context_ = std::move(context);
    worker_ = std::make_unique<WorkerThreads>(fmt::format("gloo '{}' worker", group_name()), kWorkerThreads);
  }

  ~GlooGroup() override {
    worker_.reset();  // finishes what is queued while the context still lives
  }

  const char* backend_name() const override { return "gloo"; }

 protected:
  DeviceType device_type() const override { return DeviceType::CPU; }

  WorkPtr run_all_reduce(const Call& c, const Tensor& t, ReduceOp op) override {
    return enqueue(c, {t}, [this, t, op, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:all_reduce", t);
      all_reduce_now(t, op, tag);
      if (op == ReduceOp::Avg) detail::divide_in_place(t.raw_data(), t.dtype(), size_t(t.numel()), size());
    });
  }

  WorkPtr run_broadcast(const Call& c, const Tensor& t, int root) override {
    return enqueue(c, {t}, [this, t, root, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:broadcast", t);
      if (t.numel() == 0) return;
      gloo::BroadcastOptions opts(context_);
      opts.setOutput(static_cast<uint8_t*>(t.raw_data()), t.nbytes());
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::broadcast(opts);
    });
  }

  WorkPtr run_reduce(const Call& c, const Tensor& t, int root, ReduceOp op) override {
    return enqueue(c, {t}, [this, t, root, op, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:reduce", t);
      if (t.numel() == 0) return;
      with_element_type(t.dtype(), [&](auto type) {
        using T = decltype(type);
        gloo::ReduceOptions opts(context_);
        opts.setOutput(typed<T>(t), size_t(t.numel()));
        opts.setRoot(root);
        opts.setReduceFunction(detail::reduce_function(t.dtype(), op));
        opts.setTag(tag);
        opts.setTimeout(timeout());
        gloo::reduce(opts);
      });
      if (op == ReduceOp::Avg && rank() == root)
        detail::divide_in_place(t.raw_data(), t.dtype(), size_t(t.numel()), size());
    });
  }

  WorkPtr run_all_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input) override {
    // gloo gathers into one buffer; the outputs are separate tensors, so gather into a staging buffer.
    return enqueue(c, outputs, [this, outputs, input, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:all_gather", input);
      const size_t bytes = input.nbytes();
      if (bytes == 0) return;
      std::vector<uint8_t> staging(bytes * size_t(size()));
      all_gather_bytes(input.raw_data(), staging.data(), bytes, tag);
      for (int r = 0; r < size(); ++r) std::memcpy(outputs[size_t(r)].raw_data(), staging.data() + size_t(r) * bytes, bytes);
    });
  }

  WorkPtr run_all_gather_into_tensor(const Call& c, const Tensor& output, const Tensor& input) override {
    return enqueue(c, {output}, [this, output, input, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:all_gather_into_tensor", output, input);
      if (input.nbytes() == 0) return;
      all_gather_bytes(input.raw_data(), output.raw_data(), input.nbytes(), tag);
    });
  }

  WorkPtr run_reduce_scatter_tensor(const Call& c, const Tensor& output, const Tensor& input,
                                    ReduceOp op) override {
    // gloo has no reduce-scatter with a custom reduction: all-reduce a copy of the input and keep this
    // rank's slice (twice the traffic of a ring reduce-scatter; the mpi and nccl backends do better).
    return enqueue(c, {output}, [this, output, input, op, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:reduce_scatter_tensor", output, input);
      const size_t bytes = output.nbytes();
      if (bytes == 0) return;
      Tensor scratch = input.clone();
      all_reduce_now(scratch, op, tag);
      std::memcpy(output.raw_data(), static_cast<const uint8_t*>(scratch.raw_data()) + size_t(rank()) * bytes, bytes);
      if (op == ReduceOp::Avg) detail::divide_in_place(output.raw_data(), output.dtype(), size_t(output.numel()), size());
    });
  }

  WorkPtr run_gather(const Call& c, const std::vector<Tensor>& outputs, const Tensor& input, int root) override {
    return enqueue(c, outputs, [this, outputs, input, root, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:gather", input);
      const size_t bytes = input.nbytes();
      if (bytes == 0) return;
      gloo::GatherOptions opts(context_);
      opts.setInput(static_cast<uint8_t*>(input.raw_data()), bytes);
      std::vector<uint8_t> staging;
      if (rank() == root) {
        staging.resize(bytes * size_t(size()));
        opts.setOutput(staging.data(), staging.size());
      }
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::gather(opts);
      if (rank() == root)
        for (int r = 0; r < size(); ++r)
          std::memcpy(outputs[size_t(r)].raw_data(), staging.data() + size_t(r) * bytes, bytes);
    });
  }

  WorkPtr run_scatter(const Call& c, const Tensor& output, const std::vector<Tensor>& inputs, int root) override {
    return enqueue(c, {output}, [this, output, inputs, root, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:scatter", output);
      const size_t bytes = output.nbytes();
      if (bytes == 0) return;
      gloo::ScatterOptions opts(context_);
      std::vector<uint8_t*> pointers;
      if (rank() == root) {
        for (const Tensor& in : inputs) pointers.push_back(static_cast<uint8_t*>(in.raw_data()));
        opts.setInputs(pointers, bytes);
      }
      opts.setOutput(static_cast<uint8_t*>(output.raw_data()), bytes);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::scatter(opts);
    });
  }

  WorkPtr run_all_to_all_single(const Call& c, const Tensor& output, const Tensor& input,
                                const std::vector<int64_t>& output_splits,
                                const std::vector<int64_t>& input_splits) override {
    return enqueue(c, {output}, [this, output, input, output_splits, input_splits, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:all_to_all_single", output, input);
      // Rows to bytes: every row of dim 0 has the same number of elements.
      auto row_bytes = [](const Tensor& t) {
        const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
        return rows == 0 ? int64_t(0) : int64_t(t.nbytes()) / rows;
      };
      const int64_t in_row = row_bytes(input), out_row = row_bytes(output);
      std::vector<int64_t> send_bytes, recv_bytes;
      for (int64_t s : input_splits) send_bytes.push_back(s * in_row);
      for (int64_t s : output_splits) recv_bytes.push_back(s * out_row);
      // gloo refuses null buffers: point empty tensors at a byte of their own.
      uint8_t empty_in = 0, empty_out = 0;
      auto* in = input.nbytes() ? static_cast<uint8_t*>(input.raw_data()) : &empty_in;
      auto* out = output.nbytes() ? static_cast<uint8_t*>(output.raw_data()) : &empty_out;
      gloo::AlltoallvOptions opts(context_);
      opts.setInput(in, send_bytes);
      opts.setOutput(out, recv_bytes);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::alltoallv(opts);
    });
  }

  WorkPtr run_send(const Call& c, const Tensor& t, int dst, int tag) override {
    auto buffer = std::shared_ptr<gloo::transport::UnboundBuffer>(
        context_->createUnboundBuffer(t.nbytes() ? t.raw_data() : &empty_byte_, t.nbytes()));
    try {
      buffer->send(dst, kPointToPointSlotPrefix | uint32_t(tag));
    } catch (const gloo::Exception& e) {
      throw backend_error(c.what, e);
    }
    return std::make_shared<PointToPointWork>(c, timeout(), t, std::move(buffer), /*is_send=*/true);
  }

  WorkPtr run_recv(const Call& c, const Tensor& t, int src, int tag) override {
    auto buffer = std::shared_ptr<gloo::transport::UnboundBuffer>(
        context_->createUnboundBuffer(t.nbytes() ? t.raw_data() : &empty_byte_, t.nbytes()));
    try {
      buffer->recv(src, kPointToPointSlotPrefix | uint32_t(tag));
    } catch (const gloo::Exception& e) {
      throw backend_error(c.what, e);
    }
    return std::make_shared<PointToPointWork>(c, timeout(), t, std::move(buffer), /*is_send=*/false);
  }

  WorkPtr run_barrier(const Call& c) override {
    return enqueue(c, {}, [this, tag = uint32_t(c.seq)] {
      OpGuard guard("gloo:barrier");
      gloo::BarrierOptions opts(context_);
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::barrier(opts);
    });
  }

 private:
  // A send or recv: gloo's buffer completes it; wait() waits on the buffer with the timeout.
  class PointToPointWork : public Work {
   public:
    PointToPointWork(const Call& c, Milliseconds default_timeout, Tensor t,
                     std::shared_ptr<gloo::transport::UnboundBuffer> buffer, bool is_send)
        : default_timeout_(default_timeout), buffer_(std::move(buffer)), is_send_(is_send), ledger_id_(c.ledger_id) {
      description_ = c.what;
      outputs_ = {std::move(t)};
    }
    bool is_completed() override {
      std::lock_guard<std::mutex> lock(mutex_);
      return done_;
    }
    void wait(Milliseconds timeout) override {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done_) {
        if (error_) std::rethrow_exception(error_);
        return;
      }
      if (timeout.count() <= 0) timeout = default_timeout_;
      try {
        const bool ok = is_send_ ? buffer_->waitSend(timeout) : buffer_->waitRecv(timeout);
        if (!ok) throw DistBackendError(fmt::format("{} was aborted", description_));
      } catch (const gloo::IoException& e) {
        // gloo gives up on a timed-out wait by closing the connection to that peer: the operation has
        // failed for good, and so will later ones with that peer in this group.
        if (std::strstr(e.what(), "Timed out") != nullptr || std::strstr(e.what(), "timeout") != nullptr)
          error_ = std::make_exception_ptr(DistBackendError(fmt::format(
              "{} did not finish within {} ms: the peer has not posted the matching {} (same tag), or has died. gloo "
              "closes the connection to that peer when a wait times out, so this group cannot talk to it any more: "
              "destroy it and create a new one (or restart the job)",
              description_, timeout.count(), is_send_ ? "recv" : "send")));
        else
          error_ = std::make_exception_ptr(backend_error(description_, e));
        done_ = true;
        std::rethrow_exception(error_);
      } catch (const gloo::Exception& e) {
        error_ = std::make_exception_ptr(backend_error(description_, e));
        done_ = true;
        detail::ledger_finish(ledger_id_);
        std::rethrow_exception(error_);
      }
      done_ = true;
      detail::ledger_finish(ledger_id_);
    }
    std::exception_ptr exception() override {
      std::lock_guard<std::mutex> lock(mutex_);
      return error_;
    }

   private:
    Milliseconds default_timeout_;
    std::shared_ptr<gloo::transport::UnboundBuffer> buffer_;
    bool is_send_;
    uint64_t ledger_id_;
    std::mutex mutex_;
    bool done_ = false;
    std::exception_ptr error_;
  };

  static DistBackendError backend_error(const std::string& what, const gloo::Exception& e) {
    // A closed connection: the ledger's summaries tell which rank stopped (rank numbers, where gloo knows
    // only addresses). Waits up to 3 s for a silent rank to show; the operation has failed either way.
    std::string who;
    if (dynamic_cast<const gloo::IoException*>(&e) && std::strstr(e.what(), "imed out") == nullptr)
      who = detail::describe_silent_ranks(std::chrono::seconds(3));
    return DistBackendError(fmt::format(
        "{} failed in gloo: {}. {}", what, e.what(),
        who.empty() ? "Hint: a peer of this group stopped (crashed, was killed, or left the job) or the network "
                      "between them failed; the launcher's summary names the rank that ended first"
                    : who));
  }

  WorkPtr enqueue(const Call& c, std::vector<Tensor> outputs, std::function<void()> run) {
    auto work = std::make_shared<AsyncWork>(c.what, timeout(), std::move(outputs));
    worker_->enqueue(work, [what = c.what, id = c.ledger_id, run = std::move(run)] {
      struct Finished {  // the ledger's end time, also when the collective throws
        uint64_t id;
        ~Finished() { detail::ledger_finish(id); }
      } finished{id};
      detail::ledger_start(id);
      try {
        run();
      } catch (const gloo::Exception& e) {
        throw backend_error(what, e);
      }
    });
    return work;
  }

  void all_reduce_now(const Tensor& t, ReduceOp op, uint32_t tag) {
    if (t.numel() == 0) return;
    with_element_type(t.dtype(), [&](auto type) {
      using T = decltype(type);
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(typed<T>(t), size_t(t.numel()));
      opts.setReduceFunction(detail::reduce_function(t.dtype(), op));
      opts.setTag(tag);
      opts.setTimeout(timeout());
      gloo::allreduce(opts);
    });
  }

  void all_gather_bytes(const void* in, void* out, size_t bytes, uint32_t tag) {
    gloo::AllgatherOptions opts(context_);
    opts.setInput(static_cast<uint8_t*>(const_cast<void*>(in)), bytes);
    opts.setOutput(static_cast<uint8_t*>(out), bytes * size_t(size()));
    opts.setTag(tag);
    opts.setTimeout(timeout());
    gloo::allgather(opts);
  }

  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<WorkerThreads> worker_;
  uint8_t empty_byte_ = 0;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store, int rank, int size,
                                              ProcessGroupOptions options) {
  if (!store) throw ValueError("make_gloo_group: the rendezvous store is null; pass the store every rank shares");
  return std::make_shared<GlooGroup>(std::move(store), rank, size, std::move(options));
}

}  // namespace rt::dist
