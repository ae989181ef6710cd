#include "graph/layout_thread.h"

namespace rt::viz::detail {
namespace {
thread_local bool t_layout_thread = false;
}

void mark_layout_thread() { t_layout_thread = true; }
bool on_layout_thread() { return t_layout_thread; }

std::mutex& graphviz_mutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace rt::viz::detail
