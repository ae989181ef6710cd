#include "cell_clipboard.h"

#include "notebook/ipynb.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QMimeData>

namespace rt::studio {

namespace {

std::vector<Cell>& process_copy() {
  static std::vector<Cell> cells;
  return cells;
}

}  // namespace

void CellClipboard::put(const std::vector<Cell>& cells) {
  process_copy() = cells;
  Notebook holder = Notebook::new_empty();
  holder.cells = cells;
  std::string text;
  for (const Cell& cell : cells) {
    if (!text.empty()) text += "\n\n";
    text += cell.source;
  }
  auto* mime = new QMimeData;
  try {
    mime->setData(QString::fromLatin1(kMimeType), QByteArray::fromStdString(to_ipynb(holder)));
  } catch (const std::exception&) {
    // Cells to_ipynb refuses still paste within this process (process_copy); only the text goes out.
  }
  mime->setText(QString::fromStdString(text));
  if (QClipboard* clipboard = QGuiApplication::clipboard()) clipboard->setMimeData(mime);
  else delete mime;
}

std::vector<Cell> CellClipboard::take() {
  if (QClipboard* clipboard = QGuiApplication::clipboard()) {
    const QMimeData* mime = clipboard->mimeData();
    if (mime && mime->hasFormat(QString::fromLatin1(kMimeType))) {
      const QByteArray bytes = mime->data(QString::fromLatin1(kMimeType));
      try {
        return parse_ipynb(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), "clipboard")
            .cells;
      } catch (const std::exception&) {
        // Not a notebook after all: fall back to what this process copied.
      }
    }
  }
  return process_copy();
}

}  // namespace rt::studio
