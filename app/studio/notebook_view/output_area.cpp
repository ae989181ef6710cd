#include "output_area.h"

#include "ansi_text.h"
#include "code_editor.h"
#include "markdown_view.h"
#include "notebook/outputs.h"
#include "output_text_view.h"

#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPixmap>
#include <QTextDocumentFragment>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>

namespace rt::studio {

namespace {

constexpr int kMaxSimpleHtmlBytes = 256 * 1024;

QString to_qstring(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// An image shown at its natural size, or scaled down (keeping its aspect) to the available width.
class ScaledImageLabel final : public QLabel {
 public:
  ScaledImageLabel(QImage image, QWidget* parent) : QLabel(parent), image_(std::move(image)) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    setMinimumSize(1, 1);
  }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override {
    if (image_.width() <= 0) return 0;
    const int w = std::min(width, image_.width());
    return image_.height() * w / image_.width();
  }
  QSize sizeHint() const override { return image_.size(); }
  const QImage& image() const { return image_; }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    const int w = std::min(width(), image_.width());
    if (w > 0 && (pixmap().isNull() || pixmap().width() != w)) {
      setPixmap(QPixmap::fromImage(image_.scaledToWidth(w, Qt::SmoothTransformation)));
    }
  }

 private:
  QImage image_;
};

bool is_simple_html(const std::string& html) {
  if (html.size() > kMaxSimpleHtmlBytes) return false;
  static const QRegularExpression unsupported(
      QStringLiteral("<\\s*(script|style|iframe|svg|canvas|video|audio|object|embed|link|form|input)\\b"),
      QRegularExpression::CaseInsensitiveOption);
  return !unsupported.match(to_qstring(html)).hasMatch();
}

QLabel* make_rich_label(const QString& html, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setTextFormat(Qt::RichText);
  label->setText(html);
  label->setTextInteractionFlags(Qt::TextBrowserInteraction);
  label->setOpenExternalLinks(true);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  label->setWordWrap(true);
  return label;
}

// The traceback, or "ename: evalue" when the error has none.
std::string error_text(const nlohmann::json& output) {
  std::string text = error_traceback_text(output);
  if (text.empty()) {
    const auto ename = output.value("ename", std::string{});
    const auto evalue = output.value("evalue", std::string{});
    text = ename + (evalue.empty() ? "" : ": " + evalue);
  }
  return text;
}

QLabel* make_error_label(const nlohmann::json& output, QWidget* parent) {
  const std::string text = error_text(output);
  auto* label = new QLabel(parent);
  label->setTextFormat(Qt::RichText);
  label->setText(QStringLiteral("<pre style=\"margin:0\">%1</pre>").arg(to_qstring(ansi_to_html(text))));
  label->setFont(notebook_monospace_font());
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  label->setAutoFillBackground(true);
  label->setContentsMargins(4, 3, 4, 3);
  QPalette p = label->palette();
  p.setColor(QPalette::Window, QColor(0xfd, 0xec, 0xec));
  label->setPalette(p);
  return label;
}

QLabel* make_note(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setStyleSheet(QStringLiteral("color:#8a8a8a; font-style:italic;"));
  return label;
}

}  // namespace

struct OutputArea::Row {
  QWidget* container = nullptr;
  OutputKind kind = OutputKind::unknown;
  std::string stream_name;          // streams
  OutputTextView* text = nullptr;   // streams and text/plain results
  nlohmann::json source;            // non-stream outputs: what was drawn (to skip redrawing it)
  QString visible;                  // visible_text() of this row, for non-text rows
};

OutputArea::OutputArea(int prompt_width, QWidget* parent) : QWidget(parent), prompt_width_(prompt_width) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 2, 0, 2);
  layout->setSpacing(0);
  rows_layout_ = new QVBoxLayout;
  rows_layout_->setContentsMargins(0, 0, 0, 0);
  rows_layout_->setSpacing(2);
  layout->addLayout(rows_layout_);
  hidden_note_ = make_note({}, this);
  hidden_note_->setContentsMargins(prompt_width_, 2, 0, 2);
  hidden_note_->setCursor(Qt::PointingHandCursor);
  hidden_note_->hide();
  layout->addWidget(hidden_note_);
  overflow_note_ = make_note({}, this);
  overflow_note_->setContentsMargins(prompt_width_, 2, 0, 2);
  overflow_note_->hide();
  layout->addWidget(overflow_note_);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

OutputArea::~OutputArea() = default;

void OutputArea::set_outputs(const std::vector<nlohmann::json>& outputs) {
  output_count_ = static_cast<int>(outputs.size());
  const std::size_t shown = std::min<std::size_t>(outputs.size(), kMaxShownOutputs);
  for (std::size_t i = 0; i < shown; ++i) {
    const nlohmann::json& out = outputs[i];
    const OutputKind kind = output_kind(out);
    if (i < rows_.size()) {
      Row& row = rows_[i];
      if (kind == OutputKind::stream && row.kind == kind && row.stream_name == stream_name(out)) {
        row.text->show_text(to_qstring(strip_ansi_escapes(stream_text(out))));
        continue;
      }
      if (kind != OutputKind::stream && row.kind == kind && row.source == out) continue;
    }
    replace_row(i, out);
  }
  while (rows_.size() > shown) {
    delete rows_.back().container;
    rows_.pop_back();
  }
  if (outputs.size() > shown) {
    overflow_note_->setText(tr("%n more output(s) not shown (they are kept in the notebook)", nullptr,
                               static_cast<int>(outputs.size() - shown)));
  }
  update_visibility();
}

