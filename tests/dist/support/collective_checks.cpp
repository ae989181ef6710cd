#include "collective_checks.h"

#include <fmt/core.h>

#include <cmath>
#include <functional>
#include <string>

#include "rt/ops/creation.h"

using rt::ScalarType;
using rt::Shape;
using rt::Tensor;
using rt::dist::ProcessGroup;
using rt::dist::ReduceOp;
using rt::dist::WorkPtr;

namespace {

// Element counts: empty, one element, and uneven sizes no chunking divides.
constexpr int64_t kSizes[] = {0, 1, 7, 1031};
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Product, ReduceOp::Min, ReduceOp::Max};

template <typename T>
T to_element(double x) {
  if constexpr (std::is_same_v<T, bool>) return x != 0;
  else return T(rt::compute_t<T>(x));
}

template <typename T>
double from_element(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? 1 : 0;
  else return double(rt::compute_t<T>(v));
}

bool is_half(ScalarType dt) { return dt == rt::kFloat16 || dt == rt::kBFloat16; }

// What rank `rank` holds at `i` for the operations that only move data: distinct per (rank, i) and
// exact in the dtype (float16 and bfloat16 hold the integers 0..256 exactly).
double data_value(ScalarType dt, int rank, int64_t i) {
  switch (dt) {
    case rt::kBool: return (rank * 3 + i) % 5 < 2;
    case rt::kUInt8:
    case rt::kFloat16:
    case rt::kBFloat16: return double((rank * 37 + i) % 251);
    default: return double(rank) * 100003 + double(i);
  }
}

// What rank `rank` contributes at `i` to a reduction by `op`, chosen so the exact result fits the dtype.
double reduce_value(ScalarType dt, ReduceOp op, int rank, int size, int64_t i) {
  const bool small = dt == rt::kUInt8 || is_half(dt);
  switch (op) {
    case ReduceOp::Sum:
      if (dt == rt::kBool) return (rank + i) % 3 == 0;
      return small ? double((rank * 7 + i) % 13) : double(rank) * 1000 + double(i);
    case ReduceOp::Avg:  // the ranks' offsets cancel: the sum is size * (i % 9), the average i % 9
      return double(i % 9) + 2.0 * rank - (size - 1);
    case ReduceOp::Product:
      if (dt == rt::kBool) return (rank + i) % 4 != 0;
      if (rt::is_floating(dt)) return std::ldexp(1.0, int((rank + i) % 3) - 1);  // 0.5, 1, 2
      return rank < 7 ? double(1 + (rank + i) % 2) : 1.0;                         // at most 2^7
    case ReduceOp::Min:
    case ReduceOp::Max:
      if (dt == rt::kBool) return (rank + i) % 2 == 0;
      return double((rank * 5 + i * 3) % 17) - (dt == rt::kUInt8 ? 0 : 8);
  }
  return 0;
}

// The reduction of every rank's reduce_value at `i` (PyTorch's rules: Bool sums are or, products and).
double reduced(ScalarType dt, ReduceOp op, int size, int64_t i) {
  double acc = reduce_value(dt, op, 0, size, i);
  for (int r = 1; r < size; ++r) {
    const double v = reduce_value(dt, op, r, size, i);
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: acc = dt == rt::kBool ? double(acc != 0 || v != 0) : acc + v; break;
      case ReduceOp::Product: acc = dt == rt::kBool ? double(acc != 0 && v != 0) : acc * v; break;
      case ReduceOp::Min: acc = std::min(acc, v); break;
      case ReduceOp::Max: acc = std::max(acc, v); break;
    }
  }
  return op == ReduceOp::Avg ? acc / size : acc;
}

Tensor make(ScalarType dt, const Shape& shape, const std::function<double(int64_t)>& value) {
  Tensor t = rt::empty(shape, dt);
  rt::visit_dtype(dt, [&]<typename T>() {
    T* p = t.numel() ? t.data_ptr<T>() : nullptr;
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = to_element<T>(value(i));
  });
  return t;
}

