// app/studio/kernel/event_hub.h — the kernel's listener registry: every event reaches every listener, one
// event at a time (Note [Kernel output order] in python_kernel.h). Internal to rt_kernel.
//
//   hub.add(&listener);
//   hub.deliver([&](KernelListener& l) { l.on_started(id, count); });
//
// Contract: deliver() holds the hub's lock while it calls listeners, so remove() returns only when no
// callback to the removed listener is in flight; a listener must not call add/remove from a callback.
#pragma once

#include <algorithm>
#include <mutex>
#include <vector>

#include "python_kernel.h"

namespace rt::studio {

class EventHub {
 public:
  void add(KernelListener* l) {
    std::lock_guard<std::mutex> lock(mu_);
    if (l && std::find(listeners_.begin(), listeners_.end(), l) == listeners_.end()) listeners_.push_back(l);
  }
  void remove(KernelListener* l) {
    std::lock_guard<std::mutex> lock(mu_);
    listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), l), listeners_.end());
  }
  template <typename F>
  void deliver(F&& call) {
    std::lock_guard<std::mutex> lock(mu_);
    for (KernelListener* l : listeners_) call(*l);
  }

 private:
  std::mutex mu_;
  std::vector<KernelListener*> listeners_;
};

}  // namespace rt::studio
