// rt/prof/counters.h — log scalar values (loss, learning rate, throughput) into the profile.
//
//   rt::prof::counter("loss", loss.item<double>());
//   rt::prof::counter("samples/s", 64.0 / seconds);
//
// Contracts
// - Records a CounterRecord (time, name, value) in the recording session and returns true;
//   returns false and records nothing while no session records.
// - Callable from any thread; no lock and, after a name's first use on a thread, no allocation.
#pragma once
#include <string_view>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::prof {

bool counter(std::string_view name, double value);

}  // namespace rt::prof

RT_API_END
