// rt/autograd/grad_mode.h — switching gradient recording off and on, per thread.
//
//   { rt::NoGradGuard g; w.sub_(w.grad() * lr); }   // no graph is recorded in this scope
//   rt::GradMode::is_enabled();                      // true again here
#pragma once
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// Anomaly mode: nodes remember the forward op and module that created them, and backward
// raises AutogradError naming them when a node produces a NaN or Inf gradient.
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace rt

RT_API_END
