#include <algorithm>
#include <cctype>
#include <numeric>
#include <tuple>

#include "rt/viz/timeline_select.h"

namespace rt::viz {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

EventSearch::EventSearch(const TimelineModel& model, std::string_view text) {
  if (text.empty()) return;
  const std::string needle = lower(text);
  const auto& strings = model.data().strings.all();
  std::vector<bool> name_matches(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) name_matches[i] = lower(strings[i]).find(needle) != std::string::npos;

  const prof::SessionData& d = model.data();
  for (uint32_t t = 0; t < model.tracks().size(); ++t) {
    const auto& levels = model.tracks()[t].levels;
    for (uint32_t l = 0; l < levels.size(); ++l) {
      const TrackLevel& level = levels[l];
      for (uint32_t i = 0; i < level.size(); ++i) {
        const uint32_t r = level.records[i];
        bool hit = false;
        switch (level.sources[i]) {
          case EventSource::Op: hit = name_matches[d.ops[r].name]; break;
          case EventSource::Gpu: hit = name_matches[d.gpu[r].name]; break;
          case EventSource::Step: hit = lower(model.name({t, l, i})).find(needle) != std::string::npos; break;
          case EventSource::Collective: hit = name_matches[d.collectives[r].name]; break;
        }
        if (hit) matches_.push_back({t, l, i});
      }
    }
  }
  std::vector<int64_t> starts(matches_.size());
  for (size_t k = 0; k < matches_.size(); ++k) starts[k] = model.start_ns(matches_[k]);
  std::vector<size_t> order(matches_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const EventRef& x = matches_[a];
    const EventRef& y = matches_[b];
    return std::tie(starts[a], x.track, x.level, x.index) < std::tie(starts[b], y.track, y.level, y.index);
  });
  std::vector<EventRef> sorted;
  sorted.reserve(order.size());
  starts_.reserve(order.size());
  for (size_t k : order) {
    sorted.push_back(matches_[k]);
    starts_.push_back(starts[k]);
  }
  matches_ = std::move(sorted);
}

const EventRef* EventSearch::next() {
  if (matches_.empty()) return nullptr;
  current_ = current_ ? (*current_ + 1) % matches_.size() : 0;
  return &matches_[*current_];
}

const EventRef* EventSearch::previous() {
  if (matches_.empty()) return nullptr;
  current_ = current_ && *current_ > 0 ? *current_ - 1 : matches_.size() - 1;
  return &matches_[*current_];
}

const EventRef* EventSearch::first_at_or_after(int64_t time_ns) {
  if (matches_.empty()) return nullptr;
  const size_t k = size_t(std::lower_bound(starts_.begin(), starts_.end(), time_ns) - starts_.begin());
  current_ = k < matches_.size() ? k : 0;
  return &matches_[*current_];
}

}  // namespace rt::viz