class Checker {
 public:
  Checker(ProcessGroup& pg, std::ostream& log, const CollectiveCheckOptions& options)
      : pg_(pg), log_(log), options_(options), rank_(pg.rank()), size_(pg.size()) {}

  int run() {
    for (ScalarType dt : options_.dtypes) {
      for (int64_t n : kSizes) {
        for (ReduceOp op : kOps)
          if (op != ReduceOp::Avg || rt::is_floating(dt)) {
            all_reduce(dt, op, n);
            reduce(dt, op, n, size_ - 1);
            reduce_scatter(dt, op, n);
          }
        broadcast(dt, n, 0);
        broadcast(dt, n, size_ - 1);
        all_gather(dt, n);
        all_gather_into_tensor(dt, n);
        gather(dt, n, 1 % size_);
        scatter(dt, n, 0);
        send_recv_ring(dt, n);
      }
      all_to_all(dt, [](int, int) { return int64_t(2); }, "equal splits");
      all_to_all(dt, [](int src, int dst) { return int64_t((src + 2 * dst) % 3); }, "uneven splits");
      all_to_all(dt, [](int, int) { return int64_t(0); }, "empty splits");
      in_flight_together(dt);
    }
    check("barrier", [&] {
      WorkPtr w = pg_.barrier();
      wait(w);
      if (!w->is_completed()) fail("barrier", "is_completed() is false after wait()");
    });
    log_ << fmt::format("collective checks, group '{}' ({}), rank {} of {}: {} checks, {} failures\n",
                        pg_.group_name(), pg_.backend_name(), rank_, size_, checks_, failures_);
    return failures_;
  }

 private:
  void fail(const std::string& what, const std::string& why) {
    ++failures_;
    log_ << fmt::format("FAIL rank {} of group '{}': {}: {}\n", rank_, pg_.group_name(), what, why);
  }

  void check(const std::string& what, const std::function<void()>& body) {
    ++checks_;
    try {
      body();
    } catch (const std::exception& e) {
      fail(what, fmt::format("threw: {}", e.what()));
    }
  }

  void wait(const WorkPtr& w) { w->wait(options_.timeout); }

