// viz_panels/session_view_content.h — one visualizer view of one session as an ImGuiContent, for an
// ImGuiHostWidget (the panels) or render_to_image (`rtorch-studio --render`).
//
//   auto cursor = std::make_shared<rt::viz::draw::TimeCursor>();      // shared by timeline and memory
//   host->setContent(std::make_unique<SessionViewContent>(VizView::Timeline, data, cursor));
//   content->append(growth);      // a live session: its data (the last session given) grew by append_delta
//
// Contracts
// - parse_view accepts "timeline", "memory" and "scalars" and throws rt::ValueError naming them otherwise.
// - The content keeps `data` alive. Scalars overlays every session given (the first is the primary one).
// - append(growth): the last session's data grew (rt::prof::append_delta on the SessionData the content was
//   given); the view's model takes in only what is new (TimelineDraw / MemoryDraw / ScalarsDraw::append).
// - When the content is destroyed it releases the shared cursor if its session held it, so the next
//   session's views claim it afresh.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "imgui_host/imgui_content.h"
#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/draw/memory_draw.h"
#include "rt/viz/draw/scalars_draw.h"
#include "rt/viz/draw/time_cursor.h"
#include "rt/viz/draw/timeline_draw.h"

namespace rt::studio {

enum class VizView { Timeline, Memory, Scalars };

VizView parse_view(std::string_view name);
const char* view_name(VizView view);

class SessionViewContent final : public ImGuiContent {
 public:
  SessionViewContent(VizView view, std::vector<std::shared_ptr<const prof::SessionData>> sessions,
                     std::shared_ptr<viz::draw::TimeCursor> cursor = nullptr);
  ~SessionViewContent() override;

  void draw(ImGuiFrame& frame) override;
  bool wants_live_updates() const override { return false; }  // the session picker pushes what is new
  void append(const prof::SessionGrowth& growth);

  VizView view() const { return view_; }
  const prof::SessionData& data() const { return *sessions_.front(); }
  const std::vector<std::shared_ptr<const prof::SessionData>>& sessions() const { return sessions_; }
  viz::draw::TimelineDraw* timeline() { return timeline_.get(); }
  viz::draw::MemoryDraw* memory() { return memory_.get(); }
  viz::draw::ScalarsDraw* scalars() { return scalars_.get(); }

 private:
  VizView view_;
  std::vector<std::shared_ptr<const prof::SessionData>> sessions_;
  std::shared_ptr<viz::draw::TimeCursor> cursor_;
  std::unique_ptr<viz::draw::TimelineDraw> timeline_;
  std::unique_ptr<viz::draw::MemoryDraw> memory_;
  std::unique_ptr<viz::draw::ScalarsDraw> scalars_;
};

}  // namespace rt::studio
