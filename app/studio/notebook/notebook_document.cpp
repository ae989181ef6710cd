#include "notebook/notebook_document.h"

#include "notebook/ipynb.h"
#include "notebook/utf8_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>
#include <variant>

namespace rt::studio {

// Note [Structural undo]
// Each undoable edit is a list of steps applied in order; undo applies their inverses in reverse order. A
// Replace step swaps a range of cells: when it is undone or redone, the cells it takes out are captured as they
// are at that moment, so nothing typed since is lost for good (redo brings it back). Retype and ClearOutputs
// touch one cell and leave its source alone.
struct NotebookDocument::History {
  struct Replace {
    std::size_t index;
    std::vector<Cell> removed;
    std::vector<Cell> inserted;
  };
  struct Move {
    std::size_t from, to;
  };
  struct Retype {
    std::size_t index;
    CellType before, after;
    std::vector<nlohmann::json> outputs;  // what the cell held in its code form
    std::optional<std::int64_t> execution_count;
  };
  struct ClearOutputs {
    std::size_t index;
    std::vector<nlohmann::json> outputs;
    std::optional<std::int64_t> execution_count;
  };
  using Step = std::variant<Replace, Move, Retype, ClearOutputs>;
  struct Edit {
    std::vector<Step> steps;
    std::size_t select_after_undo = 0;
    std::size_t select_after_redo = 0;
  };

  static constexpr std::size_t kMaxEdits = 500;
  std::deque<Edit> undo;
  std::vector<Edit> redo;

  void push(Edit edit) {
    redo.clear();
    undo.push_back(std::move(edit));
    if (undo.size() > kMaxEdits) undo.pop_front();
  }

  // Performs one step forward (do/redo) or backward (undo) and says what changed.
  struct StepRunner {
  std::vector<Cell>& cells;

  DocumentChange replace(NotebookDocument::History::Replace& step, bool forward) {
    // Forward: take out `removed.size()` cells and put `inserted` in; backward: the opposite. The cells taken out
    // are remembered as they are now.
    std::vector<Cell>& take_into = forward ? step.removed : step.inserted;
    std::vector<Cell>& put = forward ? step.inserted : step.removed;
    const std::size_t take_count = take_into.size();
    const auto first = cells.begin() + static_cast<std::ptrdiff_t>(step.index);
    std::vector<Cell> taken(std::make_move_iterator(first),
                            std::make_move_iterator(first + static_cast<std::ptrdiff_t>(take_count)));
    cells.erase(first, first + static_cast<std::ptrdiff_t>(take_count));
    cells.insert(cells.begin() + static_cast<std::ptrdiff_t>(step.index), put.begin(), put.end());
    take_into = std::move(taken);
    return {DocumentChange::Kind::cells_replaced, step.index, take_count, put.size(), 0};
  }

  DocumentChange move(std::size_t from, std::size_t to) {
    Cell moving = std::move(cells[from]);
    cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(from));
    cells.insert(cells.begin() + static_cast<std::ptrdiff_t>(to), std::move(moving));
    return {DocumentChange::Kind::cell_moved, from, 0, 0, to};
  }

  DocumentChange retype(NotebookDocument::History::Retype& step, bool forward) {
    Cell& cell = cells[step.index];
    const CellType target = forward ? step.after : step.before;
    if (target == CellType::code && cell.type != CellType::code) {
      cell.outputs = step.outputs;
      cell.execution_count = step.execution_count;
    } else if (target != CellType::code && cell.type == CellType::code) {
      step.outputs = std::move(cell.outputs);
      step.execution_count = cell.execution_count;
      cell.clear_outputs();
    }
    cell.type = target;
    return {DocumentChange::Kind::cell_type, step.index, 0, 0, 0};
  }

  DocumentChange clear_outputs(NotebookDocument::History::ClearOutputs& step, bool forward) {
    Cell& cell = cells[step.index];
    if (forward) {
      step.outputs = std::move(cell.outputs);
      step.execution_count = cell.execution_count;
      cell.clear_outputs();
    } else {
      cell.outputs = step.outputs;
      cell.execution_count = step.execution_count;
    }
    return {DocumentChange::Kind::outputs, step.index, 0, 0, 0};
  }

