#include "code_editor.h"

#include <Qsci/qscilexermarkdown.h>
#include <Qsci/qscilexerpython.h>

#include <QFontDatabase>
#include <QGuiApplication>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>

namespace rt::studio {

QFont notebook_monospace_font() {
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
  setAutoIndent(language != Language::Python);  // Python: indent_new_line
  if (language == Language::Python) {
    connect(this, &QsciScintillaBase::SCN_CHARADDED, this, &CodeEditor::indent_new_line);
  }
  setBraceMatching(language == Language::Plain ? NoBraceMatch : SloppyBraceMatch);
  setCaretLineVisible(false);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  SendScintilla(SCI_SETSCROLLWIDTH, 1);
  SendScintilla(SCI_SETSCROLLWIDTHTRACKING, 1);
  SendScintilla(SCI_SETENDATLASTLINE, 1);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setFocusPolicy(Qt::ClickFocus);  // no focus by Tab or on window activation: the notebook starts in command mode
  apply_theme();

  error_marker_ = markerDefine(QsciScintilla::Background);
  setMarkerBackgroundColor(QColor(0xfb, 0xd5, 0xd5), error_marker_);
  connect(this, &QsciScintilla::linesChanged, this, &CodeEditor::update_height);
  connect(this, &QsciScintilla::cursorPositionChanged, this, [this] { emit caretMoved(); });
  connect(horizontalScrollBar(), &QScrollBar::rangeChanged, this, [this] {
    last_line_count_ = -1;  // the scroll bar's appearance changes the height we need
    update_height();
  });
  update_height();
}

void CodeEditor::apply_theme() {
  const QFont font = notebook_monospace_font();
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

int python_indent_after(const QString& previous_line, int indent_width) {
  int indent = 0;
  for (QChar c : previous_line) {
    if (c == QLatin1Char(' ')) ++indent;
    else if (c == QLatin1Char('\t')) indent = (indent / indent_width + 1) * indent_width;
    else break;
  }
  // The code part of the line: up to a '#' that is not inside a string literal.
  QString code;
  QChar quote;
  for (qsizetype i = 0; i < previous_line.size(); ++i) {
    const QChar c = previous_line[i];
    if (!quote.isNull()) {
      if (c == QLatin1Char('\\')) ++i;
      else if (c == quote) quote = QChar();
    } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
      quote = c;
    } else if (c == QLatin1Char('#')) {
      break;
    }
    code += c;
  }
  code = code.trimmed();
  if (code.endsWith(QLatin1Char(':'))) return indent + indent_width;
  static const QStringList dedenters = {QStringLiteral("return"), QStringLiteral("pass"), QStringLiteral("break"),
                                        QStringLiteral("continue"), QStringLiteral("raise")};
  const QString first = code.section(QLatin1Char(' '), 0, 0).section(QLatin1Char('('), 0, 0);
  if (dedenters.contains(first)) return std::max(0, indent - indent_width);
  return indent;
}

void CodeEditor::indent_new_line(int character) {
  if (character != '\n' && character != '\r') return;
  int line = 0, index = 0;
  getCursorPosition(&line, &index);
  if (line == 0) return;
  const int indent = python_indent_after(text(line - 1), indentationWidth());
  setIndentation(line, indent);
  setCursorPosition(line, indent);
}

int CodeEditor::height_for_lines(int line_count) const {
  const int text_height = static_cast<int>(const_cast<CodeEditor*>(this)->SendScintilla(SCI_TEXTHEIGHT, 0L));
  const int visible = std::clamp(line_count, 1, kMaxVisibleLines);
  int height = visible * std::max(text_height, 1) + 2 * frameWidth() + 6;
  if (horizontalScrollBar()->maximum() > 0) height += horizontalScrollBar()->sizeHint().height();
  return height;
}

void CodeEditor::update_height() {
  const int count = lines();
  if (count == last_line_count_) return;
  last_line_count_ = count;
  setVerticalScrollBarPolicy(count > kMaxVisibleLines ? Qt::ScrollBarAsNeeded : Qt::ScrollBarAlwaysOff);
  setFixedHeight(height_for_lines(count));
  updateGeometry();
}

QSize CodeEditor::sizeHint() const { return {QsciScintilla::sizeHint().width(), height_for_lines(lines())}; }

QSize CodeEditor::minimumSizeHint() const { return {80, height_for_lines(1)}; }

void CodeEditor::mark_error_line(int line) {
  clear_error_line();
  if (line < 1 || line > lines() || error_marker_ < 0) return;
  markerAdd(line - 1, error_marker_);
  error_line_ = line;
}

void CodeEditor::clear_error_line() {
  if (error_marker_ >= 0) markerDeleteAll(error_marker_);
  error_line_ = 0;
}

QRect CodeEditor::caret_rect() const {
  auto* self = const_cast<CodeEditor*>(this);
  const long pos = static_cast<long>(self->SendScintilla(SCI_GETCURRENTPOS));
  const int x = static_cast<int>(self->SendScintilla(SCI_POINTXFROMPOSITION, 0UL, pos));
  const int y = static_cast<int>(self->SendScintilla(SCI_POINTYFROMPOSITION, 0UL, pos));
  const int h = static_cast<int>(self->SendScintilla(SCI_TEXTHEIGHT, 0L));
  return QRect(viewport()->mapTo(self, QPoint(x, y)), QSize(2, std::max(h, 1)));
}

bool CodeEditor::caret_on_first_line() const {
  int line = 0, index = 0;
  getCursorPosition(&line, &index);
  return line == 0;
}

bool CodeEditor::caret_on_last_line() const {
  int line = 0, index = 0;
  getCursorPosition(&line, &index);
  return line >= lines() - 1;
}

int CodeEditor::cursor_offset() const {
  return static_cast<int>(const_cast<CodeEditor*>(this)->SendScintilla(SCI_GETCURRENTPOS));
}

void CodeEditor::set_cursor_offset(int offset) {
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
  if (vertical && lines() <= kMaxVisibleLines) {
    event->ignore();  // let the notebook scroll
    return;
  }
  QsciScintilla::wheelEvent(event);
}

}  // namespace rt::studio
