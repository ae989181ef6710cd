// rt/thread_name.h — a name for the calling thread, for the tools that show threads: the profiler's thread
// tracks ("gloo worker 1 · default" instead of "thread 29776"), debuggers and top.
//
//   std::thread worker([] {
//     rt::set_this_thread_name("loader 0");   // before the thread records anything
//     ...
//   });
//   std::string name = rt::this_thread_name();  // "" for a thread never named
//
// Contracts: the name is the thread's own (thread-local); the operating system gets its first 15 bytes
// (Linux's limit, pthread_setname_np). The profiler reads it when the thread first records into a session, so
// name a thread before its first op; rt::prof::set_thread_name renames it in the profiler afterwards.
#pragma once
#include <string>
#include <string_view>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

void set_this_thread_name(std::string_view name);
std::string this_thread_name();

}  // namespace rt

RT_API_END
