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

QString toQString(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

CodeEditor::Language languageOf(CellType type) {
  switch (type) {
    case CellType::code: return CodeEditor::Language::Python;
    case CellType::markdown: return CodeEditor::Language::Markdown;
    case CellType::raw: return CodeEditor::Language::Plain;
  }
  return CodeEditor::Language::Plain;
}

}  // namespace

bool outputsHidden(const nlohmann::json& metadata) {
  if (!metadata.is_object()) return false;
  if (auto it = metadata.find("collapsed"); it != metadata.end() && it->is_boolean() && it->get<bool>()) return true;
  if (auto j = metadata.find("jupyter"); j != metadata.end() && j->is_object()) {
    if (auto h = j->find("outputs_hidden"); h != j->end() && h->is_boolean()) return h->get<bool>();
  }
  return false;
}

nlohmann::json withOutputsHidden(nlohmann::json metadata, bool hidden) {
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

int CellWidget::promptColumnWidth() {
  return QFontMetrics(notebookMonospaceFont()).horizontalAdvance(QStringLiteral("[9999]:")) + 14;
}

CellWidget::CellWidget(const Cell& cell, QWidget* parent)
    : QFrame(parent), cellId_(cell.id), type_(cell.type) {
  setObjectName(QStringLiteral("cell-") + QString::fromStdString(cell.id));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(kBarWidth + kBarGap, 4, 8, 4);
  outer->setSpacing(2);

  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->setSpacing(0);
  prompt_ = new QLabel(this);
  prompt_->setFixedWidth(promptColumnWidth());
  prompt_->setAlignment(Qt::AlignRight | Qt::AlignTop);
  prompt_->setFont(notebookMonospaceFont());
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
    connect(markdown_, &MarkdownView::editRequested, this, [this] { emit editRequested(cellId_); });
    connect(markdown_, &MarkdownView::clicked, this,
            [this] { emit pressed(cellId_, QGuiApplication::keyboardModifiers()); });
  } else {
    ensureEditor();
  }

  runTime_ = new QLabel(this);
  runTime_->setContentsMargins(promptColumnWidth(), 0, 0, 0);
  runTime_->setStyleSheet(QStringLiteral("color:#8a8a8a; font-size:small;"));
  runTime_->hide();
  outer->addWidget(runTime_);

  if (type_ == CellType::code) {
    outputs_ = new OutputArea(promptColumnWidth(), this);
    outer->addWidget(outputs_);
    connect(outputs_, &OutputArea::collapseToggleRequested, this, [this] { emit collapseToggleRequested(cellId_); });
  }
  showCell(cell);
  showOutputs(cell);
}

CellWidget::~CellWidget() = default;

void CellWidget::ensureEditor() {
  if (editor_) return;
  editor_ = new CodeEditor(languageOf(type_), this);
  body_->addWidget(editor_);
  {
    const bool wasSetting = settingText_;
    settingText_ = true;
    editor_->setText(toQString(source_));
    settingText_ = wasSetting;
  }
  connect(editor_, &QsciScintilla::textChanged, this, [this] {
    if (settingText_) return;
    editor_->clearErrorLine();
    emit sourceEdited(cellId_);
  });
  connect(editor_, &CodeEditor::focusReceived, this, [this] { emit editorFocused(cellId_); });
  connect(editor_, &CodeEditor::caretMoved, this, [this] {
    if (editor_->hasFocus()) emit caretMoved(cellId_, QRect(editor_->mapTo(this, editor_->caretRect().topLeft()),
                                                            editor_->caretRect().size()));
  });
  if (editorFilter_) editor_->installEventFilter(editorFilter_);
}

void CellWidget::showCell(const Cell& cell) {
  executionCount_ = cell.execution_count;
  if (cell.source != source_ || (editor_ && editorSource() != cell.source)) {
    source_ = cell.source;
    if (editor_ && editorSource() != source_) {
      settingText_ = true;
      editor_->setText(toQString(source_));
      settingText_ = false;
    }
    if (markdown_) markdown_->setMarkdownSource(toQString(source_));
  }
  if (outputs_) outputs_->setCollapsed(outputsHidden(cell.metadata));
  updatePrompt();
}

void CellWidget::showOutputs(const Cell& cell) {
  executionCount_ = cell.execution_count;
  if (outputs_) {
    outputs_->setOutputs(cell.outputs);
    if (cell.outputs.empty() && editor_) editor_->clearErrorLine();
  }
  updatePrompt();
}

std::string CellWidget::editorSource() const {
  if (!editor_) return source_;
  return editor_->text().toStdString();
}

void CellWidget::updatePrompt() {
  if (type_ != CellType::code) {
    prompt_->clear();
    return;
  }
  if (runState_) {
    prompt_->setText(QStringLiteral("[*]:"));
  } else if (executionCount_) {
    prompt_->setText(QStringLiteral("[%1]:").arg(*executionCount_));
  } else {
    prompt_->setText(QStringLiteral("[ ]:"));
  }
}

QString CellWidget::promptText() const { return prompt_->text(); }

void CellWidget::setRunState(std::optional<ExecutionQueue::State> state) {
  runState_ = state;
  updatePrompt();
}

void CellWidget::setRunTimeText(const QString& text) {
  runTime_->setText(text);
  runTime_->setVisible(!text.isEmpty());
}

QString CellWidget::runTimeText() const { return runTime_->text(); }

void CellWidget::setHighlight(Highlight highlight) {
  if (highlight_ == highlight) return;
  highlight_ = highlight;
  update();
}

void CellWidget::enterEditor(bool focus) {
  if (markdown_) markdown_->hide();
  ensureEditor();
  editor_->show();
  if (focus) editor_->setFocus(Qt::OtherFocusReason);
}

void CellWidget::setEditorEventFilter(QObject* filter) {
  if (editor_ && editorFilter_) editor_->removeEventFilter(editorFilter_);
  editorFilter_ = filter;
  if (editor_ && editorFilter_) editor_->installEventFilter(editorFilter_);
}

void CellWidget::showExecutionCount(std::optional<std::int64_t> count) {
  executionCount_ = count;
  updatePrompt();
}

void CellWidget::leaveEditor() {
  if (!markdown_) return;
  if (editor_) {
    markdown_->setMarkdownSource(toQString(editorSource()));
    editor_->hide();
  }
  markdown_->show();
}

bool CellWidget::isRendered() const { return markdown_ && !markdown_->isHidden(); }

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
  emit pressed(cellId_, event->modifiers());
  QFrame::mousePressEvent(event);
}

}  // namespace rt::studio