  DocumentChange run(NotebookDocument::History::Step& step, bool forward) {
    return std::visit(
        [&](auto& s) -> DocumentChange {
          using S = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<S, NotebookDocument::History::Replace>) return replace(s, forward);
          else if constexpr (std::is_same_v<S, NotebookDocument::History::Move>)
            return forward ? move(s.from, s.to) : move(s.to, s.from);
          else if constexpr (std::is_same_v<S, NotebookDocument::History::Retype>) return retype(s, forward);
          else return clear_outputs(s, forward);
        },
        step);
  }
};
};

namespace {

void check_index(std::size_t index, std::size_t count, std::string_view what) {
  if (index >= count)
    throw std::out_of_range(fmt::format("{}: cell index {} is out of range (the notebook has {} cells)", what, index,
                                        count));
}

std::string trim_newlines(std::string_view text) {
  while (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

NotebookDocument::NotebookDocument() : NotebookDocument(Notebook::new_empty()) {
  if (notebook_.cells.empty()) notebook_.cells.push_back(Cell::new_code(notebook_));
}

NotebookDocument::NotebookDocument(Notebook nb, std::filesystem::path path)
    : notebook_(std::move(nb)), path_(std::move(path)), history_(std::make_unique<History>()) {
  if (!path_.empty()) disk_stamp_ = FileStamp::of(path_);
}

NotebookDocument::NotebookDocument(Notebook nb, std::filesystem::path path, FileStamp disk_stamp, bool dirty)
    : notebook_(std::move(nb)),
      path_(std::move(path)),
      disk_stamp_(disk_stamp),
      revision_(dirty ? 1 : 0),
      history_(std::make_unique<History>()) {}

NotebookDocument NotebookDocument::open(const std::filesystem::path& path) {
  Notebook nb = read_ipynb(path);
  return NotebookDocument(std::move(nb), path);
}

NotebookDocument::NotebookDocument(NotebookDocument&&) noexcept = default;
NotebookDocument& NotebookDocument::operator=(NotebookDocument&&) noexcept = default;
NotebookDocument::~NotebookDocument() = default;

const Cell& NotebookDocument::cell(std::size_t index) const {
  check_index(index, notebook_.cells.size(), "NotebookDocument::cell");
  return notebook_.cells[index];
}

Cell& NotebookDocument::mutable_cell(std::size_t index) {
  check_index(index, notebook_.cells.size(), "NotebookDocument");
  return notebook_.cells[index];
}

void NotebookDocument::touch() { ++revision_; }

void NotebookDocument::notify(const DocumentChange& change) {
  // Copy: a listener may remove itself.
  const auto listeners = listeners_;
  for (const auto& [token, listener] : listeners) listener(change);
}

int NotebookDocument::add_listener(Listener listener) {
  const int token = next_listener_token_++;
  listeners_.emplace_back(token, std::move(listener));
  return token;
}

void NotebookDocument::remove_listener(int token) {
  std::erase_if(listeners_, [token](const auto& entry) { return entry.first == token; });
}


std::size_t NotebookDocument::insert_cell(std::size_t index, CellType type, std::string source) {
  if (index > cell_count())
    throw std::out_of_range(fmt::format("insert_cell: position {} is past the end (the notebook has {} cells)", index,
                                        cell_count()));
  History::Edit edit;
  edit.steps.push_back(History::Replace{index, {}, {Cell::new_of_type(notebook_, type, std::move(source))}});
  edit.select_after_undo = index == 0 ? 0 : index - 1;
  edit.select_after_redo = index;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return index;
}

std::size_t NotebookDocument::delete_cells(std::vector<std::size_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  if (indices.empty()) return 0;
  for (std::size_t i : indices) check_index(i, cell_count(), "delete_cells");
  History::Edit edit;
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) edit.steps.push_back(History::Replace{*it, {Cell{}}, {}});
  const bool deletes_all = indices.size() == cell_count();
  if (deletes_all)  // made while the deleted cells are still there, so its id never clashes with them after undo
    edit.steps.push_back(History::Replace{0, {}, {Cell::new_code(notebook_)}});
  edit.select_after_undo = indices.front();
  const std::size_t remaining = deletes_all ? 1 : cell_count() - indices.size();
  edit.select_after_redo = std::min(indices.front(), remaining - 1);
  History::StepRunner runner{notebook_.cells};
  for (auto& step : edit.steps) {
    touch();
    notify(runner.run(step, true));
  }
  const std::size_t select = edit.select_after_redo;
  history_->push(std::move(edit));
  return select;
}

std::size_t NotebookDocument::move_cell(std::size_t from, std::size_t to) {
  check_index(from, cell_count(), "move_cell (from)");
  check_index(to, cell_count(), "move_cell (to)");
  if (from == to) return to;
  History::Edit edit;
  edit.steps.push_back(History::Move{from, to});
  edit.select_after_undo = from;
  edit.select_after_redo = to;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return to;
}

std::size_t NotebookDocument::move_cells_up(std::size_t first, std::size_t count) {
  if (count == 0) return first;
  check_index(first + count - 1, cell_count(), "move_cells_up");
  if (first == 0) return 0;
  History::Edit edit;
  edit.steps.push_back(History::Move{first - 1, first + count - 1});  // the cell above goes below the block
  edit.select_after_undo = first;
  edit.select_after_redo = first - 1;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return first - 1;
}

std::size_t NotebookDocument::move_cells_down(std::size_t first, std::size_t count) {
  if (count == 0) return first;
  check_index(first + count - 1, cell_count(), "move_cells_down");
  if (first + count >= cell_count()) return first;
  History::Edit edit;
  edit.steps.push_back(History::Move{first + count, first});  // the cell below goes above the block
  edit.select_after_undo = first;
  edit.select_after_redo = first + 1;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return first + 1;
}

std::size_t NotebookDocument::split_cell(std::size_t index, std::size_t byte_offset) {
  check_index(index, cell_count(), "split_cell");
  const Cell& original = notebook_.cells[index];
  const std::size_t at = floor_to_char_boundary(original.source, byte_offset);
  Cell first = original;
  first.source = trim_newlines(std::string_view(original.source).substr(0, at));
  first.clear_outputs();
  Cell second = Cell::new_of_type(notebook_, original.type, trim_newlines(std::string_view(original.source).substr(at)));
  second.outputs = original.outputs;
  second.execution_count = original.execution_count;
  History::Edit edit;
  edit.steps.push_back(History::Replace{index, {Cell{}}, {std::move(first), std::move(second)}});
  edit.select_after_undo = index;
  edit.select_after_redo = index + 1;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return index + 1;
}

std::size_t NotebookDocument::merge_cells(std::size_t first, std::size_t count) {
  if (count < 2) throw std::invalid_argument(fmt::format("merge_cells: needs at least 2 cells, got {}", count));
  check_index(first + count - 1, cell_count(), "merge_cells");
  Cell merged = notebook_.cells[first];
  std::vector<std::string> sources;
  for (std::size_t i = first; i < first + count; ++i) {
    const Cell& part = notebook_.cells[i];
    sources.push_back(part.source);
    if (i > first && merged.is_code() && part.is_code())
      merged.outputs.insert(merged.outputs.end(), part.outputs.begin(), part.outputs.end());
  }
  merged.source.clear();
  for (std::size_t i = 0; i < sources.size(); ++i) merged.source += (i ? "\n\n" : "") + sources[i];
  merged.execution_count.reset();  // the merged code has not run as one cell
  History::Edit edit;
  edit.steps.push_back(History::Replace{first, std::vector<Cell>(count), {std::move(merged)}});
  edit.select_after_undo = first;
  edit.select_after_redo = first;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return first;
}

std::size_t NotebookDocument::change_cell_type(const std::vector<std::size_t>& indices, CellType type) {
  for (std::size_t i : indices) check_index(i, cell_count(), "change_cell_type");
  std::vector<std::size_t> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  History::Edit edit;
  for (std::size_t i : sorted)
    if (notebook_.cells[i].type != type) edit.steps.push_back(History::Retype{i, notebook_.cells[i].type, type, {}, {}});
  const std::size_t first = sorted.empty() ? 0 : sorted.front();
  if (edit.steps.empty()) return first;
  edit.select_after_undo = first;
  edit.select_after_redo = first;
  History::StepRunner runner{notebook_.cells};
  for (auto& step : edit.steps) {
    touch();
    notify(runner.run(step, true));
  }
  history_->push(std::move(edit));
  return first;
}

std::vector<Cell> NotebookDocument::copy_cells(const std::vector<std::size_t>& indices) const {
  std::vector<std::size_t> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<Cell> copies;
  for (std::size_t i : sorted) copies.push_back(cell(i));
  return copies;
}

std::size_t NotebookDocument::paste_cells(std::size_t index, const std::vector<Cell>& cells) {
  if (index > cell_count())
    throw std::out_of_range(fmt::format("paste_cells: position {} is past the end (the notebook has {} cells)", index,
                                        cell_count()));
  if (cells.empty()) return index;
  std::vector<Cell> pasted;
  std::set<std::string> pasted_ids;  // fresh ids, unique against the notebook and each other
  for (const Cell& c : cells) {
    Cell copy = c;
    do copy.id = new_cell_id(notebook_);
    while (pasted_ids.count(copy.id));
    pasted_ids.insert(copy.id);
    pasted.push_back(std::move(copy));
  }
  History::Edit edit;
  edit.steps.push_back(History::Replace{index, {}, std::move(pasted)});
  edit.select_after_undo = index == 0 ? 0 : index - 1;
  edit.select_after_redo = index;
  History::StepRunner runner{notebook_.cells};
  touch();
  notify(runner.run(edit.steps.back(), true));
  history_->push(std::move(edit));
  return index;
}

void NotebookDocument::clear_outputs(const std::vector<std::size_t>& indices) {
  std::vector<std::size_t> sorted = indices;
  if (sorted.empty())
    for (std::size_t i = 0; i < cell_count(); ++i) sorted.push_back(i);
  for (std::size_t i : sorted) check_index(i, cell_count(), "clear_outputs");
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  History::Edit edit;
  for (std::size_t i : sorted) {
    const Cell& c = notebook_.cells[i];
    if (!c.outputs.empty() || c.execution_count) edit.steps.push_back(History::ClearOutputs{i, {}, {}});
  }
  if (edit.steps.empty()) return;
  edit.select_after_undo = sorted.front();
  edit.select_after_redo = sorted.front();
  History::StepRunner runner{notebook_.cells};
  for (auto& step : edit.steps) {
    touch();
    notify(runner.run(step, true));
  }
  history_->push(std::move(edit));
}

bool NotebookDocument::can_undo() const { return !history_->undo.empty(); }
bool NotebookDocument::can_redo() const { return !history_->redo.empty(); }

std::optional<std::size_t> NotebookDocument::undo() {
  if (history_->undo.empty()) return std::nullopt;
  History::Edit edit = std::move(history_->undo.back());
  history_->undo.pop_back();
  History::StepRunner runner{notebook_.cells};
  for (auto it = edit.steps.rbegin(); it != edit.steps.rend(); ++it) {
    touch();
    notify(runner.run(*it, false));
  }
  const std::size_t select = std::min(edit.select_after_undo, cell_count() == 0 ? 0 : cell_count() - 1);
  history_->redo.push_back(std::move(edit));
  return select;
}

std::optional<std::size_t> NotebookDocument::redo() {
  if (history_->redo.empty()) return std::nullopt;
  History::Edit edit = std::move(history_->redo.back());
  history_->redo.pop_back();
  History::StepRunner runner{notebook_.cells};
  for (auto& step : edit.steps) {
    touch();
    notify(runner.run(step, true));
  }
  const std::size_t select = std::min(edit.select_after_redo, cell_count() == 0 ? 0 : cell_count() - 1);
  history_->undo.push_back(std::move(edit));
  return select;
}

void NotebookDocument::set_source(std::size_t index, std::string source) {
  Cell& c = mutable_cell(index);
  if (c.source == source) return;
  c.source = std::move(source);
  touch();
  notify({DocumentChange::Kind::source, index, 0, 0, 0});
}

void NotebookDocument::set_cell_metadata(std::size_t index, nlohmann::json metadata) {
  if (!metadata.is_object()) throw std::invalid_argument("set_cell_metadata: metadata must be a JSON object");
  Cell& c = mutable_cell(index);
  if (c.metadata == metadata) return;
  c.metadata = std::move(metadata);
  touch();
  notify({DocumentChange::Kind::cell_metadata, index, 0, 0, 0});
}

void NotebookDocument::set_notebook_metadata(nlohmann::json metadata) {
  if (!metadata.is_object()) throw std::invalid_argument("set_notebook_metadata: metadata must be a JSON object");
  if (notebook_.metadata == metadata) return;
  notebook_.metadata = std::move(metadata);
  touch();
  notify({DocumentChange::Kind::notebook_metadata, 0, 0, 0, 0});
}

void NotebookDocument::set_outputs(std::size_t index, std::vector<nlohmann::json> outputs,
                                   std::optional<std::int64_t> execution_count) {
  Cell& c = mutable_cell(index);
  if (!c.is_code())
    throw std::invalid_argument(fmt::format("set_outputs: cell {} is a {} cell; only code cells have outputs", index,
                                            cell_type_name(c.type)));
  c.outputs = std::move(outputs);
  c.execution_count = execution_count;
  touch();
  notify({DocumentChange::Kind::outputs, index, 0, 0, 0});
}

void NotebookDocument::edit_outputs(std::size_t index,
                                    const std::function<void(std::vector<nlohmann::json>&)>& edit) {
  Cell& c = mutable_cell(index);
  if (!c.is_code())
    throw std::invalid_argument(fmt::format("edit_outputs: cell {} is a {} cell; only code cells have outputs", index,
                                            cell_type_name(c.type)));
  edit(c.outputs);
  touch();
  notify({DocumentChange::Kind::outputs, index, 0, 0, 0});
}

void NotebookDocument::set_execution_count(std::size_t index, std::optional<std::int64_t> execution_count) {
  Cell& c = mutable_cell(index);
  if (!c.is_code())
    throw std::invalid_argument(fmt::format(
        "set_execution_count: cell {} is a {} cell; only code cells have an execution count", index,
        cell_type_name(c.type)));
  if (c.execution_count == execution_count) return;
  c.execution_count = execution_count;
  touch();
  notify({DocumentChange::Kind::outputs, index, 0, 0, 0});
}

void NotebookDocument::replace_notebook(Notebook nb, bool mark_dirty) {
  notebook_ = std::move(nb);
  history_->undo.clear();
  history_->redo.clear();
  touch();
  if (!mark_dirty) saved_revision_ = revision_;
  notify({DocumentChange::Kind::reloaded, 0, 0, 0, 0});
}

std::string NotebookDocument::display_name() const {
  return path_.empty() ? std::string("Untitled") : path_.filename().string();
}

bool NotebookDocument::changed_on_disk() const {
  if (path_.empty()) return false;
  return FileStamp::of(path_) != disk_stamp_;
}

void NotebookDocument::save() {
  if (path_.empty())
    throw std::logic_error("NotebookDocument::save: the notebook is untitled; use save_as(path) to choose a file");
  save_as(path_);
}

void NotebookDocument::save_as(const std::filesystem::path& path) {
  std::string bytes;
  try {
    bytes = to_ipynb(notebook_);
  } catch (const std::invalid_argument& e) {
    throw NotebookFileError(path, fmt::format("{}: not saved: {}. Nothing was written.", path.string(), e.what()));
  }
  write_file_atomically(path, bytes);
  path_ = path;
  disk_stamp_ = FileStamp::of(path_);
  saved_revision_ = revision_;
  notify({DocumentChange::Kind::saved, 0, 0, 0, 0});
}

void NotebookDocument::mark_saved(const std::filesystem::path& path) {
  path_ = path;
  disk_stamp_ = FileStamp::of(path_);
  saved_revision_ = revision_;
  notify({DocumentChange::Kind::saved, 0, 0, 0, 0});
}

}  // namespace rt::studio
