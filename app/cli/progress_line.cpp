#include "progress_line.h"

#include <fmt/core.h>

#include <cstdio>
#include <unistd.h>

namespace rt::cli {

ProgressLine::ProgressLine(std::string label) : label_(std::move(label)), enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() { finish(); }

rt::prof::TraceProgressFn ProgressLine::callback() {
  if (!enabled_) return {};
  return [this](const rt::prof::TraceProgress& p) { update(p); };
}

void ProgressLine::update(const rt::prof::TraceProgress& p) {
  if (!enabled_ || p.total == 0) return;
  const int percent = static_cast<int>(p.done >= p.total ? 100 : p.done * 100 / p.total);
  if (percent == last_percent_ && p.phase == last_phase_) return;
  last_percent_ = percent;
  last_phase_ = p.phase;
  const char* unit = p.phase == "import" ? "bytes" : "events";
  fmt::print(stderr, "\r\x1b[2K{} ({}): {:3d}%  {}/{} {}", label_, p.phase, percent, p.done, p.total, unit);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  fmt::print(stderr, "\n");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace rt::cli
