#include "rt/viz/draw/time_cursor.h"

namespace rt::viz::draw {

void CursorFollower::follow(TimeCursor& cursor, TimelineView& view) {
  if (!cursor.session) {
    cursor.session = session_;
    publish(cursor, view, true);
  } else if (cursor.session == session_ && cursor.version != version_seen_) {
    view.set_window(cursor.t0, cursor.t1);
    version_seen_ = cursor.version;
    window_ = {view.t0(), view.t1()};
  }
}

void CursorFollower::publish(TimeCursor& cursor, const TimelineView& view, bool force) {
  if (cursor.session != session_) return;
  const std::pair<int64_t, int64_t> now{view.t0(), view.t1()};
  if (!force && now == window_) return;
  cursor.t0 = now.first;
  cursor.t1 = now.second;
  version_seen_ = ++cursor.version;
  window_ = now;
}

}  // namespace rt::viz::draw
