// The profiler's side of rt::EventRecorder: records engine ops, autograd nodes and allocator
// events, plus user ranges and counters, into the calling thread's ThreadBuffer; finished
// collectives go to the collective log (collect/collective_log.h).
#pragma once
#include <cstdint>
#include <string_view>

namespace rt::prof::collect {

struct RecordingConfig {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;  // module scope
  // CUPTI external correlation, when the GPU collector runs: called around every op.
  void (*push_correlation)(uint64_t id) = nullptr;
  void (*pop_correlation)() = nullptr;
};

// Installs the engine recorder with `config`. Throws rt::Error when another recorder is
// installed (a different profiler in the process).
void start_recording(const RecordingConfig& config);
void stop_recording();
bool recording();

// User ranges and counters; no-ops returning false while nothing records.
bool range_begin(std::string_view name) noexcept;
void range_end() noexcept;
bool record_counter(std::string_view name, double value) noexcept;

// Names the calling thread in every session (what ThreadRecord::name shows).
void name_this_thread(std::string_view name);

}  // namespace rt::prof::collect
