// app/studio/notebook_view/markdown_view.h — a markdown cell when it is not being edited: rendered text.
//
//   auto* view = new rt::studio::MarkdownView(parent);
//   view->set_markdown_source("# Title\n\nSome *text* and `code`.\n");
//   connect(view, &MarkdownView::editRequested, cell, &CellWidget::enter_editor);  // double-click
//
// Contracts:
// - Renders CommonMark with GitHub extensions as QTextDocument does (headings, emphasis, lists, code blocks,
//   tables, links); an empty source shows a grey "Empty markdown cell (double-click to edit)" hint.
// - Links open in the system browser; the text is selectable but never editable here.
// - Height follows the rendered document at the current width (no inner scroll bar).
#pragma once
#include <QTextBrowser>

namespace rt::studio {

class MarkdownView : public QTextBrowser {
  Q_OBJECT

 public:
  explicit MarkdownView(QWidget* parent = nullptr);

  void set_markdown_source(const QString& markdown);
  // The rendered plain text (what a reader sees), for tests and accessibility.
  QString rendered_text() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void editRequested();
  void clicked();

 protected:
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void update_height();
  int document_height() const;
};

}  // namespace rt::studio
