// viz_panels/viz_panel_widget.h — what a visualizer panel shows: a SessionPicker toolbar above an
// ImGuiHostWidget drawing one view (timeline, memory or scalars) of the chosen session.
//
//   auto cursor = std::make_shared<SharedTimeCursor>();        // one per main window, shared by panels
//   auto* w = new VizPanelWidget(VizView::Memory, cursor, dock);
//   w->picker()->openStore("runs.sqlite");
//
// Contracts
// - Choosing a session replaces the host's content. While a live session records, the picker grows its
//   data with what was recorded since its previous read and the panel hands the growth to the content it
//   shows (SessionViewContent::append), so a refresh costs what arrived, not the whole session; the view keeps
//   its state (a timeline fitted to the session keeps fitting it as it grows, a zoomed one stays, the
//   selection stays on its event). A reset (the session stopped) rebuilds the content, keeping a zoomed
//   timeline's window; in the scalars panel it replaces the live session's lines and keeps the overlaid ones.
// - SharedTimeCursor: views of the same session in several panels share their time window and hover
//   time; when one panel's frame changed the cursor, every panel sharing it redraws.
// - Scalars: with "Overlay" checked, a newly chosen session is added to the charts instead of replacing
//   them (Clear overlay keeps only the last one).
#pragma once
#include <QObject>
#include <QWidget>

#include <memory>
#include <vector>

#include "imgui_host/imgui_host_widget.h"
#include "rt/prof/events.h"
#include "rt/viz/draw/time_cursor.h"
#include "viz_panels/session_picker.h"
#include "viz_panels/session_view_content.h"

class QCheckBox;

namespace rt::studio {

class SharedTimeCursor : public QObject {
  Q_OBJECT

 public:
  std::shared_ptr<viz::draw::TimeCursor> cursor = std::make_shared<viz::draw::TimeCursor>();
  // Emits changed() when the window or hover time moved since the last call.
  void notify_if_changed();

 signals:
  void changed();

 private:
  uint64_t version_ = 0;
  std::optional<int64_t> hover_;
};

class VizPanelWidget : public QWidget {
  Q_OBJECT

 public:
  VizPanelWidget(VizView view, std::shared_ptr<SharedTimeCursor> cursor, QWidget* parent = nullptr);

  VizView view() const { return view_; }
  SessionPicker* picker() const { return picker_; }
  ImGuiHostWidget* host() const { return host_; }
  SessionViewContent* content() const;  // nullptr until a session is shown
  size_t overlaid_sessions() const { return sessions_.size(); }

 private:
  void show_session(std::shared_ptr<const prof::SessionData> data, bool live);
  void grow_session(const std::shared_ptr<const prof::SessionData>& data, const prof::SessionGrowth& growth);

  VizView view_;
  std::shared_ptr<SharedTimeCursor> cursor_;
  SessionPicker* picker_ = nullptr;
  ImGuiHostWidget* host_ = nullptr;
  QCheckBox* overlay_ = nullptr;
  std::vector<std::shared_ptr<const prof::SessionData>> sessions_;
  bool last_was_live_ = false;
};

}  // namespace rt::studio
