// Which threads may call Graphviz. See Note [One Graphviz thread] in graph_layouter.h.
#pragma once
#include <mutex>

namespace rt::viz::detail {

// Marks the calling thread as a layout thread for its lifetime (GraphLayouter's worker calls it first).
void mark_layout_thread();
bool on_layout_thread();
// Held around every Graphviz call: two layouters' threads never run Graphviz at the same time.
std::mutex& graphviz_mutex();

}  // namespace rt::viz::detail
