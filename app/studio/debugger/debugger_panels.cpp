#include "debugger/debugger_panels.h"

#include <QObject>

#include "debugger/debugger_contents.h"
#include "debugger/debugger_session.h"
#include "debugger/debugger_widget.h"
#include "debugger/graph_panel_widget.h"
#include "imgui_host/imgui_host_widget.h"
#include "shell/panel.h"

namespace rt::studio {
namespace {

class DebuggerPanel final : public StudioPanel {
 public:
  QString id() const override { return QStringLiteral("debugger"); }
  QString title() const override { return QObject::tr("Debugger"); }
  Qt::DockWidgetArea default_area() const override { return Qt::BottomDockWidgetArea; }  // wide: gradients, histograms, node list
  bool needs_opengl() const override { return true; }
  QWidget* create_widget(const PanelContext&, QWidget* parent) override {
    return new DebuggerWidget(studio_debugger_session(), parent);
  }
};

class GraphPanel final : public StudioPanel {
 public:
  QString id() const override { return QStringLiteral("graph"); }
  QString title() const override { return QObject::tr("Graph"); }
  bool starts_visible() const override { return false; }
  bool needs_opengl() const override { return true; }
  QWidget* create_widget(const PanelContext&, QWidget* parent) override {
    return new GraphPanelWidget(studio_debugger_session(), parent);
  }
};

class GradNormsPanel final : public StudioPanel {
 public:
  QString id() const override { return QStringLiteral("grad_norms"); }
  QString title() const override { return QObject::tr("Gradient norms"); }
  Qt::DockWidgetArea default_area() const override { return Qt::BottomDockWidgetArea; }
  bool starts_visible() const override { return false; }
  bool needs_opengl() const override { return true; }
  QWidget* create_widget(const PanelContext&, QWidget* parent) override {
    auto session = studio_debugger_session();
    auto* host = new ImGuiHostWidget(parent);
    host->setContent(std::make_unique<GradNormContent>(session));
    QObject::connect(session.get(), &DebuggerSession::normsChanged, host, &ImGuiHostWidget::requestFrame);
    return host;
  }
};

}  // namespace

std::shared_ptr<DebuggerSession> studio_debugger_session() {
  // Owned by the panels' widgets, so it ends with them (before QApplication), never at static destruction.
  static std::weak_ptr<DebuggerSession> current;
  if (auto s = current.lock()) return s;
  auto s = std::make_shared<DebuggerSession>();
  current = s;
  return s;
}

void register_debugger_panels(PanelRegistry& registry) {
  registry.add(std::make_unique<DebuggerPanel>());
  registry.add(std::make_unique<GraphPanel>());
  registry.add(std::make_unique<GradNormsPanel>());
}

}  // namespace rt::studio
