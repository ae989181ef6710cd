#include "debugger/debugger_widget.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QToolBar>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "debugger/debugger_contents.h"
#include "rt/error.h"

namespace rt::studio {
namespace {

enum KindIndex { kNonFinite, kOp, kModule, kGradNorm };

}  // namespace

DebuggerWidget::DebuggerWidget(std::shared_ptr<DebuggerSession> session, QWidget* parent)
    : QWidget(parent), session_(std::move(session)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  build_toolbar();
  layout->addWidget(toolbar_host_);
  hint_ = new QLabel(tr("Arm \"Debug backward\" before the forward pass: nodes then carry their op and module names."), this);
  hint_->setContentsMargins(8, 3, 8, 3);
  hint_->setWordWrap(true);
  layout->addWidget(hint_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* pane = new QWidget(split);
  build_breakpoints(pane);
  host_ = new ImGuiHostWidget(split);
  host_->setContent(std::make_unique<DebuggerContent>(session_));
  split->addWidget(pane);
  split->addWidget(host_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({260, 900});
  layout->addWidget(split, 1);

  connect(session_.get(), &DebuggerSession::stateChanged, this, [this] {
    refresh_breakpoints();
    update_actions();
    host_->requestFrame();
  });
  connect(session_.get(), &DebuggerSession::graphChanged, host_, &ImGuiHostWidget::requestFrame);
  connect(session_.get(), &DebuggerSession::armedChanged, this, [this](bool on) {
    actions_[Arm]->setChecked(on);
    update_actions();
  });
  refresh_breakpoints();
  update_actions();
}

DebuggerContent* DebuggerWidget::content() const { return static_cast<DebuggerContent*>(host_->content()); }

void DebuggerWidget::build_toolbar() {
  toolbar_host_ = new QWidget(this);
  auto* row = new QHBoxLayout(toolbar_host_);
  row->setContentsMargins(4, 2, 4, 2);
  auto* bar = new QToolBar(toolbar_host_);
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  row->addWidget(bar);
  auto make = [&](ActionId id, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, this);
    if (!key.isEmpty()) {
      a->setShortcut(key);
      a->setShortcutContext(Qt::WindowShortcut);
      a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
    } else {
      a->setToolTip(tip);
    }
    addAction(a);
    bar->addAction(a);
    actions_[size_t(id)] = a;
    return a;
  };
  auto* arm = make(Arm, tr("Debug backward"), {}, tr("Attach the debugger; arm it before the forward pass"));
  arm->setCheckable(true);
  auto* at_start = make(PauseAtStart, tr("Pause at start"), {}, tr("Pause before the first node of each backward"));
  at_start->setCheckable(true);
  bar->addSeparator();
  make(Continue, tr("Continue"), QKeySequence(Qt::Key_F5), tr("Run to the next breakpoint"));
  make(Step, tr("Step"), QKeySequence(Qt::Key_F11), tr("Run this node, pause before the next"));
  make(StepOver, tr("Step over module"), QKeySequence(Qt::Key_F10), tr("Pause at the next node outside this module"));
  make(RunToSelected, tr("Run to selected"), {}, tr("Run until the node selected in the graph or execution order"));
  make(Pause, tr("Pause"), {}, tr("Pause before the next node"));
  make(Stop, tr("Stop"), QKeySequence(Qt::SHIFT | Qt::Key_F5), tr("Abort the backward (BackwardStopped)"));

  connect(arm, &QAction::toggled, this, [this](bool on) { session_->arm(on); });
  connect(at_start, &QAction::toggled, this, [this](bool on) { session_->set_pause_at_start(on); });
  connect(actions_[Continue], &QAction::triggered, this, [this] { session_->cont(); session_->poll(); });
  connect(actions_[Step], &QAction::triggered, this, [this] { session_->step(); session_->poll(); });
  connect(actions_[StepOver], &QAction::triggered, this, [this] { session_->step_over(); session_->poll(); });
  connect(actions_[RunToSelected], &QAction::triggered, this, [this] {
    if (auto id = session_->selected_node()) session_->run_to(*id);
    session_->poll();
  });
  connect(actions_[Pause], &QAction::triggered, this, [this] { session_->pause(); session_->poll(); });
  connect(actions_[Stop], &QAction::triggered, this, [this] { session_->stop(); session_->poll(); });
}

void DebuggerWidget::build_breakpoints(QWidget* pane) {
  auto* col = new QVBoxLayout(pane);
  col->setContentsMargins(6, 4, 4, 4);
  col->addWidget(new QLabel(tr("Breakpoints"), pane));
  breakpoints_ = new QTreeWidget(pane);
  breakpoints_->setColumnCount(2);
  breakpoints_->setHeaderLabels({tr("Condition"), tr("Hits")});
  breakpoints_->setRootIsDecorated(false);
  breakpoints_->header()->setStretchLastSection(false);
  breakpoints_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  breakpoints_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  col->addWidget(breakpoints_, 1);
  auto* row = new QHBoxLayout;
  kind_ = new QComboBox(pane);
  kind_->addItems({tr("NaN/Inf"), tr("Op"), tr("Module"), tr("Grad norm >")});
  pattern_ = new QLineEdit(pane);
  pattern_->setPlaceholderText(tr("linear / fc1 / 100"));
  row->addWidget(kind_);
  row->addWidget(pattern_, 1);
  col->addLayout(row);
  auto* buttons = new QHBoxLayout;
  add_ = new QPushButton(tr("Add"), pane);
  remove_ = new QPushButton(tr("Remove"), pane);
  buttons->addWidget(add_);
  buttons->addWidget(remove_);
  buttons->addStretch(1);
  col->addLayout(buttons);
  error_ = new QLabel(pane);
  error_->setStyleSheet(QStringLiteral("color: #e0584c"));
  error_->setWordWrap(true);
  col->addWidget(error_);
  connect(kind_, &QComboBox::currentIndexChanged, this, [this](int k) { pattern_->setEnabled(k != kNonFinite); });
  pattern_->setEnabled(false);
  connect(add_, &QPushButton::clicked, this, &DebuggerWidget::add_breakpoint);
  connect(pattern_, &QLineEdit::returnPressed, this, &DebuggerWidget::add_breakpoint);
  connect(remove_, &QPushButton::clicked, this, &DebuggerWidget::remove_selected);
  connect(breakpoints_, &QTreeWidget::itemChanged, this, &DebuggerWidget::item_changed);
}

void DebuggerWidget::add_breakpoint() {
  error_->clear();
  const std::string text = pattern_->text().trimmed().toStdString();
  try {
    switch (kind_->currentIndex()) {
      case kNonFinite: session_->break_on_non_finite(); break;
      case kOp: session_->break_on_op(text); break;
      case kModule: session_->break_on_module(text); break;
      case kGradNorm: {
        bool ok = false;
        const double v = pattern_->text().trimmed().toDouble(&ok);
        if (!ok) throw ValueError("grad-norm threshold '" + text + "' is not a number");
        session_->break_on_grad_norm(v);
        break;
      }
    }
    pattern_->clear();
  } catch (const std::exception& e) {
    error_->setText(QString::fromStdString(e.what()));
  }
  refresh_breakpoints();
}

void DebuggerWidget::remove_selected() {
  for (QTreeWidgetItem* item : breakpoints_->selectedItems()) session_->remove_breakpoint(item->data(0, Qt::UserRole).toInt());
  refresh_breakpoints();
}

void DebuggerWidget::refresh_breakpoints() {
  const auto list = session_->breakpoints();
  refreshing_ = true;
  const int current = breakpoints_->currentItem() ? breakpoints_->currentItem()->data(0, Qt::UserRole).toInt() : -1;
  breakpoints_->clear();
  for (const auto& b : list) {
    auto* item = new QTreeWidgetItem(breakpoints_);
    QString text;
    switch (b.kind) {
      case debug::BreakpointKind::NonFinite: text = tr("NaN / Inf appears"); break;
      case debug::BreakpointKind::Op: text = tr("op %1").arg(QString::fromStdString(b.pattern)); break;
      case debug::BreakpointKind::Module: text = tr("module %1").arg(QString::fromStdString(b.pattern)); break;
      case debug::BreakpointKind::GradNorm: text = tr("grad norm > %1").arg(b.threshold); break;
    }
    item->setText(0, text);
    item->setText(1, QString::number(b.hits));
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setData(0, Qt::UserRole, b.id);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(0, b.enabled ? Qt::Checked : Qt::Unchecked);
    if (b.id == current) breakpoints_->setCurrentItem(item);
  }
  refreshing_ = false;
  remove_->setEnabled(!list.empty());
}

void DebuggerWidget::item_changed(QTreeWidgetItem* item, int column) {
  if (refreshing_ || column != 0) return;
  session_->set_breakpoint_enabled(item->data(0, Qt::UserRole).toInt(), item->checkState(0) == Qt::Checked);
}

void DebuggerWidget::update_actions() {
  const auto& st = session_->status();
  const bool paused = st.paused.has_value();
  const bool running = st.running;
  actions_[Continue]->setEnabled(paused);
  actions_[Step]->setEnabled(paused);
  actions_[StepOver]->setEnabled(paused);
  actions_[RunToSelected]->setEnabled(paused && session_->selected_node().has_value());
  actions_[Pause]->setEnabled(running && !paused);
  actions_[Stop]->setEnabled(running);
  hint_->setVisible(!session_->armed());
}

}  // namespace rt::studio
