// app/studio/notebook/notebook.h — the in-memory .ipynb document: a Notebook is metadata plus a list of Cells.
//
//   rt::studio::Notebook nb = rt::studio::Notebook::new_empty();      // nbformat 4.5, python kernelspec
//   nb.cells.push_back(rt::studio::Cell::new_code(nb, "x = 1\nx + 1"));  // fresh, unique 8-char id
//   nb.cells.push_back(rt::studio::Cell::new_markdown(nb, "# Title"));
//   nb.cells[0].outputs.push_back(rt::studio::make_execute_result(1, {{"text/plain", "2"}}));  // outputs.h
//   nb.cells[0].execution_count = 1;
//   rt::studio::write_ipynb("demo.ipynb", nb);                          // ipynb.h
//
// The model mirrors nbformat's in-memory NotebookNode after `nbformat.read(path, as_version=4)`:
// - Text is held joined: `Cell::source`, a stream output's "text" and each text/* entry of a mimebundle are one
//   std::string; ipynb.h splits them into lists of lines on disk exactly like nbformat's split_lines.
// - Outputs and metadata are nlohmann::json values, so fields this code does not know survive a round trip.
//   Object keys are kept sorted (nlohmann::json's std::map), which is the order nbformat writes.
// - Top-level notebook keys and cell keys this model has no field for are kept verbatim in `extra_fields`.
//
// Contracts:
// - Cell ids match nbformat 4.5: 1..64 characters of [a-zA-Z0-9-_], unique within a notebook. new_cell_id()
//   makes 8 random lowercase hex characters (like nbformat's uuid4().hex[:8]) not used by any cell of `nb`.
// - Only code cells have outputs and an execution_count; markdown and raw cells may have attachments.
//   to_ipynb() refuses (std::invalid_argument) a markdown/raw cell that carries outputs, so nothing is dropped
//   silently.
// - A Notebook is a plain value: copy it freely; it is not thread-safe (one thread edits it at a time).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rt::studio {

enum class CellType { code, markdown, raw };

// "code", "markdown", "raw" — the nbformat spelling.
std::string_view cell_type_name(CellType type);
// Inverse of cell_type_name; std::nullopt for anything else (nbformat 3's "heading" included).
std::optional<CellType> cell_type_from_name(std::string_view name);

struct Notebook;

struct Cell {
  std::string id;                  // stable across saves; see the contracts above
  CellType type = CellType::code;
  std::string source;              // the whole cell text, lines joined
  nlohmann::json metadata = nlohmann::json::object();
  // Present only if the file had an "attachments" key (markdown/raw cells; `![x](attachment:x.png)`).
  std::optional<nlohmann::json> attachments;
  // Code cells only. Each output is one nbformat output dict: {"output_type": "stream"|"display_data"|
  // "execute_result"|"error", ...}; build them with outputs.h. Text entries are joined strings.
  std::vector<nlohmann::json> outputs;
  std::optional<std::int64_t> execution_count;  // code cells; written as null when empty
  nlohmann::json extra_fields = nlohmann::json::object();  // unknown cell keys, written back unchanged

  // New cells of each type with an id unique in `nb` (the cell is not added to `nb`).
  static Cell new_code(const Notebook& nb, std::string source = {});
  static Cell new_markdown(const Notebook& nb, std::string source = {});
  static Cell new_raw(const Notebook& nb, std::string source = {});
  static Cell new_of_type(const Notebook& nb, CellType type, std::string source = {});

  bool is_code() const { return type == CellType::code; }
  // Drops outputs and execution_count (Jupyter's "Clear outputs"); no-op for markdown/raw.
  void clear_outputs();
};

struct Notebook {
  int nbformat = 4;
  int nbformat_minor = 5;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<Cell> cells;
  nlohmann::json extra_fields = nlohmann::json::object();  // unknown top-level keys, written back unchanged

  // An empty 4.5 notebook whose metadata names the Python 3 kernel (kernelspec + language_info), as JupyterLab
  // writes for a new notebook, so the file opens with the right kernel there.
  static Notebook new_empty();

  // Index of the cell with this id, or std::nullopt.
  std::optional<std::size_t> index_of(std::string_view cell_id) const;
  bool has_cell_id(std::string_view cell_id) const { return index_of(cell_id).has_value(); }
};

// 8 random lowercase hex characters, not the id of any cell in `nb`.
std::string new_cell_id(const Notebook& nb);
// True if `id` is a valid nbformat 4.5 cell id (1..64 chars of [a-zA-Z0-9-_]).
bool is_valid_cell_id(std::string_view id);

}  // namespace rt::studio
