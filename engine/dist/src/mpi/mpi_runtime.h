// mpi/mpi_runtime.h — the process's MPI: initialised once, shared by every mpi group, finalized at exit
// after the last group and the last operation in flight are gone. Internal to the mpi backend.
#pragma once
#include <mpi.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/mpi_environment.h"
#include "mpi/mpi_types.h"

namespace rt::dist::mpi {

class Runtime {
 public:
  // The process's runtime; initialises MPI on first use (throws DistBackendError when it cannot).
  static Runtime& get();

  ThreadLevel level() const { return level_; }
  bool serialized() const { return level_ != ThreadLevel::Multiple; }
  bool initialised_here() const { return initialised_here_; }

  // Held around every MPI call. Locks the one mutex when MPI provides less than MPI_THREAD_MULTIPLE;
  // an empty (unlocked) lock otherwise.
  std::unique_lock<std::mutex> lock();

  // Throws DistBackendError "<what>: <MPI's error string>" when rc is not MPI_SUCCESS.
  static void check(int rc, const std::string& what);
  static std::string error_string(int rc);

  // The MPI_Op reducing `op` over rt's float16 / bfloat16 values (created once, after MPI_Init).
  const HalfOps& half_ops() const { return half_ops_; }

  // Every communicator and every operation in flight holds a User: MPI is finalized at exit only
  // once none is left (see Note [Finalizing MPI]).
  // An operation whose buffers MPI may still read or write. The runtime keeps it alive until poll()
  // says it finished, even when its Work handle was dropped (MPI cannot cancel a collective).
  class InFlight {
   public:
    virtual ~InFlight() = default;
    virtual bool poll() = 0;  // true once finished; never blocks
  };
  void keep_until_finished(std::shared_ptr<InFlight> op);
  // Polls what is in flight and lets go of what finished (each enqueue does; so does exit).
  void prune();

  struct User {
    User();
    ~User();
    User(const User&) = delete;
    User& operator=(const User&) = delete;
  };

 private:
  Runtime();
  static void at_exit();
  void release();

  ThreadLevel level_ = ThreadLevel::Single;
  bool initialised_here_ = false;
  std::mutex call_mutex_;
  std::mutex users_mutex_;
  int users_ = 0;
  bool exiting_ = false;
  HalfOps half_ops_;
  std::mutex in_flight_mutex_;
  std::vector<std::shared_ptr<InFlight>> in_flight_;
};

}  // namespace rt::dist::mpi
