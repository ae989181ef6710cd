#include "viz_panels/visualizer_panels.h"

#include <QObject>

#include <map>
#include <memory>

#include "rt/prof/session_registry.h"
#include "shell/panel.h"
#include "viz_panels/viz_panel_widget.h"

namespace rt::studio {

namespace {

// One cursor per main window (the dock's top-level), shared by its timeline and memory panels.
std::shared_ptr<SharedTimeCursor> cursor_for(QWidget* parent) {
  static std::map<QWidget*, std::weak_ptr<SharedTimeCursor>> cursors;
  QWidget* window = parent ? parent->window() : nullptr;
  if (auto existing = cursors[window].lock()) return existing;
  auto cursor = std::make_shared<SharedTimeCursor>();
  cursors[window] = cursor;
  return cursor;
}

class VisualizerPanel final : public StudioPanel {
 public:
  VisualizerPanel(VizView view, QString title, bool visible) : view_(view), title_(std::move(title)), visible_(visible) {}

  QString id() const override { return QString::fromLatin1(view_name(view_)); }
  QString title() const override { return title_; }
  Qt::DockWidgetArea default_area() const override { return Qt::BottomDockWidgetArea; }
  bool starts_visible() const override { return visible_; }
  bool needs_opengl() const override { return true; }
  QWidget* create_widget(const PanelContext&, QWidget* parent) override {
    return new VizPanelWidget(view_, cursor_for(parent), parent);
  }

 private:
  VizView view_;
  QString title_;
  bool visible_;
};

}  // namespace

void register_visualizer_panels(PanelRegistry& registry) {
  // The panels list this process's sessions, also those whose profile object a cell has dropped.
  prof::SessionRegistry::instance().keep_finished(prof::SessionRegistry::kCapacity);
  registry.add(std::make_unique<VisualizerPanel>(VizView::Timeline, QObject::tr("Timeline"), true));
  registry.add(std::make_unique<VisualizerPanel>(VizView::Memory, QObject::tr("Memory"), true));
  registry.add(std::make_unique<VisualizerPanel>(VizView::Scalars, QObject::tr("Scalars"), false));
}

}  // namespace rt::studio
