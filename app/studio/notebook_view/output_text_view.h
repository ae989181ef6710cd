// app/studio/notebook_view/output_text_view.h — monospace output text (streams, text/plain) that follows a
// growing or rewriting text cheaply.
//
//   auto* view = new rt::studio::OutputTextView(parent);
//   view->show_text("epoch 1\n 10%|#  ");    // appends
//   view->show_text("epoch 1\n 20%|## ");    // '\r' rewrote the last line: only the changed tail is replaced
//   view->set_tone(OutputTextView::Tone::Error);  // stderr: pale red background
//
// Contracts:
// - show_text(t) makes the view show exactly t (less one trailing newline, which starts no visible line); it edits only what changed after the common prefix with what
//   it showed before (see tail_edit), so a 1 MB stream updated every 50 ms costs a prefix compare, not a relayout
//   of the whole text.
// - Height follows the text (one line minimum) up to kMaxVisibleLines; longer text scrolls inside, and a view
//   scrolled to its end stays at the end while text arrives (like a terminal).
// - Read-only, selectable; no line wrapping (a horizontal scroll bar appears for wide lines).
#pragma once
#include <QPlainTextEdit>

namespace rt::studio {

// How to turn `shown` into `wanted`: keep the first `keep` characters, then put `insert` after them.
struct TextTailEdit {
  qsizetype keep = 0;
  QString insert;
};
TextTailEdit tail_edit(const QString& shown, const QString& wanted);

class OutputTextView : public QPlainTextEdit {
  Q_OBJECT

 public:
  enum class Tone { Normal, Error };
  static constexpr int kMaxVisibleLines = 30;

  explicit OutputTextView(QWidget* parent = nullptr);

  void show_text(const QString& text);
  // What the view shows: the last show_text() argument without its trailing newline.
  const QString& shown_text() const { return shown_; }
  void set_tone(Tone tone);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void wheelEvent(QWheelEvent* event) override;

 private:
  int height_for_text() const;
  void update_height();

  QString shown_;
};

}  // namespace rt::studio
