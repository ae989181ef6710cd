// rt/cancel.h — stopping the engine work of one thread (Ctrl+C in a script, the studio's interrupt).
//
//   rt::CancelToken trainer = rt::CancelToken::current();    // on the thread that trains
//   ...
//   trainer.request();                                       // from any thread, or a signal handler
//   // the trainer's next op or autograd node throws rt::InterruptedError; the request is used up,
//   // and ops running on every other thread carry on
//
//   rt::request_cancel();   // the calling thread's own token: rt::CancelToken::current().request()
//   rt::check_cancel();     // throws InterruptedError (and clears the request) when this thread was asked
//
// A loop split over OpenMP threads polls the token of the thread that started it, captured before the
// parallel region (its workers have tokens of their own):
//   const rt::CancelToken cancel = rt::CancelToken::current();
//   #pragma omp parallel for
//   for (int64_t i = 0; i < n; ++i) if (!cancel.requested()) work(i);
//   rt::check_cancel();
//
// See Note [Cancellation] in engine/src/cancel.cpp.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

namespace detail {
struct CancelState;
// Bit 0: an op/memory observer or a recorder is attached. Bit 1: some thread has a cancel request
// pending. Bit 2: some thread has autocast enabled, so ops track their nesting depth (Note [Autocast]).
// OpGuard reads it once per op (Note [Dispatch fast path]).
extern std::atomic<uint32_t> g_dispatch_flags;
inline constexpr uint32_t kObserved = 1u, kCancel = 2u, kAutocast = 4u;
bool this_thread_cancel_requested() noexcept;
}  // namespace detail

// One thread's cancel request. Copies refer to the same thread; a token outlives its thread (a request
// made after the thread ended does nothing).
class CancelToken {
 public:
  static CancelToken current();   // the calling thread's
  void request() const noexcept;  // async-signal-safe (atomic operations only)
  void clear() const noexcept;    // withdraws a request not yet seen
  bool requested() const noexcept;
  uint64_t thread_id() const noexcept;  // the engine's id of the token's thread (rt::current_thread_id())

 private:
  explicit CancelToken(std::shared_ptr<detail::CancelState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::CancelState> state_;
};

// The calling thread's request.
void request_cancel();
void clear_cancel();
inline bool cancel_requested() {
  return (detail::g_dispatch_flags.load(std::memory_order_relaxed) & detail::kCancel) != 0 &&
         detail::this_thread_cancel_requested();
}
void check_cancel();  // throws InterruptedError (and clears the request) when the calling thread was asked

}  // namespace rt

RT_API_END
