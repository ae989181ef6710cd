// rt/viz/draw/memory_draw.h — memory over time drawn with Dear ImGui (PyTorch's memory_viz, stacked):
// one chart per device with the live bytes stacked by category (parameters, gradients, activations,
// optimizer state, temporaries, other), a legend, the peak marked, a tooltip naming the block under
// the mouse (allocating op, bytes, category) and the largest live blocks at the cursor time.
//
//   rt::viz::draw::MemoryDraw memory(session_data);                 // shared_ptr<const SessionData>
//   memory.draw(ImGui::GetContentRegionAvail(), scale, &shared_cursor);   // same cursor as the timeline
//   memory.append(growth);                      // a live session's data grew (rt::prof::append_delta)
//
// Interaction: wheel zooms about the mouse, left drag pans, double click fits the session; hovering
// sets the shared cursor's time, which the timeline marks too (rt/viz/draw/time_cursor.h).
//
// Contracts
// - Draws into the current ImGui window at the cursor position, filling `size` (device pixels); `scale`
//   multiplies the sizes the view picks itself. Never throws for any SessionData.
// - Each chart's byte axis runs from 0 to a little above that device's peak, whatever the zoom, so
//   charts stay comparable while panning. Columns come from MemoryTimelineModel::columns, so no peak is
//   lost however far out the view is zoomed.
// - The block list shows the state at the cursor time: the hovered time, else the shared cursor's,
//   else the first device's peak.
// - A session without memory events says why: memory was not profiled, or nothing was allocated.
// - append(growth): the model takes in the new events (MemoryTimelineModel::append); a window that showed the
//   whole session keeps showing all of it, a zoomed one stays.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/draw/time_cursor.h"
#include "rt/viz/memory_timeline.h"
#include "rt/viz/timeline_view.h"

namespace rt::viz::draw {

ImU32 category_color(prof::MemoryCategoryId category);

struct MemoryLayout {
  struct Chart {
    int32_t device = -1;
    ImVec2 plot_min;               // the stacked area, screen coordinates
    ImVec2 plot_max;
    int64_t axis_max_bytes = 0;    // bytes at plot_min.y
    std::optional<float> peak_x;   // screen x of the peak marker, when the peak is in the window
  };
  std::vector<Chart> charts;
  std::optional<int64_t> list_time_ns;  // the time of the block list
};

class MemoryDraw {
 public:
  // Throws rt::ValueError when data is null.
  explicit MemoryDraw(std::shared_ptr<const prof::SessionData> data);

  void draw(ImVec2 size, float scale, TimeCursor* cursor = nullptr);
  // The data grew (see the contracts above).
  void append(const prof::SessionGrowth& growth);
  void set_window(int64_t t0, int64_t t1);
  void fit_all();

  const MemoryTimelineModel& model() const { return model_; }
  const TimelineView& view() const { return view_; }
  const MemoryLayout& layout() const { return layout_; }

 private:
  void draw_legend(ImDrawList* list, ImVec2 min, float width, float scale);
  void draw_chart(ImDrawList* list, const DeviceMemory& dev, ImVec2 min, ImVec2 max, float scale,
                  std::optional<int64_t> cursor_ns);
  void draw_block_list(ImDrawList* list, ImVec2 min, ImVec2 max, float scale, int64_t time_ns);
  void handle_input(ImVec2 min, ImVec2 max, float scale, TimeCursor* cursor);
  std::pair<int64_t, int64_t> extent() const;  // the events', widened to the session's start and end

  std::shared_ptr<const prof::SessionData> data_;
  MemoryTimelineModel model_;
  TimelineView view_;
  MemoryLayout layout_;
  std::vector<MemoryColumn> columns_;
  std::optional<int64_t> hover_ns_;
  std::optional<float> hover_y_;
  CursorFollower follower_{data_.get()};
  float plot_left_ = 0;
};

}  // namespace rt::viz::draw
