// Note [Cancellation]
// Each thread has its own request flag (a CancelState it shares with its tokens), as PyTorch keeps
// autograd state per thread: the studio's interrupt stops the notebook's interpreter thread and never
// a DataLoader thread or a second trainer. The dispatch fast path stays one relaxed load: kCancel in
// g_dispatch_flags is set while any thread has a request pending (g_pending counts them), and only
// then does an op look at its own thread's flag (OpGuard's slow path, cancel_requested()).
// Clearing the last request clears kCancel and then looks at g_pending again, so a request made on
// another thread between the two steps sets the bit back instead of being lost; a request checks the
// count after setting the bit, so a racing clear cannot leave the bit set with nothing pending.
// A thread that ends withdraws its pending request; requests to it afterwards do nothing.
#include "rt/cancel.h"

#include "rt/error.h"
#include "rt/op_observer.h"

namespace rt {
namespace detail {

struct CancelState {
  std::atomic<bool> requested{false};
  std::atomic<bool> alive{true};
  uint64_t thread_id = 0;
};

namespace {
std::atomic<int64_t> g_pending{0};

// kCancel off when nothing is pending; checked again after clearing, for a request made meanwhile.
void sync_cancel_bit() noexcept {
  if (g_pending.load() > 0) return;
  g_dispatch_flags.fetch_and(~kCancel);
  if (g_pending.load() > 0) g_dispatch_flags.fetch_or(kCancel);
}

void clear_state(CancelState& s) noexcept {
  if (!s.requested.exchange(false)) return;
  g_pending.fetch_sub(1);
  sync_cancel_bit();
}

// The calling thread's state; a request pending when the thread ends is withdrawn.
struct ThreadCancel {
  std::shared_ptr<CancelState> state = [] {
    auto s = std::make_shared<CancelState>();
    s->thread_id = current_thread_id();
    return s;
  }();
  ~ThreadCancel() {
    state->alive.store(false);
    clear_state(*state);
  }
};
thread_local ThreadCancel t_cancel;
}  // namespace

bool this_thread_cancel_requested() noexcept { return t_cancel.state->requested.load(std::memory_order_relaxed); }

}  // namespace detail

CancelToken CancelToken::current() { return CancelToken(detail::t_cancel.state); }

void CancelToken::request() const noexcept {
  if (!state_->alive.load() || state_->requested.exchange(true)) return;
  detail::g_pending.fetch_add(1);
  detail::g_dispatch_flags.fetch_or(detail::kCancel);
  detail::sync_cancel_bit();  // a clear() racing this request may have seen the count before it rose
  if (!state_->alive.load()) detail::clear_state(*state_);  // the thread ended meanwhile
}

void CancelToken::clear() const noexcept { detail::clear_state(*state_); }
bool CancelToken::requested() const noexcept { return state_->requested.load(std::memory_order_relaxed); }
uint64_t CancelToken::thread_id() const noexcept { return state_->thread_id; }

void request_cancel() { CancelToken::current().request(); }
void clear_cancel() { detail::clear_state(*detail::t_cancel.state); }

void check_cancel() {
  if (cancel_requested()) {
    clear_cancel();
    throw InterruptedError("interrupted: the operation was cancelled (rt::CancelToken::request / KeyboardInterrupt)");
  }
}

}  // namespace rt
