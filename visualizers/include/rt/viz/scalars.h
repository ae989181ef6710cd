// rt/viz/scalars.h — scalar charts (TensorBoard's): one series per counter of a session ("loss",
// "lr"), each sample tagged with its training step, exponential smoothing with debiasing, min/max
// downsampling to a pixel width, and the same counter from several sessions overlaid.
//
//   rt::viz::ScalarSet scalars(session_data);
//   const rt::viz::ScalarSeries* loss = scalars.find("loss");
//   std::vector<double> smoothed = rt::viz::smooth(loss->value, 0.6);
//   std::vector<rt::viz::ScalarColumn> columns;
//   rt::viz::downsample(loss->step, smoothed, 0, 1000, 800.0, columns);  // x = step, 800 px
//   const rt::viz::ScalarSet* runs[] = {&run_a, &run_b};
//   for (const rt::viz::OverlayLine& line : rt::viz::overlay(runs, "loss", rt::viz::OverlayAxis::Step))
//     plot(line.label, line.x, line.y);
//   scalars.append(session_data, growth);        // a live session grew (rt::prof::append_delta)
//
// Contracts
// - A series holds its samples sorted by time (stable for equal times). A sample's step is the step
//   whose [start, end] holds it, else the last step that started before it (a value logged just
//   after a step ended belongs to that step); -1 before the first step.
// - smooth(): TensorBoard's rule. last = last * w + (1 - w) * v over the finite values, divided by
//   the debias factor 1 - w^n (n = finite values so far); non-finite values pass through unchanged
//   and a constant series is returned as is. w = 0 returns the values; w = 1 is the limit of the
//   rule, the running mean. w outside [0, 1] or NaN throws rt::ValueError.
// - downsample(): samples with x in [x0, x1] fall in pixel floor((x - x0) / (x1 - x0) * width)
//   (x1 in the last pixel, ceil(width) pixels); one column per non-empty pixel keeps min and max of
//   the finite values (NaN when none), the first and last value and the count, so no spike is lost.
//   The nearest sample before x0 and after x1, when there are some, come as one-sample columns
//   with pixel -1 and ceil(width), for lines that run off the edges. x must be sorted; x and y of
//   equal length, x1 >= x0 and width > 0, else rt::ValueError.
// - overlay(): one line per session holding the counter, in the order given; x is the step
//   (samples before the first step are left out) or the time since the session's start_ns.
// - ScalarSet::append(data, growth): `data` is the data the set was built from (or last appended), grown as
//   growth says. The set becomes exactly what a new ScalarSet of `data` would be, at the cost of what arrived:
//   new samples are merged into their series (a new counter name adds a series in name order), and when steps
//   changed (a live session's open step is replaced at every read) only the samples from the earliest changed
//   step's start on are tagged again (the set's copy of the steps is renewed: a session has few). A growth that does
//   not continue the set (its first new counter sample is not the number the set holds, its first changed step is past
//   the steps the set holds, or either is past the data's) throws rt::ValueError.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"

namespace rt::viz {

struct ScalarSeries {
  std::string name;
  std::vector<int64_t> time_ns;
  std::vector<int64_t> step;
  std::vector<double> value;
  size_t size() const { return value.size(); }
};

class ScalarSet {
 public:
  explicit ScalarSet(const prof::SessionData& data);

  // Takes in the counter samples and steps the data gained (see the contracts above).
  void append(const prof::SessionData& data, const prof::SessionGrowth& growth);

  const std::vector<ScalarSeries>& series() const { return series_; }  // sorted by name
  const ScalarSeries* find(std::string_view name) const;               // nullptr when absent
  const std::string& session_name() const { return session_name_; }
  int64_t origin_ns() const { return origin_ns_; }                     // the session's start_ns

 private:
  void set_steps(const std::vector<prof::StepRecord>& steps);
  int64_t step_at(int64_t time_ns) const;
  void add_samples(const prof::SessionData& data, size_t from);

  std::vector<ScalarSeries> series_;
  std::string session_name_;
  int64_t origin_ns_ = 0;
  size_t counters_seen_ = 0;
  std::vector<prof::StepRecord> steps_;           // as the data lists them
  std::vector<prof::StepRecord> steps_by_start_;  // stably sorted by start, for step_at()
};

std::vector<double> smooth(std::span<const double> values, double weight);

struct ScalarColumn {
  int64_t pixel = 0;
  double min = 0;
  double max = 0;
  double first = 0;
  double last = 0;
  uint32_t count = 0;
};

// Overwrites `out`.
void downsample(std::span<const int64_t> x, std::span<const double> y, int64_t x0, int64_t x1, double width_px,
                std::vector<ScalarColumn>& out);

enum class OverlayAxis : uint8_t { Step, RelativeTime };

struct OverlayLine {
  size_t session = 0;   // index into the sessions given
  std::string label;    // the session's name, or "session <i>" when it has none
  std::vector<int64_t> x;
  std::vector<double> y;  // smoothed when smoothing > 0
};

std::vector<OverlayLine> overlay(std::span<const ScalarSet* const> sessions, std::string_view name, OverlayAxis axis,
                                 double smoothing = 0.0);

}  // namespace rt::viz