  // Compares every element of `t` with `expected`; reports the first difference and how many differ.
  void expect(const std::string& what, const Tensor& t, const std::function<double(int64_t)>& expected) {
    rt::visit_dtype(t.dtype(), [&]<typename T>() {
      const T* p = t.numel() ? t.data_ptr<T>() : nullptr;
      int64_t wrong = 0, first = -1;
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (from_element(p[i]) != from_element(to_element<T>(expected(i)))) {
          if (first < 0) first = i;
          ++wrong;
        }
      }
      if (wrong)
        fail(what, fmt::format("{} of {} elements differ; the first, element {}, is {} but should be {}", wrong,
                               t.numel(), first, from_element(p[first]),
                               from_element(to_element<T>(expected(first)))));
    });
  }

  std::string name(const char* collective, ScalarType dt, int64_t n, const std::string& extra = "") const {
    return fmt::format("{}{} {} numel {}", collective, extra.empty() ? "" : " " + extra, rt::dtype_name(dt), n);
  }

  void all_reduce(ScalarType dt, ReduceOp op, int64_t n) {
    const std::string what = name("all_reduce", dt, n, rt::dist::reduce_op_name(op));
    check(what, [&] {
      Tensor t = make(dt, {n}, [&](int64_t i) { return reduce_value(dt, op, rank_, size_, i); });
      WorkPtr w = pg_.all_reduce(t, op);
      wait(w);
      if (w->result().size() != 1 || !w->result()[0].is_same(t)) fail(what, "result() is not the reduced tensor");
      expect(what, t, [&](int64_t i) { return reduced(dt, op, size_, i); });
    });
  }

  void reduce(ScalarType dt, ReduceOp op, int64_t n, int root) {
    const std::string what = name("reduce", dt, n, fmt::format("{} to {}", rt::dist::reduce_op_name(op), root));
    check(what, [&] {
      Tensor t = make(dt, {n}, [&](int64_t i) { return reduce_value(dt, op, rank_, size_, i); });
      wait(pg_.reduce(t, root, op));
      if (rank_ == root) expect(what, t, [&](int64_t i) { return reduced(dt, op, size_, i); });
    });
  }

  void reduce_scatter(ScalarType dt, ReduceOp op, int64_t n) {
    const std::string what = name("reduce_scatter_tensor", dt, n, rt::dist::reduce_op_name(op));
    check(what, [&] {
      Tensor input = make(dt, {n * size_}, [&](int64_t i) { return reduce_value(dt, op, rank_, size_, i); });
      Tensor output = make(dt, {n}, [](int64_t) { return 1.0; });
      wait(pg_.reduce_scatter_tensor(output, input, op));
      expect(what, output, [&](int64_t i) { return reduced(dt, op, size_, rank_ * n + i); });
    });
  }

  void broadcast(ScalarType dt, int64_t n, int root) {
    const std::string what = name("broadcast", dt, n, fmt::format("from {}", root));
    check(what, [&] {
      Tensor t = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      wait(pg_.broadcast(t, root));
      expect(what, t, [&](int64_t i) { return data_value(dt, root, i); });
    });
  }

  void all_gather(ScalarType dt, int64_t n) {
    const std::string what = name("all_gather", dt, n);
    check(what, [&] {
      Tensor input = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      std::vector<Tensor> outputs;
      for (int r = 0; r < size_; ++r) outputs.push_back(make(dt, {n}, [](int64_t) { return 1.0; }));
      WorkPtr w = pg_.all_gather(outputs, input);
      wait(w);
      for (int r = 0; r < size_; ++r)
        expect(fmt::format("{} output[{}]", what, r), outputs[size_t(r)],
               [&](int64_t i) { return data_value(dt, r, i); });
    });
  }

  void all_gather_into_tensor(ScalarType dt, int64_t n) {
    const std::string what = name("all_gather_into_tensor", dt, n);
    check(what, [&] {
      Tensor input = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      Tensor output = make(dt, {n * size_}, [](int64_t) { return 1.0; });
      wait(pg_.all_gather_into_tensor(output, input));
      expect(what, output, [&](int64_t i) { return data_value(dt, int(i / n), i % n); });
    });
  }

  void gather(ScalarType dt, int64_t n, int root) {
    const std::string what = name("gather", dt, n, fmt::format("to {}", root));
    check(what, [&] {
      Tensor input = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      std::vector<Tensor> outputs;
      if (rank_ == root)
        for (int r = 0; r < size_; ++r) outputs.push_back(make(dt, {n}, [](int64_t) { return 1.0; }));
      wait(pg_.gather(outputs, input, root));
      for (size_t r = 0; r < outputs.size(); ++r)
        expect(fmt::format("{} gather_list[{}]", what, r), outputs[r],
               [&](int64_t i) { return data_value(dt, int(r), i); });
    });
  }

  void scatter(ScalarType dt, int64_t n, int root) {
    const std::string what = name("scatter", dt, n, fmt::format("from {}", root));
    check(what, [&] {
      std::vector<Tensor> inputs;
      if (rank_ == root)
        for (int r = 0; r < size_; ++r) inputs.push_back(make(dt, {n}, [&](int64_t i) { return data_value(dt, r, i); }));
      Tensor output = make(dt, {n}, [](int64_t) { return 1.0; });
      wait(pg_.scatter(output, inputs, root));
      expect(what, output, [&](int64_t i) { return data_value(dt, rank_, i); });
    });
  }

  void send_recv_ring(ScalarType dt, int64_t n) {
    if (size_ < 2) return;  // a rank cannot send to itself
    const std::string what = name("send/recv ring", dt, n);
    check(what, [&] {
      const int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
      Tensor out = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      Tensor in = make(dt, {n}, [](int64_t) { return 1.0; });
      WorkPtr r = pg_.recv(in, prev, /*tag=*/7);
      WorkPtr s = pg_.send(out, next, /*tag=*/7);
      wait(s);
      wait(r);
      expect(what, in, [&](int64_t i) { return data_value(dt, prev, i); });
    });
  }

  // rows(src, dst): how many rows of 3 elements rank src sends rank dst.
  void all_to_all(ScalarType dt, const std::function<int64_t(int, int)>& rows, const char* kind) {
    const std::string what = fmt::format("all_to_all_single {} {}", kind, rt::dtype_name(dt));
    check(what, [&] {
      constexpr int64_t kCols = 3;
      std::vector<int64_t> in_splits, out_splits;
      for (int r = 0; r < size_; ++r) {
        in_splits.push_back(rows(rank_, r));
        out_splits.push_back(rows(r, rank_));
      }
      // The element e of the block src sends dst: data_value(dt, src * size + dst, e).
      auto block_values = [&](const std::vector<int64_t>& splits, bool sending) {
        std::vector<double> v;
        for (int r = 0; r < size_; ++r) {
          const int src = sending ? rank_ : r, dst = sending ? r : rank_;
          for (int64_t e = 0; e < splits[size_t(r)] * kCols; ++e) v.push_back(data_value(dt, src * size_ + dst, e));
        }
        return v;
      };
      const std::vector<double> sent = block_values(in_splits, true), expected = block_values(out_splits, false);
      Tensor input = make(dt, {int64_t(sent.size()) / kCols, kCols}, [&](int64_t i) { return sent[size_t(i)]; });
      Tensor output = make(dt, {int64_t(expected.size()) / kCols, kCols}, [](int64_t) { return 1.0; });
      const bool equal = std::string(kind) == "equal splits";
      wait(equal ? pg_.all_to_all_single(output, input) : pg_.all_to_all_single(output, input, out_splits, in_splits));
      expect(what, output, [&](int64_t i) { return expected[size_t(i)]; });
    });
  }

  // Several operations in flight before any is waited on, waited on in reverse order.
  void in_flight_together(ScalarType dt) {
    const std::string what = fmt::format("several in flight {}", rt::dtype_name(dt));
    check(what, [&] {
      constexpr int64_t n = 257;
      std::vector<Tensor> sums;
      std::vector<WorkPtr> works;
      for (int k = 0; k < 4; ++k) {
        sums.push_back(make(dt, {n}, [&](int64_t i) { return reduce_value(dt, ReduceOp::Sum, rank_, size_, i + k); }));
        works.push_back(pg_.all_reduce(sums.back(), ReduceOp::Sum));
      }
      Tensor b = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      works.push_back(pg_.broadcast(b, size_ - 1));
      Tensor g_in = make(dt, {n}, [&](int64_t i) { return data_value(dt, rank_, i); });
      Tensor g_out = make(dt, {n * size_}, [](int64_t) { return 1.0; });
      works.push_back(pg_.all_gather_into_tensor(g_out, g_in));
      WorkPtr barrier = pg_.barrier();
      wait(barrier);
      for (auto it = works.rbegin(); it != works.rend(); ++it) wait(*it);
      for (size_t k = 0; k < works.size(); ++k)
        if (!works[k]->is_success()) fail(what, fmt::format("operation {} is not is_success() after wait()", k));
      for (int k = 0; k < 4; ++k)
        expect(fmt::format("{} all_reduce {}", what, k), sums[size_t(k)],
               [&](int64_t i) { return reduced(dt, ReduceOp::Sum, size_, i + k); });
      expect(what + " broadcast", b, [&](int64_t i) { return data_value(dt, size_ - 1, i); });
      expect(what + " all_gather_into_tensor", g_out, [&](int64_t i) { return data_value(dt, int(i / n), i % n); });
    });
  }

  ProcessGroup& pg_;
  std::ostream& log_;
  const CollectiveCheckOptions& options_;
  int rank_, size_;
  int checks_ = 0, failures_ = 0;
};

}  // namespace

int run_collective_checks(ProcessGroup& pg, std::ostream& log, const CollectiveCheckOptions& options) {
  return Checker(pg, log, options).run();
}

int run_collective_checks(ProcessGroup& pg, std::ostream& log) { return run_collective_checks(pg, log, {}); }
