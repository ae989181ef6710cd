// rt/viz/draw/time_cursor.h — the time window and hover time that the timeline and the memory
// timeline of one session share, so zooming one zooms the other and hovering one marks both.
//
//   rt::viz::draw::TimeCursor cursor;            // owned by whoever shows both views
//   timeline.draw(size, scale, &cursor);         // writes its window and hover time
//   memory.draw(size, scale, &cursor);           // follows the window, marks the hover time
//
// Contracts
// - A view follows the cursor only when cursor.session equals its own session key (the SessionData's
//   address), so views of different sessions never move each other; the first view that draws with an
//   empty key claims it.
// - version counts window changes: a view that changes the window bumps it; a view that sees a version
//   it has not seen adopts the window. hover_ns is valid for one frame of the view that set it and is
//   cleared by it when the mouse leaves.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "rt/viz/timeline_view.h"

namespace rt::viz::draw {

struct TimeCursor {
  const void* session = nullptr;
  uint64_t version = 0;
  int64_t t0 = 0;
  int64_t t1 = 0;
  std::optional<int64_t> hover_ns;
  const void* hover_owner = nullptr;  // the view that set hover_ns
};

// A view's side of the cursor: follow() before handling input adopts a window another view set;
// publish() after it shares this view's window when it changed (by input or set_window()).
class CursorFollower {
 public:
  explicit CursorFollower(const void* session) : session_(session) {}
  void follow(TimeCursor& cursor, TimelineView& view);
  void publish(TimeCursor& cursor, const TimelineView& view, bool force = false);

 private:
  const void* session_;
  uint64_t version_seen_ = 0;
  std::pair<int64_t, int64_t> window_{0, 0};
};

}  // namespace rt::viz::draw