void OutputArea::replace_row(std::size_t index, const nlohmann::json& out) {
  Row row;
  row.kind = output_kind(out);
  row.container = new QWidget(this);
  auto* h = new QHBoxLayout(row.container);
  h->setContentsMargins(0, 0, 0, 0);
  h->setSpacing(0);
  auto* prompt = new QLabel(row.container);
  prompt->setFixedWidth(prompt_width_);
  prompt->setAlignment(Qt::AlignRight | Qt::AlignTop);
  prompt->setFont(notebook_monospace_font());
  prompt->setContentsMargins(0, 2, 8, 0);
  prompt->setStyleSheet(QStringLiteral("color:#d84315;"));
  h->addWidget(prompt);

  QWidget* content = nullptr;
  switch (row.kind) {
    case OutputKind::stream: {
      row.stream_name = stream_name(out);
      row.text = new OutputTextView(row.container);
      if (row.stream_name == "stderr") row.text->set_tone(OutputTextView::Tone::Error);
      row.text->show_text(to_qstring(strip_ansi_escapes(stream_text(out))));
      content = row.text;
      break;
    }
    case OutputKind::error: {
      QLabel* label = make_error_label(out, row.container);
      row.visible = to_qstring(strip_ansi_escapes(error_text(out)));
      content = label;
      break;
    }
    case OutputKind::execute_result:
    case OutputKind::display_data: {
      if (row.kind == OutputKind::execute_result && out.contains("execution_count") &&
          out["execution_count"].is_number_integer()) {
        prompt->setText(QStringLiteral("[%1]:").arg(out["execution_count"].get<long long>()));
      }
      std::optional<std::string> image = mime_text(out, "image/png");
      if (!image) image = mime_text(out, "image/jpeg");
      QImage decoded;
      if (image) {
        std::string b64 = *image;
        b64.erase(std::remove_if(b64.begin(), b64.end(), [](char c) { return c == '\n' || c == '\r'; }), b64.end());
        decoded.loadFromData(QByteArray::fromBase64(QByteArray::fromStdString(b64)));
      }
      if (!decoded.isNull()) {
        row.visible = QStringLiteral("[image %1x%2]").arg(decoded.width()).arg(decoded.height());
        content = new ScaledImageLabel(std::move(decoded), row.container);
      } else if (auto html = mime_text(out, "text/html"); html && is_simple_html(*html)) {
        QLabel* label = make_rich_label(to_qstring(*html), row.container);
        row.visible = QTextDocumentFragment::fromHtml(label->text()).toPlainText();
        content = label;
      } else if (auto md = mime_text(out, "text/markdown")) {
        auto* view = new MarkdownView(row.container);
        view->set_markdown_source(to_qstring(*md));
        row.visible = view->rendered_text();
        content = view;
      } else if (auto plain = mime_text(out, "text/plain")) {
        row.text = new OutputTextView(row.container);
        row.text->show_text(to_qstring(strip_ansi_escapes(*plain)));
        content = row.text;
      } else {
        QLabel* note = make_note(tr("(%1 output with no displayable type)")
                                     .arg(QString::fromStdString(out.value("output_type", std::string{}))),
                                 row.container);
        row.visible = note->text();
        content = note;
      }
      row.source = out;
      break;
    }
    case OutputKind::unknown: {
      QLabel* note = make_note(tr("(unknown output: %1)").arg(to_qstring(out.dump()).left(200)), row.container);
      row.visible = note->text();
      content = note;
      break;
    }
  }
  if (row.kind != OutputKind::stream) row.source = out;
  h->addWidget(content, 1);

  if (index < rows_.size()) {
    const int position = rows_layout_->indexOf(rows_[index].container);
    delete rows_[index].container;
    rows_layout_->insertWidget(position, row.container);
    rows_[index] = std::move(row);
  } else {
    rows_layout_->addWidget(row.container);
    rows_.push_back(std::move(row));
  }
}

void OutputArea::set_collapsed(bool collapsed) {
  if (collapsed_ == collapsed) return;
  collapsed_ = collapsed;
  update_visibility();
}

void OutputArea::update_visibility() {
  for (Row& row : rows_) row.container->setVisible(!collapsed_);
  hidden_note_->setVisible(collapsed_ && output_count_ > 0);
  if (collapsed_) hidden_note_->setText(tr("%n output(s) hidden; click to show", nullptr, output_count_));
  overflow_note_->setVisible(!collapsed_ && output_count_ > static_cast<int>(rows_.size()));
  setVisible(output_count_ > 0);
}

QString OutputArea::visible_text() const {
  if (collapsed_) return hidden_note_->text();
  QStringList parts;
  for (const Row& row : rows_) parts << (row.text ? row.text->shown_text() : row.visible);
  return parts.join(QLatin1Char('\n'));
}

void OutputArea::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && (event->position().x() < prompt_width_ || collapsed_)) {
    emit collapseToggleRequested();
    event->accept();
    return;
  }
  QWidget::mousePressEvent(event);
}

}  // namespace rt::studio
