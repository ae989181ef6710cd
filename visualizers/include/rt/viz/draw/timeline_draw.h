// rt/viz/draw/timeline_draw.h — the timeline of a profiling session drawn with Dear ImGui (Tracy's
// look): one track per CPU thread, GPU stream, counter and the steps, names in a left gutter, nested
// events as colored boxes, folded blocks for what is too small to draw, a time ruler, flow arrows
// for the selection, a details box, name search and range statistics.
//
//   rt::viz::draw::TimelineDraw timeline(std::make_shared<const rt::prof::SessionData>(session.snapshot()));
//   // every frame, inside an ImGui window:
//   timeline.draw(ImGui::GetContentRegionAvail(), /*scale=*/1.0f, &shared_cursor);
//   // a live session: after rt::prof::append_delta grew the data the view was built on
//   timeline.append(growth);
//
// Interaction (while the mouse is over the tracks, or the view has keyboard focus):
//   wheel            zoom about the mouse          left drag     pan (and scroll the tracks vertically)
//   A/D, Left/Right  pan                           W/S, Up/Down  zoom in / out about the center
//   left click       select the event (details box, flow arrows); click on nothing clears it
//   right drag       select a time range: per-op statistics of the range; right click clears it
//   search box       Enter / ">" next match, "<" previous; the match is selected and centered
//   double click     fit the whole session
//
// Contracts
// - Draws into the current ImGui window at the cursor position, filling `size` (device pixels).
//   `scale` multiplies every size the view picks itself (rows, margins, lines); fonts come from ImGui.
// - Colors: see rt/viz/draw/draw_style.h (by op name; backward nodes in their own darker family; GPU
//   work on its stream tracks). Folded blocks are grey and hatched, labelled with their event count
//   when it fits. The model's warnings are shown in a banner above the tracks. A session without
//   events shows "This session recorded no events".
// - Never throws for any SessionData (the model repairs bad records and reports them).
// - layout() describes the last frame, in screen coordinates, for tests and for hosts that place
//   overlays; it is empty before the first draw().
// - append(growth): the model takes in what the data gained (TimelineModel::append). A window that showed the
//   whole session keeps showing all of it; a zoomed one stays where it is. The selection stays on its event,
//   an active search and a range's statistics are computed again (their cost is the session's, paid only
//   while one is active), and the flow arrows are indexed again the next time a selection needs them.
#pragma once
#include <imgui.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/draw/time_cursor.h"
#include "rt/viz/timeline.h"
#include "rt/viz/timeline_flows.h"
#include "rt/viz/timeline_lod.h"
#include "rt/viz/timeline_select.h"
#include "rt/viz/timeline_view.h"

namespace rt::viz::draw {

struct TimelineLayout {
  struct TrackRow {
    uint32_t track = 0;
    float top = 0;     // screen y of the track's first row
    float height = 0;  // rows and padding
  };
  ImVec2 canvas_min;   // the tracks area (right of the gutter, below the ruler)
  ImVec2 canvas_max;
  float gutter_width = 0;
  float row_height = 0;
  std::vector<TrackRow> tracks;  // the tracks on screen, top to bottom
};

class TimelineDraw {
 public:
  // Throws rt::ValueError when data is null.
  explicit TimelineDraw(std::shared_ptr<const prof::SessionData> data);

  void draw(ImVec2 size, float scale, TimeCursor* cursor = nullptr);
  // The data grew (see the contracts above).
  void append(const prof::SessionGrowth& growth);

  // Programmatic control (the same as the mouse and keys do).
  void set_window(int64_t t0, int64_t t1);
  void fit_all();
  void select(std::optional<EventRef> event);
  void set_search(std::string text);           // and jumps to the first match
  void select_range(int64_t t0, int64_t t1);   // range statistics for [t0, t1]
  void clear_range();

  const TimelineModel& model() const { return model_; }
  const TimelineView& view() const { return view_; }
  std::optional<EventRef> selected() const { return selected_; }
  const std::vector<RangeRow>& range_rows() const { return range_rows_; }
  const TimelineLayout& layout() const { return layout_; }
  // Ruler times count from here: the session's start (or its first event when the start is unknown).
  int64_t time_origin() const;

 private:
  void draw_toolbar(float scale);
  void draw_banner(ImDrawList* list, ImVec2& pos, float width, float scale);
  void draw_ruler(ImDrawList* list, ImVec2 min, ImVec2 max, float scale);
  void draw_tracks(ImDrawList* list, float scale);
  void draw_track(ImDrawList* list, const TrackFrame& tf, float top, float scale);
  void draw_counter(ImDrawList* list, const TrackFrame& tf, float top, float height, float scale);
  void draw_steps(ImDrawList* list, float scale);
  void draw_flows(ImDrawList* list, float scale);
  void draw_details(float scale);
  void draw_range_stats(float scale);
  void handle_input(float scale, TimeCursor* cursor);
  float track_height(uint32_t track) const;
  std::optional<ImVec2> event_anchor(const EventRef& e) const;
  void center_on(const EventRef& e);
  void jump_to_match(const EventRef* hit);
  void update_counter_ranges(size_t first_new_sample);
  const FlowIndex& flows();  // indexed on first use after the model changed

  std::shared_ptr<const prof::SessionData> data_;
  TimelineModel model_;
  std::optional<FlowIndex> flows_;
  TimelineView view_;
  TimelineFrame frame_;
  TimelineLayout layout_;
  std::vector<TimelineLayout::TrackRow> hit_rows_;  // the previous frame's rows, for the mouse
  std::optional<EventRef> selected_;
  std::optional<EventRef> hovered_;
  std::array<char, 128> search_text_{};
  std::optional<EventSearch> search_;
  std::optional<std::pair<int64_t, int64_t>> range_;
  std::optional<int64_t> range_anchor_;  // while right-dragging
  std::vector<RangeRow> range_rows_;
  struct ValueRange {
    float lo = 0, hi = 0;
    bool any = false;
  };
  std::unordered_map<std::string, ValueRange> counter_ranges_;  // finite values of each counter, by name
  std::vector<float> counter_min_, counter_max_;  // per track, for counter charts
  float scroll_y_ = 0;
  float row_height_ = 20;
  float scale_ = 1.0f;
  CursorFollower follower_{data_.get()};
  bool dragging_ = false;
};

}  // namespace rt::viz::draw
