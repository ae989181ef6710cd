#include "cell_widget.h"

#include "code_editor.h"
#include "markdown_view.h"
#include "output_area.h"

#include <QFontMetrics>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QVBoxLayout>

namespace rt::studio {

namespace {

constexpr int kBarWidth = 5;
constexpr int kBarGap = 4;

QString to_qstring(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

CodeEditor::Language language_of(CellType type) {
  switch (type) {
    case CellType::code: return CodeEditor::Language::Python;
    case CellType::markdown: return CodeEditor::Language::Markdown;
    case CellType::raw: return CodeEditor::Language::Plain;
  }
  return CodeEditor::Language::Plain;
}

}  // namespace

bool outputs_hidden(const nlohmann::json& metadata) {
  if (!metadata.is_object()) return false;
  if (auto it = metadata.find("collapsed"); it != metadata.end() && it->is_boolean() && it->get<bool>()) return true;
  if (auto j = metadata.find("jupyter"); j != metadata.end() && j->is_object()) {
    if (auto h = j->find("outputs_hidden"); h != j->end() && h->is_boolean()) return h->get<bool>();
  }
  return false;
}

nlohmann::json with_outputs_hidden(nlohmann::json metadata, bool hidden) {
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  if (hidden) {
    metadata["collapsed"] = true;
    if (!metadata.contains("jupyter") || !metadata["jupyter"].is_object()) metadata["jupyter"] = nlohmann::json::object();
    metadata["jupyter"]["outputs_hidden"] = true;
  } else {
    metadata.erase("collapsed");
    if (auto j = metadata.find("jupyter"); j != metadata.end() && j->is_object()) {
      j->erase("outputs_hidden");
      if (j->empty()) metadata.erase("jupyter");
    }
  }
  return metadata;
}

int CellWidget::prompt_column_width() {
  return QFontMetrics(notebook_monospace_font()).horizontalAdvance(QStringLiteral("[9999]:")) + 14;
}

CellWidget::CellWidget(const Cell& cell, QWidget* parent)
    : QFrame(parent), cell_id_(cell.id), type_(cell.type) {
  setObjectName(QStringLiteral("cell-") + QString::fromStdString(cell.id));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(kBarWidth + kBarGap, 4, 8, 4);
  outer->setSpacing(2);

  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->setSpacing(0);
  prompt_ = new QLabel(this);
  prompt_->setFixedWidth(prompt_column_width());
  prompt_->setAlignment(Qt::AlignRight | Qt::AlignTop);
  prompt_->setFont(notebook_monospace_font());
  prompt_->setContentsMargins(0, 4, 8, 0);
  prompt_->setStyleSheet(QStringLiteral("color:#303f9f;"));
  top->addWidget(prompt_);
  body_ = new QVBoxLayout;
  body_->setContentsMargins(0, 0, 0, 0);
  body_->setSpacing(0);
  top->addLayout(body_, 1);
  outer->addLayout(top);

  if (type_ == CellType::markdown) {
    markdown_ = new MarkdownView(this);
    body_->addWidget(markdown_);
    connect(markdown_, &MarkdownView::editRequested, this, [this] { emit editRequested(cell_id_); });
    connect(markdown_, &MarkdownView::clicked, this,
            [this] { emit pressed(cell_id_, QGuiApplication::keyboardModifiers()); });
  } else {
    ensure_editor();
  }

  run_time_ = new QLabel(this);
  run_time_->setContentsMargins(prompt_column_width(), 0, 0, 0);
  run_time_->setStyleSheet(QStringLiteral("color:#8a8a8a; font-size:small;"));
  run_time_->hide();
  outer->addWidget(run_time_);

  if (type_ == CellType::code) {
    outputs_ = new OutputArea(prompt_column_width(), this);
    outer->addWidget(outputs_);
    connect(outputs_, &OutputArea::collapseToggleRequested, this, [this] { emit collapseToggleRequested(cell_id_); });
  }
  show_cell(cell);
  show_outputs(cell);
}

CellWidget::~CellWidget() = default;

void CellWidget::ensure_editor() {
  if (editor_) return;
  editor_ = new CodeEditor(language_of(type_), this);
  body_->addWidget(editor_);
  {
    const bool was_setting = setting_text_;
    setting_text_ = true;
    editor_->setText(to_qstring(source_));
    setting_text_ = was_setting;
  }
  connect(editor_, &QsciScintilla::textChanged, this, [this] {
    if (setting_text_) return;
    editor_->clear_error_line();
    emit sourceEdited(cell_id_);
  });
  connect(editor_, &CodeEditor::focusReceived, this, [this] { emit editorFocused(cell_id_); });
  connect(editor_, &CodeEditor::caretMoved, this, [this] {
    if (editor_->hasFocus()) emit caretMoved(cell_id_, QRect(editor_->mapTo(this, editor_->caret_rect().topLeft()),
                                                            editor_->caret_rect().size()));
  });
  if (editor_filter_) editor_->installEventFilter(editor_filter_);
}

void CellWidget::show_cell(const Cell& cell) {
  execution_count_ = cell.execution_count;
  if (cell.source != source_ || (editor_ && editor_source() != cell.source)) {
    source_ = cell.source;
    if (editor_ && editor_source() != source_) {
      setting_text_ = true;
      editor_->setText(to_qstring(source_));
      setting_text_ = false;
    }
    if (markdown_) markdown_->set_markdown_source(to_qstring(source_));
  }
  if (outputs_) outputs_->set_collapsed(outputs_hidden(cell.metadata));
  update_prompt();
}

void CellWidget::show_outputs(const Cell& cell) {
  execution_count_ = cell.execution_count;
  if (outputs_) {
    outputs_->set_outputs(cell.outputs);
    if (cell.outputs.empty() && editor_) editor_->clear_error_line();
  }
  update_prompt();
}

std::string CellWidget::editor_source() const {
  if (!editor_) return source_;
  return editor_->text().toStdString();
}

void CellWidget::update_prompt() {
  if (type_ != CellType::code) {
    prompt_->clear();
    return;
  }
  if (run_state_) {
    prompt_->setText(QStringLiteral("[*]:"));
  } else if (execution_count_) {
    prompt_->setText(QStringLiteral("[%1]:").arg(*execution_count_));
  } else {
    prompt_->setText(QStringLiteral("[ ]:"));
  }
}

QString CellWidget::prompt_text() const { return prompt_->text(); }

void CellWidget::set_run_state(std::optional<ExecutionQueue::State> state) {
  run_state_ = state;
  update_prompt();
}

void CellWidget::set_run_time_text(const QString& text) {
  run_time_->setText(text);
  run_time_->setVisible(!text.isEmpty());
}

QString CellWidget::run_time_text() const { return run_time_->text(); }

void CellWidget::set_highlight(Highlight highlight) {
  if (highlight_ == highlight) return;
  highlight_ = highlight;
  update();
}

void CellWidget::enter_editor(bool focus) {
  if (markdown_) markdown_->hide();
  ensure_editor();
  editor_->show();
  if (focus) editor_->setFocus(Qt::OtherFocusReason);
}

void CellWidget::set_editor_event_filter(QObject* filter) {
  if (editor_ && editor_filter_) editor_->removeEventFilter(editor_filter_);
  editor_filter_ = filter;
  if (editor_ && editor_filter_) editor_->installEventFilter(editor_filter_);
}

void CellWidget::show_execution_count(std::optional<std::int64_t> count) {
  execution_count_ = count;
  update_prompt();
}

void CellWidget::leave_editor() {
  if (!markdown_) return;
  if (editor_) {
    markdown_->set_markdown_source(to_qstring(editor_source()));
    editor_->hide();
  }
  markdown_->show();
}

bool CellWidget::is_rendered() const { return markdown_ && !markdown_->isHidden(); }

void CellWidget::paintEvent(QPaintEvent* event) {
  QFrame::paintEvent(event);
  QPainter p(this);
  QColor bar, background;
  switch (highlight_) {
    case Highlight::None: return;
    case Highlight::Selected:
      bar = QColor(0x90, 0xca, 0xf9);
      background = QColor(0xe3, 0xf2, 0xfd);
      break;
    case Highlight::ActiveCommand:
      bar = QColor(0x19, 0x76, 0xd2);
      background = QColor(0xf1, 0xf7, 0xfe);
      break;
    case Highlight::ActiveEdit:
      bar = QColor(0x38, 0x8e, 0x3c);
      background = QColor(0xf3, 0xfa, 0xf3);
      break;
  }
  p.fillRect(rect().adjusted(kBarWidth, 0, 0, 0), background);
  p.fillRect(QRect(0, 0, kBarWidth, height()), bar);
}

void CellWidget::mousePressEvent(QMouseEvent* event) {
  emit pressed(cell_id_, event->modifiers());
  QFrame::mousePressEvent(event);
}

}  // namespace rt::studio
