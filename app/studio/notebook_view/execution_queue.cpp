#include "execution_queue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rt::studio {

std::deque<ExecutionQueue::Entry>::iterator ExecutionQueue::find_request(RequestId request) {
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.request == request; });
}

void ExecutionQueue::enqueue(std::string cell_id, Clock::time_point now) {
  entries_.push_back(Entry{std::move(cell_id), State::Waiting, std::nullopt, now, {}});
}

const ExecutionQueue::Entry* ExecutionQueue::next_to_submit() const {
  if (in_flight()) return nullptr;
  for (const Entry& e : entries_) {
    if (e.state == State::Waiting) return &e;
  }
  return nullptr;
}

void ExecutionQueue::drop_next_to_submit() {
  const Entry* next = next_to_submit();
  if (!next) return;
  entries_.erase(std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return &e == next; }));
}

void ExecutionQueue::mark_submitted(RequestId request) {
  if (find_request(request) != entries_.end()) {
    throw std::logic_error(fmt::format("ExecutionQueue: request {} is already in the queue (cell '{}')", request,
                                       find_request(request)->cell_id));
  }
  auto* next = const_cast<Entry*>(next_to_submit());
  if (!next) {
    throw std::logic_error(fmt::format(
        "ExecutionQueue: request {} submitted with no cell waiting (or while another request is in flight)",
        request));
  }
  next->state = State::Submitted;
  next->request = request;
}

std::optional<std::string> ExecutionQueue::cell_for(RequestId request) const {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.request == request; });
  if (it == entries_.end()) return std::nullopt;
  return it->cell_id;
}

std::optional<std::string> ExecutionQueue::mark_started(RequestId request, Clock::time_point now) {
  auto it = find_request(request);
  if (it == entries_.end()) return std::nullopt;
  it->state = State::Running;
  it->started_at = now;
  return it->cell_id;
}

std::optional<ExecutionQueue::Finished> ExecutionQueue::finish(RequestId request, Clock::time_point now) {
  auto it = find_request(request);
  if (it == entries_.end()) return std::nullopt;
  Finished done{it->cell_id, {}};
  if (it->state == State::Running) done.run_time = now - it->started_at;
  entries_.erase(it);
  return done;
}

std::vector<std::string> ExecutionQueue::drop_waiting() {
  std::vector<std::string> dropped;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->state == State::Waiting) {
      dropped.push_back(std::move(it->cell_id));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

std::vector<ExecutionQueue::Entry> ExecutionQueue::take_all() {
  std::vector<Entry> all(entries_.begin(), entries_.end());
  entries_.clear();
  return all;
}

std::optional<ExecutionQueue::State> ExecutionQueue::state_of_cell(const std::string& cell_id) const {
  std::optional<State> state;
  for (const Entry& e : entries_) {
    if (e.cell_id != cell_id) continue;
    if (!state || static_cast<int>(e.state) > static_cast<int>(*state)) state = e.state;
  }
  return state;
}

const ExecutionQueue::Entry* ExecutionQueue::in_flight() const {
  for (const Entry& e : entries_) {
    if (e.state != State::Waiting) return &e;
  }
  return nullptr;
}

std::string format_run_time(std::chrono::duration<double> duration) {
  const double s = std::max(0.0, duration.count());
  if (s < 0.001) return fmt::format("{:.1f} ms", s * 1e3);
  if (s < 0.9995) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 59.95) return fmt::format("{:.1f} s", s);
  const auto total = static_cast<long long>(std::llround(s));
  if (total < 3600) return fmt::format("{} min {} s", total / 60, total % 60);
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

}  // namespace rt::studio
