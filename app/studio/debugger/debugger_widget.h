// debugger/debugger_widget.h — the "debugger" panel: a toolbar (arm, pause at start, Continue F5,
// Step F11, Step over module F10, Run to selected node, Pause, Stop Shift+F5), the breakpoint list
// (add, remove, enable: NaN/Inf, op, module, grad norm) and the ImGui gradient view.
//
//   auto session = std::make_shared<rt::studio::DebuggerSession>();
//   auto* w = new rt::studio::DebuggerWidget(session, dock);
//   w->action(rt::studio::DebuggerWidget::Arm)->trigger();        // attach before the forward pass
//
// Contracts
// - Every control calls the session on the GUI thread. The actions' shortcuts work anywhere in the
//   window (Qt::WindowShortcut) so F5/F10/F11 drive a backward paused while the notebook has focus.
// - Actions are enabled only when they can act: stepping while paused, Pause while a backward runs
//   unpaused, Stop while one runs; Run to selected node also needs a selected node.
// - Adding a breakpoint with a bad pattern (empty op, negative threshold) shows the error under the
//   list and adds nothing.
#pragma once
#include <QWidget>

#include <array>
#include <memory>

#include "debugger/debugger_session.h"
#include "imgui_host/imgui_host_widget.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace rt::studio {

class DebuggerContent;

class DebuggerWidget : public QWidget {
  Q_OBJECT

 public:
  enum ActionId { Arm, PauseAtStart, Continue, Step, StepOver, RunToSelected, Pause, Stop, kActionCount };

  explicit DebuggerWidget(std::shared_ptr<DebuggerSession> session, QWidget* parent = nullptr);

  QAction* action(ActionId id) const { return actions_[size_t(id)]; }
  ImGuiHostWidget* host() const { return host_; }
  DebuggerContent* content() const;
  QTreeWidget* breakpointList() const { return breakpoints_; }
  QComboBox* breakpointKind() const { return kind_; }
  QLineEdit* breakpointPattern() const { return pattern_; }
  QPushButton* addButton() const { return add_; }
  QPushButton* removeButton() const { return remove_; }
  QLabel* errorLabel() const { return error_; }
  const std::shared_ptr<DebuggerSession>& session() const { return session_; }

 private:
  void build_toolbar();
  void build_breakpoints(QWidget* pane);
  void add_breakpoint();
  void remove_selected();
  void refresh_breakpoints();
  void item_changed(QTreeWidgetItem* item, int column);
  void update_actions();

  std::shared_ptr<DebuggerSession> session_;
  std::array<QAction*, kActionCount> actions_{};
  ImGuiHostWidget* host_ = nullptr;
  QTreeWidget* breakpoints_ = nullptr;
  QComboBox* kind_ = nullptr;
  QLineEdit* pattern_ = nullptr;
  QPushButton* add_ = nullptr;
  QPushButton* remove_ = nullptr;
  QLabel* error_ = nullptr;
  QLabel* hint_ = nullptr;
  QWidget* toolbar_host_ = nullptr;
  bool refreshing_ = false;
};

}  // namespace rt::studio
