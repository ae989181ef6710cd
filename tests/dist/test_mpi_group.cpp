// The mpi backend's own contracts (argument errors, timeouts, thread level). ctest runs this binary
// under mpirun -np 1 and -np 2; the cases that need a peer log that they skipped on one rank.
// The collectives' results are checked by dist_collectives (support/collective_checks.h).
#include <mpi.h>

#include <catch2/catch.hpp>
#include <thread>

#include "mpi/mpi_environment.h"
#include "rt/dist/process_group.h"
#include "rt/ops/creation.h"

using namespace rt::dist;
using Catch::Matchers::Contains;

namespace {

ProcessGroup& world() {
  static std::shared_ptr<ProcessGroup> pg = make_mpi_group();
  return *pg;
}

}  // namespace

TEST_CASE("the mpi group takes rank and size from MPI_COMM_WORLD") {
  int rank = -1, size = -1;
  world();  // initialises MPI
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(world().rank() == rank);
  CHECK(world().size() == size);
  CHECK(std::string(world().backend_name()) == "mpi");
  CHECK(is_mpi_available());
}

TEST_CASE("the thread level MPI provides is recorded and decides whether calls are serialized") {
  int provided = -1;
  world();
  MPI_Query_thread(&provided);
  const mpi::ThreadLevel level = mpi::thread_level();
  INFO("MPI provides " << mpi::thread_level_name(level));
  CHECK(int(level) == (provided == MPI_THREAD_MULTIPLE     ? 3
                       : provided == MPI_THREAD_SERIALIZED ? 2
                       : provided == MPI_THREAD_FUNNELED   ? 1
                                                           : 0));
  CHECK(mpi::calls_serialized() == (level != mpi::ThreadLevel::Multiple));
  CHECK(mpi::initialised_here());  // nothing else in this program initialises MPI
  CHECK_THAT(mpi::thread_level_name(level), Contains("MPI_THREAD_"));
}

TEST_CASE("mpi collectives refuse bad arguments before anything is sent") {
  ProcessGroup& pg = world();
  rt::Tensor non_contiguous = rt::zeros({4, 3}).transpose(0, 1);
  CHECK_THROWS_AS(pg.all_reduce(non_contiguous), rt::ValueError);
  CHECK_THROWS_WITH(pg.all_reduce(non_contiguous), Contains("not contiguous") && Contains("all_reduce"));

  rt::Tensor f = rt::zeros({2});
  rt::Tensor out = rt::zeros({2 * pg.size()}, rt::kInt64);
  CHECK_THROWS_AS(pg.all_gather_into_tensor(out, f), rt::DTypeError);
  CHECK_THROWS_AS(pg.all_reduce(rt::zeros({2}, rt::kInt32), ReduceOp::Avg), rt::DTypeError);
  CHECK_THROWS_AS(pg.all_gather({}, f), rt::ValueError);
  CHECK_THROWS_AS(pg.send(f, pg.rank()), rt::ValueError);
  CHECK_THROWS_AS(pg.broadcast(f, pg.size()), rt::ValueError);
  // Refused calls still count, so every rank's sequence numbers stay equal.
  pg.barrier()->wait();
}

TEST_CASE("an mpi sub-group must list this process and real ranks") {
  ProcessGroupOptions options;
  options.group_name = "outsiders";
  options.global_ranks = {world().size()};
  CHECK_THROWS_WITH(make_mpi_group(options), Contains("is not in MPI_COMM_WORLD"));
  options.global_ranks = {world().rank(), world().rank()};
  CHECK_THROWS_WITH(make_mpi_group(options), Contains("listed twice"));
  if (world().size() >= 2) {
    options.global_ranks = {(world().rank() + 1) % world().size()};
    CHECK_THROWS_AS(make_mpi_group(options), rt::ValueError);
    CHECK_THROWS_WITH(make_mpi_group(options), Contains("is not a member") && Contains("outsiders"));
  }
}

TEST_CASE("a sub-group in reversed order translates ranks") {
  ProcessGroup& w = world();
  ProcessGroupOptions options;
  options.group_name = "reversed";
  for (int r = w.size() - 1; r >= 0; --r) options.global_ranks.push_back(r);
  auto pg = make_mpi_group(options);
  CHECK(pg->rank() == w.size() - 1 - w.rank());
  CHECK(pg->global_rank(pg->rank()) == w.rank());
  rt::Tensor t = rt::full({3}, double(pg->rank()), rt::kFloat64);
  pg->broadcast(t, 0)->wait();  // group rank 0 is the last global rank
  CHECK(t.to_vector<double>() == std::vector<double>(3, 0.0));
  rt::Tensor id = rt::full({1}, double(w.rank()), rt::kFloat64);
  pg->broadcast(id, 0)->wait();
  CHECK(id.item<double>() == double(w.size() - 1));
}

TEST_CASE("a Work that does not finish in time names the operation and the timeout") {
  ProcessGroup& pg = world();
  if (pg.size() < 2) {
    WARN("one rank: the recv timeout needs a peer (ctest also runs this under mpirun -np 2)");
    return;
  }
  rt::Tensor t = rt::zeros({5});
  if (pg.rank() == 0) {
    WorkPtr w = pg.recv(t, 1, /*tag=*/3);
    CHECK_FALSE(w->is_completed());
    CHECK_THROWS_AS(w->wait(std::chrono::milliseconds(200)), DistBackendError);
    CHECK_THROWS_WITH(w->wait(std::chrono::milliseconds(200)),
                      Contains("recv #") && Contains("timed out after 200 ms") && Contains("group 'default'"));
    CHECK_FALSE(w->is_completed());
    CHECK(w->exception() == nullptr);
    pg.barrier()->wait();  // lets rank 1 send: the recv then completes
    w->wait();
    CHECK(w->is_success());
    CHECK(t.to_vector<float>() == std::vector<float>(5, 42.0f));
  } else {
    pg.barrier()->wait();
    if (pg.rank() == 1) pg.send(rt::full({5}, 42.0), 0, 3)->wait();
  }
}

TEST_CASE("averages of float16 and bfloat16 divide after the sum") {
  ProcessGroup& pg = world();
  for (rt::ScalarType dt : {rt::kFloat16, rt::kBFloat16}) {
    rt::Tensor t = rt::full({4}, 2.0 * (pg.rank() + 1), dt);
    pg.all_reduce(t, ReduceOp::Avg)->wait();
    CHECK(t.to(rt::kFloat32).to_vector<float>() == std::vector<float>(4, float(pg.size() + 1)));
  }
}

TEST_CASE("a Work dropped before it finished is still completed and its tensor kept alive") {
  ProcessGroup& pg = world();
  {
    rt::Tensor t = rt::ones({1 << 16});
    pg.all_reduce(t);  // handle dropped at once: the backend keeps t until MPI is done with it
  }
  rt::Tensor check = rt::ones({3});
  pg.all_reduce(check)->wait();
  CHECK(check.to_vector<float>() == std::vector<float>(3, float(pg.size())));
}

TEST_CASE("waits on one Work from several threads agree") {
  ProcessGroup& pg = world();
  rt::Tensor t = rt::full({1000}, 1.0, rt::kFloat64);
  WorkPtr w = pg.all_reduce(t);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([w] { w->wait(); });
  for (auto& th : threads) th.join();
  CHECK(w->is_success());
  CHECK(t.to_vector<double>() == std::vector<double>(1000, double(pg.size())));
}
