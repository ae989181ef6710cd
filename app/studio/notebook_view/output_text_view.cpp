#include "output_text_view.h"

#include "code_editor.h"

#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QWheelEvent>

#include <algorithm>

namespace rt::studio {

TextTailEdit tail_edit(const QString& shown, const QString& wanted) {
  const qsizetype limit = std::min(shown.size(), wanted.size());
  const QChar* a = shown.constData();
  const QChar* b = wanted.constData();
  qsizetype keep = std::mismatch(a, a + limit, b).first - a;
  // Never split a surrogate pair: the kept part must end on a whole character.
  if (keep > 0 && keep < wanted.size() && wanted.at(keep - 1).isHighSurrogate()) --keep;
  return {keep, wanted.mid(keep)};
}

OutputTextView::OutputTextView(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setUndoRedoEnabled(false);
  setLineWrapMode(NoWrap);
  setFrameShape(QFrame::NoFrame);
  setFont(notebook_monospace_font());
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  setFocusPolicy(Qt::ClickFocus);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  document()->setDocumentMargin(2);
  set_tone(Tone::Normal);
  connect(horizontalScrollBar(), &QScrollBar::rangeChanged, this, &OutputTextView::update_height);
  update_height();
}

void OutputTextView::set_tone(Tone tone) {
  QPalette p = palette();
  p.setColor(QPalette::Base, tone == Tone::Error ? QColor(0xfd, 0xec, 0xec) : QColor(Qt::white));
  p.setColor(QPalette::Text, QColor(0x20, 0x20, 0x20));
  setPalette(p);
}

void OutputTextView::show_text(const QString& full_text) {
  // A trailing newline does not start a visible line (the next output begins there).
  QString text = full_text;
  if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
  if (text == shown_) return;
  QScrollBar* bar = verticalScrollBar();
  const bool at_end = bar->value() >= bar->maximum();
  const TextTailEdit edit = tail_edit(shown_, text);
  QTextCursor cursor(document());
  cursor.beginEditBlock();
  cursor.setPosition(static_cast<int>(edit.keep));
  cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
  cursor.insertText(edit.insert);
  cursor.endEditBlock();
  shown_ = text;
  update_height();
  if (at_end) bar->setValue(bar->maximum());
}

int OutputTextView::height_for_text() const {
  const int lines = std::clamp(document()->blockCount(), 1, kMaxVisibleLines);
  int height = lines * fontMetrics().lineSpacing() + 2 * static_cast<int>(document()->documentMargin()) +
               2 * frameWidth() + 2;
  if (horizontalScrollBar()->maximum() > 0) height += horizontalScrollBar()->sizeHint().height();
  return height;
}

void OutputTextView::update_height() {
  const int height = height_for_text();
  if (height != this->height()) setFixedHeight(height);
}

QSize OutputTextView::sizeHint() const { return {QPlainTextEdit::sizeHint().width(), height_for_text()}; }
QSize OutputTextView::minimumSizeHint() const { return {80, height_for_text()}; }

void OutputTextView::wheelEvent(QWheelEvent* event) {
  if (verticalScrollBar()->maximum() == 0) {
    event->ignore();  // nothing to scroll here: the notebook scrolls
    return;
  }
  QPlainTextEdit::wheelEvent(event);
}

}  // namespace rt::studio
