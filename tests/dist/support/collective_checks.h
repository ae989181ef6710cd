// collective_checks.h — a backend-independent conformance check of a ProcessGroup's collectives, run by
// every member of the group at once (tests/dist/programs/dist_collectives.cpp runs it per backend).
//
//   std::shared_ptr<rt::dist::ProcessGroup> pg = rt::dist::make_mpi_group();
//   int failures = run_collective_checks(*pg, std::cerr);   // every rank calls it, in the same order
//
// For every collective (all_reduce with each ReduceOp, broadcast, reduce, all_gather,
// all_gather_into_tensor, reduce_scatter_tensor, gather, scatter, all_to_all_single with equal, uneven
// and empty splits, a send/recv ring, barrier), every dtype in the options, and empty, one-element and
// uneven sizes, each rank fills its inputs from a formula of (rank, index), computes what it must
// receive from the same formulas, and compares exactly: values are small integers (or powers of two for
// products) that float16 and bfloat16 hold exactly, so every sum and product is exact in any order.
// Several operations are also left in flight at once before their Works are waited on.
//
// Each failure is one line in `log` naming the rank, the collective, the dtype, the size and the first
// element that differs; a collective that throws counts as a failure (its message is logged). The
// return value is the number of failures on this rank.
#pragma once
#include <chrono>
#include <ostream>
#include <vector>

#include "rt/dist/process_group.h"

struct CollectiveCheckOptions {
  // The dtypes to check; every one must work (a backend that refuses one is checked without it).
  std::vector<rt::ScalarType> dtypes = {rt::kBool,    rt::kUInt8,    rt::kInt32,   rt::kInt64,
                                        rt::kFloat16, rt::kBFloat16, rt::kFloat32, rt::kFloat64};
  // How long each Work may take before it counts as hung.
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

int run_collective_checks(rt::dist::ProcessGroup& pg, std::ostream& log, const CollectiveCheckOptions& options);
int run_collective_checks(rt::dist::ProcessGroup& pg, std::ostream& log);
