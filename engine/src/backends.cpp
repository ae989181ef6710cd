#include "rt/backends.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu/onednn/library.h"

namespace rt::backends {
namespace {

// `variable`=0 starts a switch off, 1 (or unset) on; anything else is reported and ignored.
bool on_at_start(const char* variable, const char* what) {
  const char* v = std::getenv(variable);
  if (v == nullptr || std::strcmp(v, "1") == 0) return true;
  if (std::strcmp(v, "0") == 0) return false;
  std::fprintf(stderr, "rustytorch: %s=%s is not 0 or 1; %s stays enabled\n", variable, v, what);
  return true;
}

}  // namespace

namespace mkldnn {
namespace {
std::atomic<bool> g_enabled{on_at_start("RT_ONEDNN", "oneDNN")};
}  // namespace

bool is_available() { return true; }
bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }
std::string version() { return rt::cpu::onednn::version(); }

}  // namespace mkldnn

namespace cpu {
namespace {
std::atomic<bool> g_fuse_linear_activation{on_at_start("RT_FUSE_LINEAR_ACTIVATION", "the Linear + activation fusion")};
}  // namespace

bool fuse_linear_activation() { return g_fuse_linear_activation.load(std::memory_order_relaxed); }
void set_fuse_linear_activation(bool on) { g_fuse_linear_activation.store(on, std::memory_order_relaxed); }

}  // namespace cpu
}  // namespace rt::backends
