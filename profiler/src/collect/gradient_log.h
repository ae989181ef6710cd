// Gradient histograms recorded while a session records (rt/prof/gradient_histograms.h), held until the
// session's next drain. They come a few per parameter per step, from whatever thread ran the backward, so a
// mutex-guarded list is enough, as for collectives (collect/collective_log.h).
#pragma once
#include <cstdint>
#include <string_view>

#include "rt/debug/gradient_stats.h"
#include "rt/prof/events.h"

namespace rt::prof::collect {

// The step the recording session has open (StepRecord::step), stamped on each record; -1 when none.
// Session::start sets 0, Session::step the next number, Session::stop -1.
void set_gradient_step(int64_t step) noexcept;
// Copies the summary into the log with the open step; past kMaxPendingGradientHistograms undrained
// ones it is counted as dropped instead.
void record_gradient(std::string_view name, const rt::debug::GradientStats& stats, int64_t time_ns) noexcept;
// Moves the logged records into out.gradient_histograms (names interned in out.strings) and adds the
// dropped count to out.dropped_records.
void drain_gradient_histograms(SessionData& out);
// Forgets what was logged before a session starts.
void discard_gradient_histograms();

}  // namespace rt::prof::collect
