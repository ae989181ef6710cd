// mpi/mpi_types.h — rt's dtypes and reduce ops as MPI sees them. Internal to the mpi backend.
#pragma once
#include <mpi.h>

#include "rt/dist/process_group.h"
#include "rt/dtype.h"

namespace rt::dist::mpi {

// The reductions MPI has no type for: float16 and bfloat16 values travel as MPI_UINT16_T and are
// reduced by user-defined ops that compute in float (rt::Half / rt::BFloat16 conversions).
struct HalfOps {
  MPI_Op half[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};      // Sum, Product, Min, Max
  MPI_Op bfloat16[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // Sum, Product, Min, Max
  void create();  // after MPI_Init
  void free();    // before MPI_Finalize
};

// The MPI datatype that moves `dtype`'s elements (bool: MPI_C_BOOL; float16/bfloat16: MPI_UINT16_T).
MPI_Datatype datatype_of(ScalarType dtype);
// The MPI_Op that reduces `dtype` by `op` (Avg reduces by Sum; the caller divides afterwards). Bool
// follows PyTorch: Sum and Max are logical or, Product and Min logical and.
MPI_Op op_of(ScalarType dtype, ReduceOp op, const HalfOps& half_ops);
// Divides `count` elements at `data` by `divisor` in place (ReduceOp::Avg; floating dtypes only).
void divide_in_place(void* data, int64_t count, ScalarType dtype, int divisor);

}  // namespace rt::dist::mpi
