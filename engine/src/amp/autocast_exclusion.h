// autocast_exclusion.h — lets user code inside the backward pass autocast (see Note [Autocast]).
#pragma once

namespace rt::amp::detail {

// Lifts the backward pass's AutocastExcludedGuard for its lifetime: the ops a custom function's
// backward calls autocast as the thread's regions say, as in torch (custom_bwd opens one).
class AutocastExclusionLift {
 public:
  AutocastExclusionLift();
  ~AutocastExclusionLift();
  AutocastExclusionLift(const AutocastExclusionLift&) = delete;
  AutocastExclusionLift& operator=(const AutocastExclusionLift&) = delete;

 private:
  int saved_;
};

}  // namespace rt::amp::detail
