// RecordFunction, counter() and set_thread_name: the profiler's entry points for user code.
#include "collect/recorder.h"
#include "rt/prof/counters.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"

namespace rt::prof {

RecordFunction::RecordFunction(std::string_view name) : open_(collect::range_begin(name)) {}
RecordFunction::~RecordFunction() {
  if (open_) collect::range_end();
}

bool counter(std::string_view name, double value) { return collect::record_counter(name, value); }

void set_thread_name(std::string_view name) { collect::name_this_thread(name); }

bool profiling_active() { return collect::recording(); }

}  // namespace rt::prof
