#include "rt/backends.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu/onednn/library.h"

namespace rt::backends::mkldnn {
namespace {

// RT_ONEDNN=0 starts with oneDNN off, 1 (or unset) on; anything else is reported and ignored.
bool enabled_at_start() {
  const char* v = std::getenv("RT_ONEDNN");
  if (v == nullptr || std::strcmp(v, "1") == 0) return true;
  if (std::strcmp(v, "0") == 0) return false;
  std::fprintf(stderr, "rustytorch: RT_ONEDNN=%s is not 0 or 1; oneDNN stays enabled\n", v);
  return true;
}

std::atomic<bool> g_enabled{enabled_at_start()};

}  // namespace

bool is_available() { return true; }
bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }
std::string version() { return cpu::onednn::version(); }

}  // namespace rt::backends::mkldnn
