// rt/prof/record_function.h — name a region of your code in the profile.
//
//   void train_step() {
//     rt::prof::RecordFunction r("train_step");   // an OpKind::UserRange from here...
//     auto y = model(x);                          // ...with the ops it runs nested inside
//   }                                             // ...to here
//
// Contracts
// - While no session records, a RecordFunction does nothing (like PyTorch's
//   record_function outside a profiler); it costs one atomic load.
// - The range belongs to the constructing thread and must end on it (scoped guard). It nests
//   with ops: ops called inside are its children, depth + 1.
// - The name is copied (first use of a name per thread allocates once; later uses do not).
#pragma once
#include <string_view>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::prof {

class RecordFunction {
 public:
  explicit RecordFunction(std::string_view name);
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

  bool recording() const { return open_; }  // false when no session was recording at construction

 private:
  bool open_;
};

}  // namespace rt::prof

RT_API_END
