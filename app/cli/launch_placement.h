// app/cli/launch_placement.h — which rank a `rtorch launch-rank` process is, from what started it.
//
//   // under `rtorch launch --nproc-per-node 4 --nnodes 2 --node-rank 1` (mpirun -np 4 on this node):
//   RankPlacement p = resolve_placement({4, 2, 1}, getenv_fn);   // OMPI_COMM_WORLD_LOCAL_RANK=2
//   // p.rank == 6, p.local_rank == 2, p.world_size == 8, p.local_world_size == 4, p.group_rank == 1
//
// The local rank comes from OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's mpirun), else SLURM_LOCALID (srun),
// else PMIX_RANK (another PMIx launcher on one node). With nproc_per_node, nnodes and node_rank all given
// (as `rtorch launch` does), RANK = node_rank * nproc_per_node + local rank. Without them the scheduler's
// own numbering is used: RANK from OMPI_COMM_WORLD_RANK / SLURM_PROCID / PMIX_RANK, WORLD_SIZE from
// OMPI_COMM_WORLD_SIZE / SLURM_NTASKS, LOCAL_WORLD_SIZE from OMPI_COMM_WORLD_LOCAL_SIZE /
// SLURM_NTASKS_PER_NODE (else WORLD_SIZE / SLURM_NNODES), GROUP_RANK from SLURM_NODEID (else
// RANK / LOCAL_WORLD_SIZE). Throws std::runtime_error naming the missing variables.
#pragma once
#include <functional>
#include <string>

namespace rt::cli {

struct PlacementRequest {
  int nproc_per_node = 0;  // 0: not given
  int nnodes = 0;          // 0: not given
  int node_rank = -1;      // -1: not given
};

struct RankPlacement {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  int group_rank = 0;   // the node's rank (torchrun's GROUP_RANK)
  int group_count = 1;  // the number of nodes (torchrun's GROUP_WORLD_SIZE)
};

using EnvLookup = std::function<const char*(const char*)>;

RankPlacement resolve_placement(const PlacementRequest& request, const EnvLookup& env);

}  // namespace rt::cli
