// dist_collectives — runs the collective conformance checks (tests/dist/support/collective_checks.h) on
// one backend, on the world group and on a sub-group, and exits non-zero when any check fails.
//
//   mpirun -np 4 --oversubscribe build/bin/dist_collectives --backend mpi
//
// Sub-group: ranks {1, 0} (the world reversed) for 2 ranks, {0, 2} for 3, the odd ranks for 4 or more.
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include "collective_checks.h"
#include "rt/dist/process_group.h"

namespace {

int usage(const char* why) {
  std::fprintf(stderr, "dist_collectives: %s\nusage: dist_collectives --backend mpi|gloo\n", why);
  return 2;
}

std::vector<int> sub_group_ranks(int world_size) {
  if (world_size == 2) return {1, 0};
  if (world_size == 3) return {0, 2};
  std::vector<int> odd;
  for (int r = 1; r < world_size; r += 2) odd.push_back(r);
  return odd;
}

// One write per report, so the ranks' lines do not interleave.
void print(int rank, const std::string& text) {
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line)) out += fmt::format("[rank {}] {}\n", rank, line);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int env_int(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  if (!v) v = std::getenv(fallback);
  if (!v) throw std::runtime_error(fmt::format("neither {} nor {} is set: start this under mpirun", name, fallback));
  return std::atoi(v);
}

int main(int argc, char** argv) {
  std::string backend;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) backend = argv[++i];
    else return usage(fmt::format("unknown argument '{}'", argv[i]).c_str());
  }
  if (backend.empty()) return usage("--backend is required");

  try {
    std::shared_ptr<rt::dist::ProcessGroup> world, sub;
    std::vector<int> members;
    if (backend == "mpi") {
      world = rt::dist::make_mpi_group();
      members = sub_group_ranks(world->size());
      rt::dist::ProcessGroupOptions options;
      options.group_name = "sub";
      options.global_ranks = members;
      // MPI: only the members create a sub-group.
      for (int r : members)
        if (r == world->rank()) sub = rt::dist::make_mpi_group(options);
    }
    else if (backend == "gloo") {
      // mpirun only starts the processes: rank and size from its environment, rendezvous through a
      // FileStore named after mpirun's job id (fresh for every run; the last rank to close removes it).
      const int rank = env_int("OMPI_COMM_WORLD_RANK", "RANK"), size = env_int("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE");
      const char* job = std::getenv("OMPI_MCA_ess_base_jobid");
      const std::string path = (std::filesystem::temp_directory_path() /
                                fmt::format("rt_dist_collectives_{}", job ? job : std::to_string(getppid())))
                                   .string();
      auto store = std::make_shared<rt::dist::FileStore>(path, size);
      store->set_timeout(std::chrono::seconds(60));
      world = rt::dist::make_gloo_group(store, rank, size);
      members = sub_group_ranks(size);
      rt::dist::ProcessGroupOptions options;
      options.group_name = "sub";
      options.global_ranks = members;
      for (size_t i = 0; i < members.size(); ++i)
        if (members[i] == rank)
          sub = rt::dist::make_gloo_group(std::make_shared<rt::dist::PrefixStore>("sub", store), int(i), int(members.size()),
                                          options);
    } else {
      return usage(fmt::format("backend '{}' is not set up in this program (it knows: mpi, gloo)", backend).c_str());
    }

    const int rank = world->rank();
    std::ostringstream log;
    int failures = run_collective_checks(*world, log);
    if (sub) failures += run_collective_checks(*sub, log);
    print(rank, log.str());
    world->barrier()->wait();  // sub-group members finish before anyone tears down
    if (failures) {
      print(rank, fmt::format("dist_collectives --backend {}: {} failures on this rank", backend, failures));
      return 1;
    }
    print(rank, fmt::format("dist_collectives --backend {}: all checks passed on this rank (world of {}{})", backend,
                            world->size(), sub ? fmt::format(", sub-group of {}", sub->size()) : std::string()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_collectives --backend %s: %s\n", backend.c_str(), e.what());
    return 1;
  }
}
