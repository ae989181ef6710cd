// rt/prof/gradient_histograms.h — record what each parameter's gradient looks like, step by step, into
// the profile: norm, range, NaN/Inf counts and a histogram (events.h, GradientHistogramRecord).
//
//   loss.backward();
//   for (auto& [name, p] : model->named_parameters())
//     rt::prof::record_gradient_histogram(name, p.grad());        // 32 bins
//   optimizer.step();
//   session.step();
//
// Contracts
// - Computes rt::debug::gradient_stats(grad, bins) (rt/debug/gradient_stats.h: float64, any dtype and strides,
//   non-CPU tensors copied to the CPU first) and records a GradientHistogramRecord in the recording session
//   with the session's open step (StepRecord::step; see Note [Gradient histograms] in events.h). Returns true.
// - Returns false and records nothing while no session records (like rt::prof::counter), and for an undefined
//   tensor (a parameter that got no gradient). The check comes first: when no session records it costs one
//   relaxed load, no pass over the gradient.
// - Throws rt::ValueError for bins < 1 or bins > kMaxGradientBins, and for an empty name.
// - Callable from any thread (autograd's post-accumulate hooks run on the backward's thread). The pass over the
//   gradient runs on the caller, outside any profiler lock; records wait in a mutex-guarded list for the
//   session's next drain (they come a few per parameter per step, not per op). Past kMaxPendingGradientHistograms
//   undrained records a record is counted in SessionData::dropped_records instead.
// - Cost: one read of every element (two when the gradient is finite), like torch.histc plus a norm.
// - gradient_histogram_problem(record) says what makes a record inconsistent ("" when nothing does): negative
//   counts, more NaN/Inf than elements, more than kMaxGradientBins bins, bin counts that do not sum to the
//   finite elements, a range with lo > hi or a non-finite end. Readers of untrusted records (the store, the
//   remote protocol) check every record with it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::prof {

inline constexpr int kMaxGradientBins = 4096;
inline constexpr size_t kMaxPendingGradientHistograms = 1 << 16;

bool record_gradient_histogram(std::string_view name, const rt::Tensor& grad, int bins = 32);

std::string gradient_histogram_problem(const GradientHistogramRecord& record);

}  // namespace rt::prof

RT_API_END
