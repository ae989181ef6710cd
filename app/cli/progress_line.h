// app/cli/progress_line.h — one updating progress line on stderr, shown only when stderr is a terminal.
//
//   ProgressLine progress("import");
//   rt::prof::import_chrome_trace(path, {.progress = progress.callback()});
//   progress.finish();   // ends the line (no-op when nothing was drawn)
//
// Contracts: output goes to stderr only, never stdout; redraws at most once per whole percent so a
// long run stays cheap; with stderr redirected nothing is printed at all.
#pragma once
#include <cstdint>
#include <string>

#include "rt/prof/chrome_trace.h"

namespace rt::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string label);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  rt::prof::TraceProgressFn callback();
  void update(const rt::prof::TraceProgress& p);
  void finish();

 private:
  std::string label_;
  bool enabled_ = false;
  bool drawn_ = false;
  int last_percent_ = -1;
  std::string last_phase_;
};

}  // namespace rt::cli
