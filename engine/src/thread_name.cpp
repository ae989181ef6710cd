#include "rt/thread_name.h"

#include <pthread.h>

namespace rt {
namespace {
thread_local std::string t_name;
}  // namespace

void set_this_thread_name(std::string_view name) {
  t_name = std::string(name);
  const std::string os_name = t_name.substr(0, 15);  // longer names are refused with ERANGE
  pthread_setname_np(pthread_self(), os_name.c_str());
}

std::string this_thread_name() { return t_name; }

}  // namespace rt
