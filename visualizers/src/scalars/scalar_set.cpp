#include <algorithm>
#include <map>

#include "rt/viz/scalars.h"

namespace rt::viz {

namespace {

class StepLookup {
 public:
  explicit StepLookup(const std::vector<prof::StepRecord>& steps) : steps_(steps) {
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const prof::StepRecord& a, const prof::StepRecord& b) { return a.start_ns < b.start_ns; });
  }
  int64_t step_at(int64_t time_ns) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), time_ns,
                               [](int64_t t, const prof::StepRecord& s) { return t < s.start_ns; });
    return it == steps_.begin() ? -1 : std::prev(it)->step;
  }

 private:
  std::vector<prof::StepRecord> steps_;
};

}  // namespace

ScalarSet::ScalarSet(const prof::SessionData& data) : session_name_(data.name), origin_ns_(data.start_ns) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < data.counters.size(); ++i) by_name[data.strings.at(data.counters[i].name)].push_back(i);
  const StepLookup steps(data.steps);
  for (auto& [name, samples] : by_name) {
    std::stable_sort(samples.begin(), samples.end(),
                     [&](size_t a, size_t b) { return data.counters[a].time_ns < data.counters[b].time_ns; });
    ScalarSeries s;
    s.name = name;
    s.time_ns.reserve(samples.size());
    s.step.reserve(samples.size());
    s.value.reserve(samples.size());
    for (size_t i : samples) {
      s.time_ns.push_back(data.counters[i].time_ns);
      s.step.push_back(steps.step_at(data.counters[i].time_ns));
      s.value.push_back(data.counters[i].value);
    }
    series_.push_back(std::move(s));
  }
}

const ScalarSeries* ScalarSet::find(std::string_view name) const {
  auto it = std::lower_bound(series_.begin(), series_.end(), name,
                             [](const ScalarSeries& s, std::string_view n) { return s.name < n; });
  return it != series_.end() && it->name == name ? &*it : nullptr;
}

}  // namespace rt::viz
