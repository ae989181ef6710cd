#include "mpi/mpi_types.h"

#include <fmt/core.h>

namespace rt::dist::mpi {

namespace {

enum OpIndex { kSum, kProduct, kMin, kMax };

template <typename H, OpIndex kOp>
void reduce_halves(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    H x, y;
    x.bits = a[i];
    y.bits = b[i];
    const float fx = x, fy = y;
    float r;
    if constexpr (kOp == kSum) r = fx + fy;
    else if constexpr (kOp == kProduct) r = fx * fy;
    else if constexpr (kOp == kMin) r = fy < fx ? fy : fx;
    else r = fy > fx ? fy : fx;
    b[i] = H(r).bits;
  }
}

template <typename H>
void create_ops(MPI_Op (&ops)[4]) {
  MPI_Op_create(&reduce_halves<H, kSum>, 1, &ops[kSum]);
  MPI_Op_create(&reduce_halves<H, kProduct>, 1, &ops[kProduct]);
  MPI_Op_create(&reduce_halves<H, kMin>, 1, &ops[kMin]);
  MPI_Op_create(&reduce_halves<H, kMax>, 1, &ops[kMax]);
}

OpIndex index_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return kSum;
    case ReduceOp::Product: return kProduct;
    case ReduceOp::Min: return kMin;
    case ReduceOp::Max: return kMax;
  }
  return kSum;
}

}  // namespace

void HalfOps::create() {
  create_ops<Half>(half);
  create_ops<BFloat16>(bfloat16);
}

void HalfOps::free() {
  for (MPI_Op* ops : {half, bfloat16})
    for (int i = 0; i < 4; ++i)
      if (ops[i] != MPI_OP_NULL) MPI_Op_free(&ops[i]);
}

MPI_Datatype datatype_of(ScalarType dtype) {
  switch (dtype) {
    case kBool: return MPI_C_BOOL;
    case kUInt8: return MPI_UINT8_T;
    case kInt32: return MPI_INT32_T;
    case kInt64: return MPI_INT64_T;
    case kFloat16:
    case kBFloat16: return MPI_UINT16_T;
    case kFloat32: return MPI_FLOAT;
    case kFloat64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op op_of(ScalarType dtype, ReduceOp op, const HalfOps& half_ops) {
  const OpIndex i = index_of(op);
  if (dtype == kFloat16) return half_ops.half[i];
  if (dtype == kBFloat16) return half_ops.bfloat16[i];
  if (dtype == kBool) return i == kSum || i == kMax ? MPI_LOR : MPI_LAND;
  switch (i) {
    case kSum: return MPI_SUM;
    case kProduct: return MPI_PROD;
    case kMin: return MPI_MIN;
    case kMax: return MPI_MAX;
  }
  return MPI_SUM;
}

void divide_in_place(void* data, int64_t count, ScalarType dtype, int divisor) {
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, compute_t<T>> && !std::is_floating_point_v<T>) {
      throw DTypeError(fmt::format("ReduceOp.AVG on {}: only floating-point dtypes can be averaged",
                                   dtype_name(dtype)));
    } else {
      T* p = static_cast<T*>(data);
      const compute_t<T> d = compute_t<T>(divisor);
      for (int64_t i = 0; i < count; ++i) p[i] = T(compute_t<T>(p[i]) / d);
    }
  });
}

}  // namespace rt::dist::mpi
