// The register plan of the row-wise CUDA kernels (kernels/cuda/row_plan.h): which rows softmax and
// layer_norm keep in registers, with how many threads and packs per thread. Plain C++, no GPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "cuda/row_plan.h"
#include "rt/error.h"

using rt::cuda_kernels::aligned_row_plan;
using rt::cuda_kernels::plan_row_in_registers;
using rt::cuda_kernels::RowPlan;

namespace {

// Every pack of the row has exactly one owner: thread t holds t, t + threads, ... below vecs * threads.
void check_covers(const RowPlan& p) {
  REQUIRE(p.vecs >= 1);
  CHECK(p.threads % 32 == 0);
  CHECK(p.threads <= 1024);
  CHECK(int64_t(p.vecs) * p.threads >= p.packs);                 // no pack is left out
  CHECK(int64_t(p.vecs) * (p.threads - 32) < p.packs);           // no whole warp idles
}

}  // namespace

TEST_CASE("the benchmark's rows get one read and one write") {
  const RowPlan softmax_4096 = plan_row_in_registers(4096, 4, 8);  // [16384, 4096] float32
  CHECK(softmax_4096.packs == 1024);
  CHECK(softmax_4096.vecs == 4);
  CHECK(softmax_4096.threads == 256);
  const RowPlan softmax_32768 = plan_row_in_registers(32768, 4, 8);  // [4096, 32768] float32
  CHECK(softmax_32768.vecs == 8);
  CHECK(softmax_32768.threads == 1024);
  check_covers(softmax_4096);
  check_covers(softmax_32768);
}

TEST_CASE("the fewest packs per thread that keep the block at 256 threads") {
  CHECK(plan_row_in_registers(1024, 4, 8).vecs == 1);   // 256 packs: one each
  CHECK(plan_row_in_registers(1024, 4, 8).threads == 256);
  CHECK(plan_row_in_registers(1028, 4, 8).vecs == 2);   // 257 packs: two each, 129 threads -> 160
  CHECK(plan_row_in_registers(1028, 4, 8).threads == 160);
  CHECK(plan_row_in_registers(8, 4, 8).threads == 32);  // 2 packs: one warp, most of it idle
  CHECK(plan_row_in_registers(5000, 2, 4).vecs == 4);   // 625 float16 packs
  CHECK(plan_row_in_registers(5000, 2, 4).threads == 160);
}

TEST_CASE("past 256 threads at max_vecs the block grows to 1024 threads, then the row streams") {
  const RowPlan p = plan_row_in_registers(16384, 4, 4);  // 4096 packs, 4 each: 1024 threads
  CHECK(p.vecs == 4);
  CHECK(p.threads == 1024);
  CHECK(plan_row_in_registers(16388, 4, 4).vecs == 0);  // 4097 packs: 1025 threads
  CHECK(plan_row_in_registers(32768, 4, 4).vecs == 0);
  CHECK(plan_row_in_registers(32768, 2, 4).vecs == 4);  // float16: 8 elements per pack
  CHECK(plan_row_in_registers(32776, 4, 8).vecs == 0);
}

TEST_CASE("every row length that fits is covered") {
  for (int elem : {2, 4, 8})
    for (int max_vecs : {1, 2, 4, 8})
      for (int64_t n = 16 / elem; n <= 65536; n += 16 / elem) {
        const RowPlan p = plan_row_in_registers(n, elem, max_vecs);
        INFO("n=" << n << " elem=" << elem << " max_vecs=" << max_vecs);
        if (n * elem / 16 <= int64_t(1024) * max_vecs) check_covers(p);
        else CHECK(p.vecs == 0);
      }
}

TEST_CASE("rows that are not whole packs, or start unaligned, are not planned") {
  CHECK(plan_row_in_registers(1030, 4, 8).vecs == 0);  // 4120 bytes
  CHECK(plan_row_in_registers(4099, 2, 4).vecs == 0);
  CHECK(plan_row_in_registers(0, 4, 8).vecs == 0);
  alignas(16) static float buf[8];
  CHECK(aligned_row_plan(4096, 4, 8, {buf, buf + 4}).vecs == 4);
  CHECK(aligned_row_plan(4096, 4, 8, {buf, buf + 1}).vecs == 0);  // one base 4 bytes off
  CHECK(aligned_row_plan(4096, 4, 8, {buf, nullptr}).vecs == 4);  // an absent weight is no constraint
}

TEST_CASE("visit_row_vecs hands the kernel its packs per thread as a constant") {
  int seen = 0;
  auto record = [&]<int kVecs>() { seen = kVecs; };
  for (int v : {1, 2, 4, 8}) {
    rt::cuda_kernels::visit_row_vecs<8>(v, record);
    CHECK(seen == v);
  }
  CHECK_THROWS_AS(rt::cuda_kernels::visit_row_vecs<4>(8, record), rt::Error);
  CHECK_THROWS_WITH(rt::cuda_kernels::visit_row_vecs<2>(4, record), Catch::Contains("at most 2"));
}

