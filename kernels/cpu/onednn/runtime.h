// kernels/cpu/onednn/runtime.h — what every oneDNN kernel file shares (internal to kernels/cpu/onednn/).
//
//   const dnnl::engine& eng = rt::cpu::onednn::cpu_engine();
//   auto pd = rt::cpu::onednn::usable(make_pd);                   // nullopt: unimplemented, or only oneDNN's reference code
//   rt::cpu::onednn::Execution run(scratch);
//   run.add(DNNL_ARG_SRC, run.input(pd->src_desc(), user_src_md, src_ptr));
//   run.execute(dnnl::convolution_forward(*pd), pd->scratchpad_desc());
//
// Threads: oneDNN is built on OpenMP here, like our loops and OpenBLAS, so all share one pool;
// Execution::execute runs the primitive with rt::cpu::num_threads() threads on any calling thread.
// Errors: a dnnl::error never leaves a kernel; `throw_error` turns it into rt::Error.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scratch.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu::onednn {

const dnnl::engine& cpu_engine();

// Primitive attributes with a user-managed scratchpad (allocated through Scratch).
dnnl::primitive_attr user_scratchpad_attr();

// True for oneDNN's reference implementations ("ref:any"): correct but far slower than our im2col
// + GEMM, so the kernels treat them as "not implemented".
bool is_reference(const char* impl_info);

// make() builds a primitive descriptor; nullopt when oneDNN has no implementation for it
// (dnnl_unimplemented) or only a reference one. Other errors propagate as dnnl::error.
template <typename PD, typename Make>
std::optional<PD> usable(Make&& make) {
  try {
    PD pd = make();
    if (is_reference(pd.impl_info_str())) return std::nullopt;
    return pd;
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return std::nullopt;
    throw;
  }
}

// Throws rt::Error for a oneDNN failure in `what` ("conv2d forward"), naming the status and the way back
// to the im2col path.
[[noreturn]] void throw_error(const char* what, const dnnl::error& e);

// One primitive execution: the arguments, operands reordered into the primitive's layouts on the way
// in, outputs reordered back to the caller's layout after it ran.
class Execution {
 public:
  // With `shared`, a reordered input is looked up there first and added to it.
  explicit Execution(Scratch& scratch, SharedReorders* shared = nullptr) : scratch_(scratch), shared_(shared) {}
  // `user` at `data` as the primitive wants it (`want`): the same memory, or a reordered copy.
  dnnl::memory input(const dnnl::memory::desc& want, const dnnl::memory::desc& user, const void* data);
  // Where the primitive writes an output the caller wants as `user` at `data`; when the layouts differ,
  // a scratch buffer reordered into `data` after the run.
  dnnl::memory output(const dnnl::memory::desc& want, const dnnl::memory::desc& user, void* data);
  void add(int arg, const dnnl::memory& m) { args_.emplace(arg, m); }
  void execute(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad);

 private:
  Scratch& scratch_;
  SharedReorders* shared_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<std::pair<dnnl::memory, dnnl::memory>> write_back_;  // (primitive's, caller's)
};

}  // namespace rt::cpu::onednn

RT_API_END
