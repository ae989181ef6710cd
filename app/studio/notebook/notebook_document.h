// app/studio/notebook/notebook_document.h — an open notebook: the Notebook, its file, undoable structural edits,
// change notifications and the "unsaved changes" state. The view and the shell edit notebooks only through it.
//
//   rt::studio::NotebookDocument doc = rt::studio::NotebookDocument::open("train.ipynb");  // ipynb.h errors
//   int token = doc.add_listener([&](const rt::studio::DocumentChange& c) { view.sync(c); });
//   std::size_t i = doc.insert_cell(1, rt::studio::CellType::code, "print('hi')");      // B
//   doc.split_cell(i, /*byte_offset=*/5);                                                   // Ctrl+Shift+-
//   doc.merge_cells(i, 2);                                                                  // Shift+M
//   doc.delete_cells({i});                                                                  // D, D
//   doc.undo();                                                                             // Z: the cell is back
//   doc.set_source(i, "print('bye')");        // typing: dirty, but not in the structural history
//   if (doc.is_dirty()) doc.save();           // atomic write_ipynb to doc.path(), then is_dirty() == false
//
// Contracts:
// - Structural edits (insert, delete, move, split, merge, change type, paste, clear outputs of several cells)
//   go on the undo stack; undo()/redo() replay them and return the index of the cell to select. A new edit
//   clears the redo stack. Text typed inside a cell (set_source) and outputs written by a run are not undone
//   here (the cell editor has its own text undo), but they count as changes for is_dirty().
// - Undo restores the cells an edit removed as they were when removed; cells it re-removes are remembered as
//   they are at that moment, so redo brings back their latest text. (Undoing a merge after typing in the
//   merged cell restores the two original cells; redo brings the typed text back.)
// - Every mutation bumps revision() and calls the listeners, synchronously, after the change is complete.
//   A listener must not edit the document from inside the callback.
// - Index arguments are checked: out-of-range indices throw std::out_of_range naming the index and the count;
//   nothing changes when an edit throws.
// - Cells keep their ids through moves, type changes, undo and redo; inserted, split-off and pasted cells get
//   fresh ids (paste never duplicates an id). Merging keeps the first cell's id and metadata.
// - Not thread-safe: use a document from one thread (the GUI thread in the studio, the runner's thread
//   headless). The kernel's results reach it through that thread.
#pragma once
#include "notebook/file_stamp.h"
#include "notebook/notebook.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rt::studio {

// What changed, so a view can update only that part.
struct DocumentChange {
  enum class Kind {
    cells_replaced,   // cells [index, index + removed) were replaced by `inserted` new cells (insert, delete,
                      // split, merge, paste, undo/redo of those)
    cell_moved,       // the cell at `index` moved to `to_index` (others shift)
    cell_type,        // cell `index` changed type (its outputs/execution count may have been dropped)
    source,           // cell `index`'s source changed through set_source
    outputs,          // cell `index`'s outputs or execution count changed
    cell_metadata,    // cell `index`'s metadata changed
    notebook_metadata,
    reloaded,         // everything changed (replace_notebook, revert)
    saved,            // written to disk: path() and is_dirty() may have changed
  };
  Kind kind;
  std::size_t index = 0;
  std::size_t removed = 0;
  std::size_t inserted = 0;
  std::size_t to_index = 0;
};

class NotebookDocument {
 public:
  using Listener = std::function<void(const DocumentChange&)>;

  // An untitled document holding `nb` (Notebook::new_empty() with one empty code cell by default).
  NotebookDocument();
  explicit NotebookDocument(Notebook nb, std::filesystem::path path = {});
  // A document whose file state is given: `disk_stamp` is what path() held when `nb` was last in sync with it;
  // `dirty` marks it as having unsaved changes (a recovered notebook).
  NotebookDocument(Notebook nb, std::filesystem::path path, FileStamp disk_stamp, bool dirty);
  // read_ipynb(path); remembers the file's stamp for FileStamp checks; throws what read_ipynb throws.
  static NotebookDocument open(const std::filesystem::path& path);

  NotebookDocument(NotebookDocument&&) noexcept;
  NotebookDocument& operator=(NotebookDocument&&) noexcept;
  NotebookDocument(const NotebookDocument&) = delete;
  NotebookDocument& operator=(const NotebookDocument&) = delete;
  ~NotebookDocument();

  const Notebook& notebook() const { return notebook_; }
  std::size_t cell_count() const { return notebook_.cells.size(); }
  const Cell& cell(std::size_t index) const;           // std::out_of_range when index >= cell_count()
  std::optional<std::size_t> index_of(std::string_view cell_id) const { return notebook_.index_of(cell_id); }