TEST_CASE("packs per thread the kernels are built for") {
  using rt::cuda_kernels::max_row_vecs;
  CHECK(max_row_vecs(4, 1) == 8);  // float32 forward: rows up to 32768
  CHECK(max_row_vecs(4, 2) == 4);
  CHECK(max_row_vecs(2, 1) == 4);  // float16 / bfloat16: 32768 too, 8 elements per pack
  CHECK(max_row_vecs(2, 2) == 2);
  CHECK(max_row_vecs(8, 1) == 4);
  CHECK(plan_row_in_registers(32768, 4, max_row_vecs(4, 1)).vecs == 8);
  CHECK(plan_row_in_registers(32768, 2, max_row_vecs(2, 1)).vecs == 4);
  CHECK(plan_row_in_registers(32768, 4, max_row_vecs(4, 2)).vecs == 0);  // the backward streams these
}

TEST_CASE("plans wider than 512 threads keep half of each thread's packs in shared memory") {
  using rt::cuda_kernels::with_shared_half;
  const RowPlan p = with_shared_half(plan_row_in_registers(32768, 4, 8));  // [4096, 32768] float32
  CHECK(p.vecs == 8);
  CHECK(p.shared_vecs == 8);
  CHECK(p.threads == 512);
  CHECK(p.shared_bytes() == 64 * 1024);  // two blocks fit a multiprocessor's 228 KiB
  CHECK(int64_t(p.vecs + p.shared_vecs) * p.threads == p.packs);

  const RowPlan q = with_shared_half(plan_row_in_registers(16388, 4, 8));  // 4097 packs: 513 threads unsplit
  CHECK(q.shared_vecs == 8);
  CHECK(q.threads == 288);
  CHECK(int64_t(q.vecs + q.shared_vecs) * q.threads >= q.packs);
  CHECK(int64_t(q.vecs) * q.threads < q.packs);  // the shared half is used

  const RowPlan at_512 = with_shared_half(plan_row_in_registers(16384, 4, 8));  // 512 threads: as it was
  CHECK(at_512.shared_vecs == 0);
  CHECK(at_512.threads == 512);
  CHECK(with_shared_half(plan_row_in_registers(4096, 4, 8)).shared_vecs == 0);
  CHECK(with_shared_half(RowPlan{}).vecs == 0);

  // Every row that fits, for each element size with its forward max_vecs: at most 512 threads, each pack
  // covered once, and only the widest plans split (the launcher instantiates the split for those alone).
  for (int elem : {2, 4, 8}) {
    const int max_vecs = rt::cuda_kernels::max_row_vecs(elem, 1);
    for (int64_t n = 16 / elem; n * elem / 16 <= int64_t(1024) * max_vecs; n += 16 / elem) {
      const RowPlan s = with_shared_half(plan_row_in_registers(n, elem, max_vecs));
      INFO("n=" << n << " elem=" << elem);
      REQUIRE(s.vecs > 0);
      CHECK(s.threads <= 512);
      CHECK((s.shared_vecs == 0 || (s.vecs == max_vecs && s.shared_vecs == s.vecs)));
      CHECK(int64_t(s.vecs + s.shared_vecs) * s.threads >= s.packs);
      CHECK(int64_t(s.vecs + s.shared_vecs) * (s.threads - 32) < s.packs);
    }
  }
}

TEST_CASE("short rows: a warp each, the fewest packs per lane") {
  using rt::cuda_kernels::aligned_warp_plan;
  using rt::cuda_kernels::plan_row_per_warp;
  CHECK(plan_row_per_warp(4, 4, 8).vecs == 1);     // one pack: lane 0 holds it
  CHECK(plan_row_per_warp(128, 4, 8).vecs == 1);   // 32 packs
  CHECK(plan_row_per_warp(132, 4, 8).vecs == 2);   // 33 packs
  CHECK(plan_row_per_warp(1024, 4, 8).vecs == 8);  // 256 packs: the longest float32 row a warp holds
  CHECK(plan_row_per_warp(1024, 4, 4).vecs == 0);  // past max_vecs: no warp plan
  CHECK(plan_row_per_warp(1024, 8, rt::cuda_kernels::kWarpRowMaxVecs).vecs == 0);  // 512 packs: a block's row
  CHECK(plan_row_per_warp(1024, 2, 4).vecs == 4);
  CHECK(plan_row_per_warp(520, 2, 4).vecs == 4);   // 65 packs
  CHECK(plan_row_per_warp(258, 8, 4).vecs == 0);   // 129 packs of doubles
  CHECK(plan_row_per_warp(258, 8, rt::cuda_kernels::kWarpRowMaxVecs).vecs == 8);
  CHECK(plan_row_per_warp(10, 4, 8).vecs == 0);    // 40 bytes: not whole packs
  CHECK(plan_row_per_warp(128, 4, 8).threads == 32);
  alignas(16) static float buf[8];
  CHECK(aligned_warp_plan(128, 4, 8, {buf, buf + 4}).vecs == 1);
  CHECK(aligned_warp_plan(128, 4, 8, {buf, buf + 2}).vecs == 0);
  for (int elem : {2, 4, 8})
    for (int max_vecs : {1, 2, 4, 8})
      for (int64_t n = 16 / elem; n * elem / 16 <= 32 * max_vecs; n += 16 / elem) {
        const RowPlan p = plan_row_per_warp(n, elem, max_vecs);
        INFO("n=" << n << " elem=" << elem << " max_vecs=" << max_vecs);
        REQUIRE(p.vecs >= 1);
        CHECK(32 * p.vecs >= p.packs);                       // every pack has a lane
        CHECK((p.vecs == 1 || 32 * (p.vecs / 2) < p.packs));  // and no smaller count would do
      }
}
