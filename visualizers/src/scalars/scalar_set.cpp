#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/scalars.h"

namespace rt::viz {

ScalarSet::ScalarSet(const prof::SessionData& data) : session_name_(data.name), origin_ns_(data.start_ns) {
  set_steps(data.steps);
  add_samples(data, 0);
}

void ScalarSet::set_steps(const std::vector<prof::StepRecord>& steps) {
  steps_ = steps;
  steps_by_start_ = steps;
  std::stable_sort(steps_by_start_.begin(), steps_by_start_.end(),
                   [](const prof::StepRecord& a, const prof::StepRecord& b) { return a.start_ns < b.start_ns; });
}

int64_t ScalarSet::step_at(int64_t time_ns) const {
  auto it = std::upper_bound(steps_by_start_.begin(), steps_by_start_.end(), time_ns,
                             [](int64_t t, const prof::StepRecord& s) { return t < s.start_ns; });
  return it == steps_by_start_.begin() ? -1 : std::prev(it)->step;
}

// Merges data.counters[from, end) into the series: sorted by time, equal times in record order (the samples a
// series holds all precede the new ones).
void ScalarSet::add_samples(const prof::SessionData& data, size_t from) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = from; i < data.counters.size(); ++i) by_name[data.strings.at(data.counters[i].name)].push_back(i);
  counters_seen_ = data.counters.size();
  for (auto& [name, samples] : by_name) {
    std::stable_sort(samples.begin(), samples.end(),
                     [&](size_t a, size_t b) { return data.counters[a].time_ns < data.counters[b].time_ns; });
    auto it = std::lower_bound(series_.begin(), series_.end(), name,
                               [](const ScalarSeries& s, const std::string& n) { return s.name < n; });
    if (it == series_.end() || it->name != name) {
      it = series_.insert(it, ScalarSeries{});
      it->name = name;
    }
    ScalarSeries& s = *it;
    const int64_t first_new = data.counters[samples.front()].time_ns;
    const auto keep = size_t(std::upper_bound(s.time_ns.begin(), s.time_ns.end(), first_new) - s.time_ns.begin());
    if (keep == s.size()) {  // all after the series' samples: the usual case, and every one when building
      const size_t n = s.size() + samples.size();
      s.time_ns.resize(n);
      s.step.resize(n);
      s.value.resize(n);
      for (size_t k = 0; k < samples.size(); ++k) {
        const prof::CounterRecord& c = data.counters[samples[k]];
        s.time_ns[keep + k] = c.time_ns;
        s.step[keep + k] = step_at(c.time_ns);
        s.value[keep + k] = c.value;
      }
      continue;
    }
    ScalarSeries tail;
    tail.time_ns.reserve(s.size() - keep + samples.size());
    tail.step.reserve(tail.time_ns.capacity());
    tail.value.reserve(tail.time_ns.capacity());
    size_t i = keep, j = 0;
    while (i < s.size() || j < samples.size()) {
      if (j == samples.size() || (i < s.size() && s.time_ns[i] <= data.counters[samples[j]].time_ns)) {
        tail.time_ns.push_back(s.time_ns[i]);
        tail.step.push_back(s.step[i]);
        tail.value.push_back(s.value[i++]);
      } else {
        const prof::CounterRecord& c = data.counters[samples[j++]];
        tail.time_ns.push_back(c.time_ns);
        tail.step.push_back(step_at(c.time_ns));
        tail.value.push_back(c.value);
      }
    }
    s.time_ns.resize(keep);
    s.step.resize(keep);
    s.value.resize(keep);
    s.time_ns.insert(s.time_ns.end(), tail.time_ns.begin(), tail.time_ns.end());
    s.step.insert(s.step.end(), tail.step.begin(), tail.step.end());
    s.value.insert(s.value.end(), tail.value.begin(), tail.value.end());
  }
}

void ScalarSet::append(const prof::SessionData& data, const prof::SessionGrowth& growth) {
  if (growth.counters != counters_seen_ || growth.counters > data.counters.size())
    throw ValueError(
        fmt::format("ScalarSet::append: the growth's first new counter sample is {}, but the set holds "
                    "{} and the data {}: give append() every growth of the data it was built from, "
                    "in order",
                    growth.counters, counters_seen_, data.counters.size()));
  if (growth.steps > steps_.size() || growth.steps > data.steps.size())
    throw ValueError(
        fmt::format("ScalarSet::append: the growth's first new step is {}, but the set holds {} steps "
                    "and the data {}",
                    growth.steps, steps_.size(), data.steps.size()));
  session_name_ = data.name;
  origin_ns_ = data.start_ns;

  // A sample's step can only change from the earliest start of a step that left or came.
  std::optional<int64_t> retag_from;
  auto earliest = [&](int64_t t) { retag_from = retag_from ? std::min(*retag_from, t) : t; };
  if (growth.steps != steps_.size() || data.steps.size() != steps_.size()) {
    for (size_t i = growth.steps; i < steps_.size(); ++i) earliest(steps_[i].start_ns);
    for (size_t i = growth.steps; i < data.steps.size(); ++i) earliest(data.steps[i].start_ns);
    set_steps(data.steps);
  }
  if (retag_from) {
    for (ScalarSeries& s : series_) {
      auto i = size_t(std::lower_bound(s.time_ns.begin(), s.time_ns.end(), *retag_from) - s.time_ns.begin());
      for (; i < s.size(); ++i) s.step[i] = step_at(s.time_ns[i]);
    }
  }
  add_samples(data, growth.counters);
}

const ScalarSeries* ScalarSet::find(std::string_view name) const {
  auto it = std::lower_bound(series_.begin(), series_.end(), name,
                             [](const ScalarSeries& s, std::string_view n) { return s.name < n; });
  return it != series_.end() && it->name == name ? &*it : nullptr;
}

}  // namespace rt::viz
