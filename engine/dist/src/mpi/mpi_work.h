// mpi/mpi_work.h — the Work of one non-blocking MPI call: it holds the MPI_Request, the communicator
// and every tensor and buffer the call reads or writes, until the request completes. Internal.
#pragma once
#include <mpi.h>

#include <functional>
#include <mutex>

#include "mpi/mpi_runtime.h"
#include "rt/dist/process_group.h"

namespace rt::dist::mpi {

// One group's communicator, freed when the group and its last operation in flight are gone.
struct Communicator {
  Runtime::User user;  // declared first: MPI stays initialised until MPI_Comm_free below has run
  MPI_Comm comm = MPI_COMM_NULL;
  explicit Communicator(MPI_Comm c) : comm(c) {}
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
};

class MpiWork final : public Work, public Runtime::InFlight {
 public:
  MpiWork(std::string description, std::vector<Tensor> outputs, std::shared_ptr<Communicator> comm,
          Milliseconds group_timeout);

  bool is_completed() override;
  void wait(Milliseconds timeout = Milliseconds(0)) override;
  std::exception_ptr exception() override;
  bool poll() override { return is_completed(); }

  // Set up by the group before the MPI call starts; released when the request completes.
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<Tensor> inputs;            // kept alive while MPI reads them
  std::vector<uint8_t> staging;          // a contiguous buffer MPI reads or writes instead of the tensors
  std::vector<int> counts[4];            // v-collectives' counts and displacements (alive until done)
  std::function<void()> on_success;      // runs once the request succeeded: copy-out, ReduceOp::Avg
  uint64_t ledger_id = 0;                // the call's record in the collective ledger, finished with it

 private:
  void finish();  // drops everything MPI no longer touches

  std::mutex mutex_;
  std::shared_ptr<Communicator> comm_;
  Milliseconds group_timeout_;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace rt::dist::mpi
