// app/studio/notebook_view/cell_clipboard.h — copied cells (C / X / V), also between studio windows and
// processes through the system clipboard.
//
//   rt::studio::CellClipboard::put(doc.copy_cells(doc_indices));  // C
//   std::vector<Cell> cells = rt::studio::CellClipboard::take();   // V (empty when nothing was copied)
//   doc.paste_cells(index + 1, cells);                             // fresh ids on paste
//
// Contracts:
// - put() writes the cells as an nbformat notebook under the MIME type `kMimeType` plus their sources as
//   text/plain (so pasting into a text editor gives the code), and keeps a copy in this process.
// - take() reads the system clipboard's `kMimeType` data when present (copied by any studio), else this
//   process's copy; clipboard data that is not a valid notebook is ignored, never half-pasted.
#pragma once
#include "notebook/notebook.h"

#include <vector>

namespace rt::studio {

class CellClipboard {
 public:
  static constexpr const char* kMimeType = "application/x-rustytorch-notebook-cells";
  static void put(const std::vector<Cell>& cells);
  static std::vector<Cell> take();
};

}  // namespace rt::studio
