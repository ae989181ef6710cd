// debugger/graph_panel_widget.h — the Graph panel: a toolbar choosing what to show — the backward the
// debugger is on, or the autograd graph a profiling session kept (SessionPicker: sessions recorded in this
// process, stores, traces) — above an ImGuiHostWidget drawing GraphContent.
//
//   auto* w = new GraphPanelWidget(studio_debugger_session(), dock);
//   w->showProfiles(true);                        // what choosing "Profiled session" does
//   w->picker()->openStore("runs.sqlite");        // its newest session's latest graph, with time and memory
//   w->setGraphIndex(0);                          // the first backward's graph instead
//
// Contracts
// - In debugger mode the content follows the DebuggerSession (graphChanged/stateChanged redraw it).
// - In profile mode every session the picker loads is shown with GraphContent::show_profile (a live
//   session's refreshes keep the view while its latest graph is the same backward); a session without a
//   graph leaves the previous picture and shows why in the toolbar (statusText()).
#pragma once
#include <QWidget>

#include <memory>

#include "debugger/debugger_session.h"
#include "debugger/graph_content.h"
#include "imgui_host/imgui_host_widget.h"
#include "rt/prof/events.h"
#include "viz_panels/session_picker.h"

class QComboBox;
class QLabel;

namespace rt::studio {

class GraphPanelWidget : public QWidget {
  Q_OBJECT

 public:
  explicit GraphPanelWidget(std::shared_ptr<DebuggerSession> session, QWidget* parent = nullptr);

  void showProfiles(bool on);
  bool showingProfiles() const;
  // Which graph of the session: -1 the latest backward's (default), 0 the first's.
  void setGraphIndex(int index);
  SessionPicker* picker() const { return picker_; }
  ImGuiHostWidget* host() const { return host_; }
  GraphContent* content() const { return content_; }
  QString statusText() const;

 private:
  void show_loaded();

  std::shared_ptr<DebuggerSession> session_;
  QComboBox* source_ = nullptr;
  QComboBox* which_ = nullptr;
  QLabel* status_ = nullptr;
  SessionPicker* picker_ = nullptr;
  ImGuiHostWidget* host_ = nullptr;
  GraphContent* content_ = nullptr;  // owned by host_
  std::shared_ptr<const prof::SessionData> loaded_;
};

}  // namespace rt::studio
