#include "notebook/notebook.h"

#include <random>

namespace rt::studio {

std::string_view cell_type_name(CellType type) {
  switch (type) {
    case CellType::code: return "code";
    case CellType::markdown: return "markdown";
    case CellType::raw: return "raw";
  }
  return "code";
}

std::optional<CellType> cell_type_from_name(std::string_view name) {
  if (name == "code") return CellType::code;
  if (name == "markdown") return CellType::markdown;
  if (name == "raw") return CellType::raw;
  return std::nullopt;
}

bool is_valid_cell_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string new_cell_id(const Notebook& nb) {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char hex[] = "0123456789abcdef";
  for (;;) {
    std::uint64_t bits = generator();
    std::string id(8, '0');
    for (char& c : id) {
      c = hex[bits & 0xF];
      bits >>= 4;
    }
    if (!nb.has_cell_id(id)) return id;
  }
}

Cell Cell::new_of_type(const Notebook& nb, CellType type, std::string source) {
  Cell cell;
  cell.id = new_cell_id(nb);
  cell.type = type;
  cell.source = std::move(source);
  return cell;
}

Cell Cell::new_code(const Notebook& nb, std::string source) {
  return new_of_type(nb, CellType::code, std::move(source));
}
Cell Cell::new_markdown(const Notebook& nb, std::string source) {
  return new_of_type(nb, CellType::markdown, std::move(source));
}
Cell Cell::new_raw(const Notebook& nb, std::string source) {
  return new_of_type(nb, CellType::raw, std::move(source));
}

void Cell::clear_outputs() {
  outputs.clear();
  execution_count.reset();
}

Notebook Notebook::new_empty() {
  Notebook nb;
  nb.metadata = {
      {"kernelspec", {{"display_name", "Python 3 (rustytorch)"}, {"language", "python"}, {"name", "python3"}}},
      {"language_info", {{"name", "python"}}},
  };
  return nb;
}

std::optional<std::size_t> Notebook::index_of(std::string_view cell_id) const {
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (cells[i].id == cell_id) return i;
  return std::nullopt;
}

}  // namespace rt::studio
