#include "mpi/mpi_runtime.h"

#include <fmt/core.h>

#include <cstdlib>

#include "rt/dist/errors.h"

namespace rt::dist::mpi {

// Note [MPI thread level]
// We ask MPI_Init_thread for MPI_THREAD_MULTIPLE, because Work::wait and is_completed may be called
// from any thread while another enqueues. When MPI provides less, every MPI call goes through one
// mutex (Runtime::lock). That is exactly what MPI_THREAD_SERIALIZED asks of us; for FUNNELED and
// SINGLE it is the best a library can do without a thread of its own, and Open MPI accepts it in
// practice (its FUNNELED check is not enforced). Debian's Open MPI 4.1 provides MULTIPLE. When
// someone else initialised MPI (mpi4py, the application), we read the level with MPI_Query_thread and
// follow the same rule.
//
// Note [Finalizing MPI]
// MPI is finalized only by whoever initialised it, once, and never while a communicator or a request
// is alive (freeing a communicator or testing a request after MPI_Finalize is an error). So the
// runtime counts its Users (communicators and operations in flight); the atexit handler finalizes
// when none is left, and otherwise the last User to go (a group in a static that is destroyed after
// our handler ran) finalizes. A group leaked until exit leaves MPI unfinalized, and mpirun says so.

const char* thread_level_name(ThreadLevel level) {
  switch (level) {
    case ThreadLevel::Single: return "MPI_THREAD_SINGLE";
    case ThreadLevel::Funneled: return "MPI_THREAD_FUNNELED";
    case ThreadLevel::Serialized: return "MPI_THREAD_SERIALIZED";
    case ThreadLevel::Multiple: return "MPI_THREAD_MULTIPLE";
  }
  return "?";
}

ThreadLevel thread_level() { return Runtime::get().level(); }
bool calls_serialized() { return Runtime::get().serialized(); }
bool initialised_here() { return Runtime::get().initialised_here(); }

namespace {

ThreadLevel to_level(int provided) {
  if (provided >= MPI_THREAD_MULTIPLE) return ThreadLevel::Multiple;
  if (provided >= MPI_THREAD_SERIALIZED) return ThreadLevel::Serialized;
  if (provided >= MPI_THREAD_FUNNELED) return ThreadLevel::Funneled;
  return ThreadLevel::Single;
}

}  // namespace

Runtime& Runtime::get() {
  // Never destroyed: groups in statics may outlive any static of ours.
  static Runtime* runtime = new Runtime();
  return *runtime;
}

Runtime::Runtime() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw DistBackendError(
        "mpi backend: MPI was already finalized in this process, and MPI cannot be initialised twice; create "
        "the mpi process groups before whatever finalizes MPI (mpi4py finalizes at interpreter exit)");
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    // Open MPI's non-blocking all-reduce (libnbc) picks a reduce-then-broadcast algorithm for in-place
    // calls on few ranks, two to three times slower than its ring from 1 MB up on one machine
    // (bench/RESULTS.md, Distributed): ask for the ring unless the user chose (environment, or mca files).
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
      throw DistBackendError(fmt::format(
          "mpi backend: MPI_Init_thread failed with error code {}; start the program under mpirun or srun (or "
          "alone, as a singleton), and check that Open MPI is installed (scripts/setup.sh installs openmpi-bin)",
          rc));
    initialised_here_ = true;
    std::atexit(&Runtime::at_exit);
  }
  level_ = to_level(provided);
  auto guard = lock();
  // Our own world returns errors (make_mpi_group turns them into DistBackendError); a world someone else
  // initialised keeps the handler they chose.
  if (initialised_here_) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  half_ops_.create();
}

std::unique_lock<std::mutex> Runtime::lock() {
  if (level_ == ThreadLevel::Multiple) return {};
  return std::unique_lock<std::mutex>(call_mutex_);
}

std::string Runtime::error_string(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return fmt::format("MPI error code {}", rc);
  return std::string(text, size_t(len));
}

void Runtime::check(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) throw DistBackendError(fmt::format("{}: MPI failed: {}", what, error_string(rc)));
}

Runtime::User::User() {
  Runtime& r = get();
  std::lock_guard<std::mutex> g(r.users_mutex_);
  ++r.users_;
}

Runtime::User::~User() { get().release(); }

void Runtime::release() {
  bool finalize = false;
  {
    std::lock_guard<std::mutex> g(users_mutex_);
    finalize = --users_ == 0 && exiting_;
  }
  if (finalize) {
    auto guard = lock();
    half_ops_.free();
    MPI_Finalize();
  }
}

void Runtime::keep_until_finished(std::shared_ptr<InFlight> op) {
  std::lock_guard<std::mutex> g(in_flight_mutex_);
  in_flight_.push_back(std::move(op));
}

void Runtime::prune() {
  std::vector<std::shared_ptr<InFlight>> finished;  // destroyed after the lock is released
  std::lock_guard<std::mutex> g(in_flight_mutex_);
  for (size_t i = 0; i < in_flight_.size();) {
    if (in_flight_[i]->poll()) {
      finished.push_back(std::move(in_flight_[i]));
      in_flight_[i] = std::move(in_flight_.back());
      in_flight_.pop_back();
    } else {
      ++i;
    }
  }
}

void Runtime::at_exit() {
  Runtime& r = get();
  // Poll, but destroy nothing: a Work still registered may hold tensors whose allocator (a static
  // constructed after MPI_Init) is already gone. Finished operations have let go of their
  // communicator, so the count of Users is exact; the Works stay reachable from this runtime.
  {
    std::lock_guard<std::mutex> g(r.in_flight_mutex_);
    for (auto& op : r.in_flight_) op->poll();
  }
  bool finalize = false;
  {
    std::lock_guard<std::mutex> g(r.users_mutex_);
    r.exiting_ = true;
    finalize = r.users_ == 0;
  }
  if (finalize) {
    auto guard = r.lock();
    r.half_ops_.free();
    MPI_Finalize();
  }
}

}  // namespace rt::dist::mpi