  // [Structural edits: undoable]
  // Inserts a new cell before `index` (index == cell_count() appends); returns its index.
  std::size_t insert_cell(std::size_t index, CellType type, std::string source = {});
  // Deletes the cells at `indices` (any order, duplicates ignored); returns the index to select afterwards.
  // Deleting every cell leaves one empty code cell, as Jupyter does (also undoable).
  std::size_t delete_cells(std::vector<std::size_t> indices);
  // Moves cell `from` to position `to` (its index after the move); returns `to`.
  std::size_t move_cell(std::size_t from, std::size_t to);
  // Moves the contiguous block [first, first + count) one step up/down; returns the block's new first index
  // (unchanged when already at the edge).
  std::size_t move_cells_up(std::size_t first, std::size_t count = 1);
  std::size_t move_cells_down(std::size_t first, std::size_t count = 1);
  // Splits cell `index` at `byte_offset` into its source (clamped to the source size and moved back to a UTF-8
  // character boundary) into two cells of the same type. Like JupyterLab, leading and trailing newlines of each
  // part are trimmed. The first part keeps the id and metadata; the second gets a fresh id, and for code cells
  // the outputs and execution count (they came from the code at the end). Returns the second cell's index.
  std::size_t split_cell(std::size_t index, std::size_t byte_offset);
  // Merges cells [first, first + count) into the first: sources joined with "\n\n" (JupyterLab), type, id and
  // metadata of the first, outputs of code cells concatenated. count >= 2. Returns `first`.
  std::size_t merge_cells(std::size_t first, std::size_t count);
  // Changes the type of the given cells. To markdown/raw drops outputs and execution count. Returns the first
  // index. No-op (and no history entry) when nothing changes.
  std::size_t change_cell_type(const std::vector<std::size_t>& indices, CellType type);
  // Copies of the cells for a clipboard (ids kept; paste_cells renews them).
  std::vector<Cell> copy_cells(const std::vector<std::size_t>& indices) const;
  // Inserts copies of `cells` before `index` with fresh ids; returns the index of the first pasted cell.
  std::size_t paste_cells(std::size_t index, const std::vector<Cell>& cells);
  // Clears outputs and execution counts of the given cells (all cells when empty). Undoable as one step.
  void clear_outputs(const std::vector<std::size_t>& indices = {});

  bool can_undo() const;
  bool can_redo() const;
  // Returns the index of the cell to select afterwards, or std::nullopt when there was nothing to undo/redo.
  std::optional<std::size_t> undo();
  std::optional<std::size_t> redo();

  // [Content edits: not in the structural history]
  void set_source(std::size_t index, std::string source);
  void set_cell_metadata(std::size_t index, nlohmann::json metadata);
  void set_notebook_metadata(nlohmann::json metadata);
  // Replaces a code cell's outputs and execution count (the runner and the kernel client use these).
  void set_outputs(std::size_t index, std::vector<nlohmann::json> outputs,
                   std::optional<std::int64_t> execution_count);
  // Gives `edit` mutable access to cell `index`'s outputs (e.g. for StreamAccumulator), then notifies `outputs`.
  void edit_outputs(std::size_t index, const std::function<void(std::vector<nlohmann::json>&)>& edit);
  void set_execution_count(std::size_t index, std::optional<std::int64_t> execution_count);
  // Replaces the whole notebook (recovery restore, revert); clears the history; is_dirty() becomes
  // `mark_dirty`.
  void replace_notebook(Notebook nb, bool mark_dirty);

  // [File state]
  const std::filesystem::path& path() const { return path_; }  // empty while untitled
  bool is_untitled() const { return path_.empty(); }
  // "digits_mlp.ipynb", or "Untitled" while untitled.
  std::string display_name() const;
  // The stamp of path() when this document last read or wrote it (FileStamp::missing() while untitled).
  const FileStamp& disk_stamp() const { return disk_stamp_; }
  // True if the file on disk is no longer the one this document last read or wrote (changed elsewhere).
  bool changed_on_disk() const;

  std::uint64_t revision() const { return revision_; }  // bumped by every mutation
  bool is_dirty() const { return revision_ != saved_revision_; }
  // Writes to path() (std::logic_error while untitled) / to `path` (which then becomes path()). Atomic; on
  // failure throws NotebookFileError and the document, its path and its dirty state are unchanged.
  void save();
  void save_as(const std::filesystem::path& path);
  // For callers that wrote the file themselves: records `path` and its stamp and marks the document clean.
  void mark_saved(const std::filesystem::path& path);

  // Listeners are called after every mutation, in the order added. Returns a token for remove_listener.
  int add_listener(Listener listener);
  void remove_listener(int token);

 private:
  struct History;
  void notify(const DocumentChange& change);
  void touch();
  Cell& mutable_cell(std::size_t index);

  Notebook notebook_;
  std::filesystem::path path_;
  FileStamp disk_stamp_;
  std::uint64_t revision_ = 0;
  std::uint64_t saved_revision_ = 0;
  std::unique_ptr<History> history_;
  std::vector<std::pair<int, Listener>> listeners_;
  int next_listener_token_ = 1;
};

}  // namespace rt::studio
