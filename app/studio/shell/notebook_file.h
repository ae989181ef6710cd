// app/studio/shell/notebook_file.h — opening and saving notebooks from the UI: the same calls as
// NotebookDocument::open/save_as, with every failure turned into a message box that names the file, the problem
// and what to do, and nothing lost.
//
//   std::optional<NotebookDocument> doc = open_notebook_file(this, path);   // nullopt: the user was told why
//   if (save_notebook_file(this, document, path)) ...                      // false: still open, still dirty
//
// Contracts: neither function throws for file or format problems (NotebookFileError, NotebookFormatError, and
// any std::exception from the model are reported); a failed open leaves whatever is open untouched; a failed
// save leaves the document, its path and its dirty state unchanged (NotebookDocument::save_as is atomic).
#pragma once
#include <QString>

#include <optional>

#include "notebook/notebook_document.h"

class QWidget;

namespace rt::studio {

std::optional<NotebookDocument> open_notebook_file(QWidget* parent, const QString& path);
bool save_notebook_file(QWidget* parent, NotebookDocument& document, const QString& path);

}  // namespace rt::studio
