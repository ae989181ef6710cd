#include "output_text_view.h"

#include "code_editor.h"

#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QWheelEvent>

#include <algorithm>

namespace rt::studio {

TextTailEdit tailEdit(const QString& shown, const QString& wanted) {
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
  setFont(notebookMonospaceFont());
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  setFocusPolicy(Qt::ClickFocus);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  document()->setDocumentMargin(2);
  setTone(Tone::Normal);
  connect(horizontalScrollBar(), &QScrollBar::rangeChanged, this, &OutputTextView::updateHeight);
  updateHeight();
}

void OutputTextView::setTone(Tone tone) {
  QPalette p = palette();
  p.setColor(QPalette::Base, tone == Tone::Error ? QColor(0xfd, 0xec, 0xec) : QColor(Qt::white));
  p.setColor(QPalette::Text, QColor(0x20, 0x20, 0x20));
  setPalette(p);
}

void OutputTextView::showText(const QString& fullText) {
  // A trailing newline does not start a visible line (the next output begins there).
  QString text = fullText;
  if (text.endsWith(QLatin1Char('\n'))) text.chop(1);
  if (text == shown_) return;
  QScrollBar* bar = verticalScrollBar();
  const bool atEnd = bar->value() >= bar->maximum();
  const TextTailEdit edit = tailEdit(shown_, text);
  QTextCursor cursor(document());
  cursor.beginEditBlock();
  cursor.setPosition(static_cast<int>(edit.keep));
  cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
  cursor.insertText(edit.insert);
  cursor.endEditBlock();
  shown_ = text;
  updateHeight();
  if (atEnd) bar->setValue(bar->maximum());
}

int OutputTextView::heightForText() const {
  const int lines = std::clamp(document()->blockCount(), 1, maxVisibleLines);
  int height = lines * fontMetrics().lineSpacing() + 2 * static_cast<int>(document()->documentMargin()) +
               2 * frameWidth() + 2;
  if (horizontalScrollBar()->maximum() > 0) height += horizontalScrollBar()->sizeHint().height();
  return height;
}

void OutputTextView::updateHeight() {
  const int height = heightForText();
  if (height != this->height()) setFixedHeight(height);
}

QSize OutputTextView::sizeHint() const { return {QPlainTextEdit::sizeHint().width(), heightForText()}; }
QSize OutputTextView::minimumSizeHint() const { return {80, heightForText()}; }

void OutputTextView::wheelEvent(QWheelEvent* event) {
  if (verticalScrollBar()->maximum() == 0) {
    event->ignore();  // nothing to scroll here: the notebook scrolls
    return;
  }
  QPlainTextEdit::wheelEvent(event);
}

}  // namespace rt::studio
