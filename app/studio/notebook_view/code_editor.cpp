#include "code_editor.h"

#include <Qsci/qscilexermarkdown.h>
#include <Qsci/qscilexerpython.h>

#include <QFontDatabase>
#include <QGuiApplication>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>

namespace rt::studio {

QFont notebookMonospaceFont() {
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  font.setStyleHint(QFont::Monospace);
  const qreal size = QGuiApplication::font().pointSizeF();
  if (size > 0) font.setPointSizeF(size);
  return font;
}

CodeEditor::CodeEditor(Language language, QWidget* parent) : QsciScintilla(parent), language_(language) {
  setUtf8(true);
  setEolMode(EolUnix);
  setFrameShape(QFrame::NoFrame);
  setWrapMode(WrapNone);
  setIndentationsUseTabs(false);
  setTabWidth(4);
  setIndentationWidth(4);
  setTabIndents(true);
  setBackspaceUnindents(true);
  setAutoIndent(true);
  setBraceMatching(language == Language::Plain ? NoBraceMatch : SloppyBraceMatch);
  setCaretLineVisible(false);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  SendScintilla(SCI_SETSCROLLWIDTH, 1);
  SendScintilla(SCI_SETSCROLLWIDTHTRACKING, 1);
  SendScintilla(SCI_SETENDATLASTLINE, 1);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  applyTheme();

  errorMarker_ = markerDefine(QsciScintilla::Background);
  setMarkerBackgroundColor(QColor(0xfb, 0xd5, 0xd5), errorMarker_);
  connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::updateHeight);
  connect(horizontalScrollBar(), &QScrollBar::rangeChanged, this, [this] {
    lastLineCount_ = -1;  // the scroll bar's appearance changes the height we need
    updateHeight();
  });
  updateHeight();
}

void CodeEditor::applyTheme() {
  const QFont font = notebookMonospaceFont();
  setFont(font);
  if (language_ == Language::Python) {
    auto* lexer = new QsciLexerPython(this);
    lexer->setDefaultFont(font);
    lexer->setFont(font);  // every style: no proportional comment font
    lexer->setDefaultPaper(QColor(0xf7, 0xf7, 0xf7));
    lexer->setPaper(QColor(0xf7, 0xf7, 0xf7));
    lexer->setFoldComments(false);
    lexer->setIndentationWarning(QsciLexerPython::NoWarning);
    setLexer(lexer);
  } else if (language_ == Language::Markdown) {
    auto* lexer = new QsciLexerMarkdown(this);
    lexer->setDefaultFont(font);
    lexer->setFont(font);
    lexer->setDefaultPaper(QColor(0xf7, 0xf7, 0xf7));
    lexer->setPaper(QColor(0xf7, 0xf7, 0xf7));
    setLexer(lexer);
  } else {
    setPaper(QColor(0xf7, 0xf7, 0xf7));
  }
  setMarginType(0, NumberMargin);
  setMarginLineNumbers(0, true);
  setMarginsFont(font);
  setMarginsBackgroundColor(QColor(0xf7, 0xf7, 0xf7));
  setMarginsForegroundColor(QColor(0x99, 0x99, 0x99));
  setMarginWidth(0, QStringLiteral("99999"));
  setMarginWidth(1, 0);  // no symbol margin
  setMatchedBraceBackgroundColor(QColor(0xd8, 0xe8, 0xff));
  setMatchedBraceForegroundColor(QColor(0x00, 0x40, 0xa0));
  setUnmatchedBraceForegroundColor(QColor(0xc0, 0x00, 0x00));
  setSelectionBackgroundColor(QColor(0xc8, 0xdc, 0xf8));
  setCaretForegroundColor(QColor(0x20, 0x20, 0x20));
}

int CodeEditor::heightForLines(int lineCount) const {
  const int textHeight = static_cast<int>(const_cast<CodeEditor*>(this)->SendScintilla(SCI_TEXTHEIGHT, 0L));
  const int visible = std::clamp(lineCount, 1, maxVisibleLines);
  int height = visible * std::max(textHeight, 1) + 2 * frameWidth() + 6;
  if (horizontalScrollBar()->maximum() > 0) height += horizontalScrollBar()->sizeHint().height();
  return height;
}

void CodeEditor::updateHeight() {
  const int count = lines();
  if (count == lastLineCount_) return;
  lastLineCount_ = count;
  setVerticalScrollBarPolicy(count > maxVisibleLines ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff);
  setFixedHeight(heightForLines(count));
  updateGeometry();
}

QSize CodeEditor::sizeHint() const { return {QsciScintilla::sizeHint().width(), heightForLines(lines())}; }

QSize CodeEditor::minimumSizeHint() const { return {80, heightForLines(1)}; }

void CodeEditor::markErrorLine(int line) {
  clearErrorLine();
  if (line < 1 || line > lines() || errorMarker_ < 0) return;
  markerAdd(line - 1, errorMarker_);
  errorLine_ = line;
}

void CodeEditor::clearErrorLine() {
  if (errorMarker_ >= 0) markerDeleteAll(errorMarker_);
  errorLine_ = 0;
}

int CodeEditor::cursorOffset() const {
  return static_cast<int>(const_cast<CodeEditor*>(this)->SendScintilla(SCI_GETCURRENTPOS));
}

void CodeEditor::setCursorOffset(int offset) {
  const long length = static_cast<long>(SendScintilla(SCI_GETLENGTH));
  const long pos = std::clamp<long>(offset, 0, length);
  SendScintilla(SCI_GOTOPOS, pos);
}

void CodeEditor::focusInEvent(QFocusEvent* event) {
  QsciScintilla::focusInEvent(event);
  emit focusReceived();
}

void CodeEditor::wheelEvent(QWheelEvent* event) {
  const bool vertical = std::abs(event->angleDelta().y()) >= std::abs(event->angleDelta().x());
  if (vertical && lines() <= maxVisibleLines) {
    event->ignore();  // let the notebook scroll
    return;
  }
  QsciScintilla::wheelEvent(event);
}

}  // namespace rt::studio
