#include "notebook/ipynb.h"
#include "notebook/python_json.h"
#include "notebook/utf8_text.h"

#include <fmt/format.h>

#include <stdexcept>

namespace rt::studio {

// Note [Writing like nbformat]
// nbformat.write(nb, path) is: split_lines(nb) (source -> str.splitlines(True); stream "text" likewise; in
// display_data/execute_result "data" and in attachments, string values of text/*, application/javascript and
// image/svg+xml likewise), strip_transient(nb) (metadata orig_nbformat, orig_nbformat_minor, signature; cell
// metadata "trusted"), json.dumps(indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False), and a
// final "\n". The reader undoes split_lines (rejoin_lines), so reading and writing an nbformat-written file
// gives the same bytes. dump_python_json reproduces json.dumps byte for byte.
namespace {

nlohmann::json split_text(const std::string& text) {
  nlohmann::json lines = nlohmann::json::array();
  for (auto& line : python_splitlines(text)) lines.push_back(std::move(line));
  return lines;
}

void split_mimebundle(nlohmann::json& data) {
  if (!data.is_object()) return;
  for (auto& [mime, value] : data.items()) {
    if (!value.is_string()) continue;
    if (mime.starts_with("text/") || mime == "application/javascript" || mime == "image/svg+xml")
      value = split_text(value.get_ref<const std::string&>());
  }
}

nlohmann::json output_to_json(const nlohmann::json& output) {
  nlohmann::json out = output;
  if (!out.is_object()) return out;
  const auto type = out.find("output_type");
  if (type == out.end() || !type->is_string()) return out;
  const auto& kind = type->get_ref<const std::string&>();
  if (kind == "execute_result" || kind == "display_data") {
    if (auto data = out.find("data"); data != out.end()) split_mimebundle(*data);
  } else if (kind == "stream") {
    if (auto text = out.find("text"); text != out.end() && text->is_string())
      *text = split_text(text->get_ref<const std::string&>());
  }
  return out;
}

nlohmann::json cell_to_json(const Cell& cell, std::size_t index) {
  if (!cell.is_code() && (!cell.outputs.empty() || cell.execution_count))
    throw std::invalid_argument(fmt::format(
        "cell {} (id {}) is a {} cell but has outputs or an execution count; only code cells have them (change its "
        "type with NotebookDocument::change_cell_type, which drops them)",
        index, cell.id, cell_type_name(cell.type)));
  nlohmann::json out = cell.extra_fields.is_object() ? cell.extra_fields : nlohmann::json::object();
  out["cell_type"] = cell_type_name(cell.type);
  out["id"] = cell.id;
  out["metadata"] = cell.metadata.is_object() ? cell.metadata : nlohmann::json::object();
  out["metadata"].erase("trusted");
  out["source"] = split_text(cell.source);
  if (cell.attachments) {
    nlohmann::json attachments = *cell.attachments;
    if (attachments.is_object())
      for (auto& [name, bundle] : attachments.items()) split_mimebundle(bundle);
    out["attachments"] = std::move(attachments);
  }
  if (cell.is_code()) {
    out["execution_count"] = cell.execution_count ? nlohmann::json(*cell.execution_count) : nlohmann::json(nullptr);
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& output : cell.outputs) outputs.push_back(output_to_json(output));
    out["outputs"] = std::move(outputs);
  }
  return out;
}

}  // namespace

nlohmann::json notebook_to_json(const Notebook& nb) {
  nlohmann::json doc = nb.extra_fields.is_object() ? nb.extra_fields : nlohmann::json::object();
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t i = 0; i < nb.cells.size(); ++i) cells.push_back(cell_to_json(nb.cells[i], i));
  doc["cells"] = std::move(cells);
  doc["metadata"] = nb.metadata.is_object() ? nb.metadata : nlohmann::json::object();
  for (const char* transient : {"orig_nbformat", "orig_nbformat_minor", "signature"}) doc["metadata"].erase(transient);
  doc["nbformat"] = 4;
  doc["nbformat_minor"] = std::max(nb.nbformat_minor, 5);  // cells always carry ids (a 4.5 feature)
  return doc;
}

std::string to_ipynb(const Notebook& nb) {
  std::string text = dump_python_json(notebook_to_json(nb), 1);
  text += '\n';
  return text;
}

void write_ipynb(const std::filesystem::path& path, const Notebook& nb) {
  std::string bytes;
  try {
    bytes = to_ipynb(nb);
  } catch (const std::invalid_argument& e) {
    throw NotebookFileError(path, fmt::format("{}: not saved: {}. Nothing was written.", path.string(), e.what()));
  }
  write_file_atomically(path, bytes);
}

}  // namespace rt::studio
