#include "markdown_view.h"

#include <QAbstractTextDocumentLayout>
#include <QMouseEvent>
#include <QScrollBar>
#include <QTextDocument>
#include <QWheelEvent>

#include <cmath>

namespace rt::studio {

MarkdownView::MarkdownView(QWidget* parent) : QTextBrowser(parent) {
  setFrameShape(QFrame::NoFrame);
  setOpenExternalLinks(true);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setTextInteractionFlags(Qt::TextBrowserInteraction);
  setFocusPolicy(Qt::NoFocus);  // focus stays with the notebook (command mode keys)
  document()->setDocumentMargin(6);
  QPalette p = palette();
  p.setColor(QPalette::Base, Qt::transparent);
  setPalette(p);
  viewport()->setAutoFillBackground(false);
  connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this,
          &MarkdownView::update_height);
}

void MarkdownView::set_markdown_source(const QString& markdown) {
  if (markdown.trimmed().isEmpty()) {
    setHtml(QStringLiteral("<p style=\"color:#9a9a9a\">%1</p>")
                .arg(tr("Empty markdown cell (double-click or press Enter to edit)")));
  } else {
    setMarkdown(markdown);
  }
  update_height();
}

QString MarkdownView::rendered_text() const { return document()->toPlainText(); }

int MarkdownView::document_height() const {
  QTextDocument* doc = document();
  const int width = std::max(viewport()->width(), 100);
  if (!qFuzzyCompare(doc->textWidth(), static_cast<qreal>(width))) doc->setTextWidth(width);
  return static_cast<int>(std::ceil(doc->size().height())) + 2 * frameWidth();
}

void MarkdownView::update_height() {
  const int height = document_height();
  if (height != this->height()) setFixedHeight(height);
}

QSize MarkdownView::sizeHint() const { return {QTextBrowser::sizeHint().width(), document_height()}; }
QSize MarkdownView::minimumSizeHint() const { return {80, document_height()}; }

void MarkdownView::resizeEvent(QResizeEvent* event) {
  QTextBrowser::resizeEvent(event);
  update_height();
}

void MarkdownView::mouseDoubleClickEvent(QMouseEvent* event) {
  event->accept();
  emit editRequested();
}

void MarkdownView::mousePressEvent(QMouseEvent* event) {
  emit clicked();
  QTextBrowser::mousePressEvent(event);
}

void MarkdownView::wheelEvent(QWheelEvent* event) { event->ignore(); }

}  // namespace rt::studio
