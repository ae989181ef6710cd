// app/studio/notebook_view/code_editor.h — a cell's text editor: QScintilla, sized to its text.
//
//   auto* editor = new rt::studio::CodeEditor(rt::studio::CodeEditor::Language::Python, parent);
//   editor->setText("for i in range(3):\n    print(i)\n");
//   connect(editor, &QsciScintilla::textChanged, ...);   // the view copies the text into the model
//   int offset = editor->cursor_offset();                // UTF-8 byte offset, for "split at cursor"
//
// Contracts:
// - Python cells get the Python lexer (a light theme), line numbers, Python auto-indent (a line after one
//   ending in ':' is indented one level), brace matching, 4-space indentation (Tab inserts spaces,
//   Backspace unindents), and a monospace font. Markdown cells get the markdown lexer; raw cells none.
// - The widget's height follows the number of lines (one line minimum) up to kMaxVisibleLines, then the
//   editor scrolls inside. The line-number margin is wide enough for 9999 lines from the start, so the text
//   never shifts sideways while typing (no horizontal jitter); a horizontal scroll bar appears only for
//   lines wider than the editor.
// - Python indentation is computed here (python_indent_after) rather than from the lexer's styling, so it is
//   right even before the text has been painted and styled.
// - Keyboard focus comes only from a click or from NotebookView (Qt::ClickFocus), never from Tab or window
//   activation, so a notebook opens in command mode.
// - The editor never handles notebook shortcuts itself: NotebookView filters its key events first.
// - Mouse-wheel events the editor cannot use (nothing to scroll) go to the notebook's scroll area.
#pragma once
#include <Qsci/qsciscintilla.h>

namespace rt::studio {

class CodeEditor : public QsciScintilla {
  Q_OBJECT

 public:
  enum class Language { Python, Markdown, Plain };
  static constexpr int kMaxVisibleLines = 60;

  explicit CodeEditor(Language language, QWidget* parent = nullptr);

  Language language() const { return language_; }
  // The caret position as a byte offset into text().toUtf8() (the model's std::string).
  int cursor_offset() const;
  // Places the caret at a byte offset into the UTF-8 text (clamped to the text).
  void set_cursor_offset(int offset);
  // Tints 1-based `line` (the line a traceback names) until clear_error_line() or the next edit of that line.
  void mark_error_line(int line);
  void clear_error_line();
  int error_line() const { return error_line_; }  // 0 when none
  // Height in pixels that shows `line_count` lines without scrolling (capped at kMaxVisibleLines).
  int height_for_lines(int line_count) const;

  // The caret's rectangle in this widget's coordinates (for keeping it visible in the notebook's scroll area).
  QRect caret_rect() const;
  bool caret_on_first_line() const;
  bool caret_on_last_line() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void focusReceived();
  void caretMoved();

 protected:
  void focusInEvent(QFocusEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void apply_theme();
  void indent_new_line(int character);
  void update_height();

  Language language_;
  int last_line_count_ = -1;
  int error_line_ = 0;
  int error_marker_ = -1;
};

// Python's indentation for the line after `previous_line` (columns): one level deeper after a line ending in ':'
// (comments ignored), one level shallower after return/pass/break/continue/raise, else the same.
int python_indent_after(const QString& previous_line, int indent_width = 4);

// The notebook's monospace font (the system fixed font at the application's point size).
QFont notebook_monospace_font();

}  // namespace rt::studio
