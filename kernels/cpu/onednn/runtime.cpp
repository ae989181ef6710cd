#include "runtime.h"

#include <omp.h>

#include <cstring>

#include "../loops.h"
#include "rt/error.h"

namespace rt::cpu::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

namespace {
// A stream per thread: oneDNN streams are not meant to be shared between threads.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// oneDNN's OpenMP runtime uses the calling thread's omp_get_max_threads(); rt::set_num_threads set it
// only on the thread that called it (backward may run on another). Under ThreadSanitizer oneDNN runs on
// the calling thread alone, as the engine's own loops do in that tree (rt_openmp in CMakeLists.txt):
// TSan cannot see libgomp's barriers, so oneDNN's workers' memsets would read as races.
void match_thread_count() {
#if defined(__SANITIZE_THREAD__)
  const int want = 1;
#else
  const int want = num_threads();
#endif
  if (omp_get_max_threads() != want) omp_set_num_threads(want);
}
}  // namespace

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool is_reference(const char* impl_info) { return std::strncmp(impl_info, "ref", 3) == 0; }

void throw_error(const char* what, const dnnl::error& e) {
  throw Error(std::string("oneDNN ") + what + " failed: " + e.what() + " (dnnl status " + std::to_string(int(e.status)) +
              "). Hint: rt.backends.mkldnn.enabled = False (or RT_ONEDNN=0) runs the im2col path instead");
}

struct SharedReorders::Entries {
  struct Entry {
    const void* user;
    dnnl::memory::desc want;
    dnnl::memory copy;
  };
  std::vector<Entry> entries;
};
SharedReorders::SharedReorders() : entries_(std::make_unique<Entries>()) {}
SharedReorders::~SharedReorders() = default;

dnnl::memory Execution::input(const dnnl::memory::desc& want, const dnnl::memory::desc& user, const void* data) {
  dnnl::memory mine(user, cpu_engine(), const_cast<void*>(data));  // read only: oneDNN takes non-const handles
  if (want == user) return mine;
  if (shared_)
    for (const auto& e : shared_->entries_->entries)
      if (e.user == data && e.want == want) return e.copy;
  dnnl::memory theirs(want, cpu_engine(), scratch_.allocate(want.get_size()));
  match_thread_count();
  dnnl::reorder(mine, theirs).execute(thread_stream(), mine, theirs);
  if (shared_) shared_->entries_->entries.push_back({data, want, theirs});
  return theirs;
}

dnnl::memory Execution::output(const dnnl::memory::desc& want, const dnnl::memory::desc& user, void* data) {
  dnnl::memory mine(user, cpu_engine(), data);
  if (want == user) return mine;
  dnnl::memory theirs(want, cpu_engine(), scratch_.allocate(want.get_size()));
  write_back_.emplace_back(theirs, mine);
  return theirs;
}

void Execution::execute(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad) {
  match_thread_count();
  if (scratchpad.get_size() > 0)
    args_.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, cpu_engine(), scratch_.allocate(scratchpad.get_size())));
  dnnl::stream& s = thread_stream();
  p.execute(s, args_);
  for (auto& [from, to] : write_back_) dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
}

}  // namespace rt::cpu::onednn
