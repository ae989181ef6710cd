#include "launch_placement.h"

#include <fmt/core.h>

#include <charconv>
#include <initializer_list>
#include <optional>
#include <stdexcept>

namespace rt::cli {
namespace {

// The first of `names` that is set, as a non-negative integer; a set but malformed value is an error.
std::optional<int> first_int(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = env(name);
    if (!value || !*value) continue;
    int v = 0;
    const char* end = value + std::char_traits<char>::length(value);
    auto [ptr, ec] = std::from_chars(value, end, v);
    if (ec != std::errc{} || ptr != end || v < 0)
      throw std::runtime_error(fmt::format("{}='{}' is not a non-negative integer", name, value));
    return v;
  }
  return std::nullopt;
}

}  // namespace

RankPlacement resolve_placement(const PlacementRequest& request, const EnvLookup& env) {
  const std::optional<int> local = first_int(env, {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PMIX_RANK"});
  if (!local)
    throw std::runtime_error(
        "no rank given by a launcher: none of OMPI_COMM_WORLD_LOCAL_RANK (mpirun), SLURM_LOCALID (srun) or "
        "PMIX_RANK is set; start this through `rtorch launch`, mpirun or srun");

  RankPlacement p;
  p.local_rank = *local;
  if (request.nproc_per_node > 0 && request.nnodes > 0 && request.node_rank >= 0) {
    if (p.local_rank >= request.nproc_per_node)
      throw std::runtime_error(fmt::format("local rank {} is out of range for --nproc-per-node {}", p.local_rank,
                                           request.nproc_per_node));
    p.local_world_size = request.nproc_per_node;
    p.group_rank = request.node_rank;
    p.group_count = request.nnodes;
    p.world_size = request.nnodes * request.nproc_per_node;
    p.rank = request.node_rank * request.nproc_per_node + p.local_rank;
    return p;
  }

  const std::optional<int> rank = first_int(env, {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMIX_RANK"});
  const std::optional<int> world = first_int(env, {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"});
  if (!rank || !world)
    throw std::runtime_error(
        "the launcher did not give the job's size: set OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun) or "
        "SLURM_PROCID/SLURM_NTASKS (srun), or pass --nproc-per-node, --nnodes and --node-rank");
  p.rank = *rank;
  p.world_size = *world;
  std::optional<int> local_world = first_int(env, {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"});
  const std::optional<int> nodes = first_int(env, {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
  if (!local_world) local_world = nodes && *nodes > 0 ? *world / *nodes : *world;
  p.local_world_size = *local_world > 0 ? *local_world : 1;
  const std::optional<int> node = first_int(env, {"SLURM_NODEID"});
  p.group_rank = node ? *node : p.rank / p.local_world_size;
  p.group_count = nodes ? *nodes : (p.world_size + p.local_world_size - 1) / p.local_world_size;
  if (p.rank >= p.world_size)
    throw std::runtime_error(fmt::format("rank {} is out of range for a world of {}", p.rank, p.world_size));
  return p;
}

}  // namespace rt::cli
