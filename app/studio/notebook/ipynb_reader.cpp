#include "notebook/ipynb.h"
#include "notebook/utf8_text.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

namespace rt::studio {
namespace {

constexpr std::string_view kRepairHint =
    "Open the file in a text editor to repair it, or restore it from version control or a backup.";

std::string type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a float";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::array: return "a list";
    case nlohmann::json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

std::string line_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return fmt::format("byte {} (line {}, column {})", byte, line, column);
}

class NotebookDecoder {
 public:
  explicit NotebookDecoder(std::string_view source_name) : source_(source_name) {}

  [[noreturn]] void fail(std::string problem, std::string location, std::string fix = std::string(kRepairHint)) const {
    throw NotebookFormatError(source_, std::move(problem), std::move(location), std::move(fix));
  }

  void expect(const nlohmann::json& value, bool ok, const std::string& path, std::string_view wanted) const {
    if (!ok) fail(fmt::format("{} is {}; it must be {}", path, type_name(value), wanted), path);
  }

  // A source or text field: a string, or a list of strings joined (nbformat's rejoin_lines).
  std::string text_field(const nlohmann::json& value, const std::string& path) const {
    if (value.is_string()) return value.get<std::string>();
    expect(value, value.is_array(), path, "a string or a list of strings");
    std::string text;
    for (std::size_t i = 0; i < value.size(); ++i) {
      expect(value[i], value[i].is_string(), fmt::format("{}[{}]", path, i), "a string");
      text += value[i].get_ref<const std::string&>();
    }
    return text;
  }

  // nbformat's _rejoin_mimebundle: non-JSON MIME types whose value is a list of strings are joined.
  void rejoin_mimebundle(nlohmann::json& data, const std::string& path) const {
    expect(data, data.is_object(), path, "an object mapping MIME types to data");
    for (auto& [mime, value] : data.items()) {
      const bool json_mime = mime == "application/json" ||
                             (mime.starts_with("application/") && mime.ends_with("+json"));
      if (json_mime || !value.is_array()) continue;
      bool all_strings = true;
      for (const auto& line : value) all_strings = all_strings && line.is_string();
      if (!all_strings) continue;
      std::string joined;
      for (const auto& line : value) joined += line.get_ref<const std::string&>();
      value = std::move(joined);
    }
  }

  nlohmann::json output(nlohmann::json out, const std::string& path) const {
    expect(out, out.is_object(), path, "an object (one output)");
    const auto type = out.find("output_type");
    if (type == out.end()) fail(fmt::format("{} has no \"output_type\"", path), path);
    expect(*type, type->is_string(), path + ".output_type", "a string");
    const std::string kind = type->get<std::string>();
    if (kind == "execute_result" || kind == "display_data") {
      if (auto data = out.find("data"); data != out.end()) rejoin_mimebundle(*data, path + ".data");
    } else if (!kind.empty()) {
      if (auto text = out.find("text"); text != out.end() && text->is_array())
        *text = text_field(*text, path + ".text");
    }
    return out;
  }

  Cell cell(const nlohmann::json& value, const std::string& path) const {
    expect(value, value.is_object(), path, "an object (one cell)");
    Cell cell;
    cell.extra_fields = nlohmann::json::object();
    bool has_type = false;
    for (const auto& [key, field] : value.items()) {
      const std::string field_path = path + "." + key;
      if (key == "cell_type") {
        expect(field, field.is_string(), field_path, "\"code\", \"markdown\" or \"raw\"");
        const auto type = cell_type_from_name(field.get_ref<const std::string&>());
        if (!type) {
          const std::string name = field.get<std::string>();
          fail(fmt::format("{} is \"{}\"; nbformat 4 cells are \"code\", \"markdown\" or \"raw\"", field_path, name),
               field_path,
               name == "heading" ? "This is an nbformat 3 heading cell: convert the notebook with `jupyter nbconvert "
                                   "--to notebook --nbformat 4 FILE`."
                                 : std::string(kRepairHint));
        }
        cell.type = *type;
        has_type = true;
      } else if (key == "id") {
        if (field.is_string()) cell.id = field.get<std::string>();  // checked by the caller
      } else if (key == "source") {
        cell.source = text_field(field, field_path);
      } else if (key == "metadata") {
        expect(field, field.is_object(), field_path, "an object");
        cell.metadata = field;
        cell.metadata.erase("trusted");  // nbformat's strip_transient
      } else if (key == "attachments") {
        expect(field, field.is_object(), field_path, "an object mapping names to MIME bundles");
        nlohmann::json attachments = field;
        for (auto& [name, bundle] : attachments.items()) rejoin_mimebundle(bundle, field_path + "." + name);
        cell.attachments = std::move(attachments);
      } else {
        cell.extra_fields[key] = field;
      }
    }
    if (!has_type) fail(fmt::format("{} has no \"cell_type\"", path), path);
    if (cell.type == CellType::code) {
      if (auto outputs = cell.extra_fields.find("outputs"); outputs != cell.extra_fields.end()) {
        expect(*outputs, outputs->is_array(), path + ".outputs", "a list of outputs");
        for (std::size_t i = 0; i < outputs->size(); ++i)
          cell.outputs.push_back(output((*outputs)[i], fmt::format("{}.outputs[{}]", path, i)));
        cell.extra_fields.erase("outputs");
      }
      if (auto count = cell.extra_fields.find("execution_count"); count != cell.extra_fields.end()) {
        if (count->is_number_integer()) cell.execution_count = count->get<std::int64_t>();
        else expect(*count, count->is_null(), path + ".execution_count", "an integer or null");
        cell.extra_fields.erase("execution_count");
      }
    }
    return cell;
  }

  Notebook notebook(const nlohmann::json& doc) const {
    if (!doc.is_object())
      fail(fmt::format("this is not a notebook: the file holds {} where a notebook holds a JSON object with "
                       "\"cells\", \"metadata\" and \"nbformat\"",
                       type_name(doc)),
           "the top-level value", "Open a .ipynb file (Jupyter notebook).");
    const auto major = doc.find("nbformat");
    if (major == doc.end())
      fail("this is JSON but not a notebook: it has no \"nbformat\" key", "the top-level object",
           "Open a .ipynb file (Jupyter notebook).");
    expect(*major, major->is_number_integer(), "nbformat", "an integer");
    const std::int64_t version = major->get<std::int64_t>();
    if (version < 4)
      fail(fmt::format("this is an nbformat {} notebook; the studio reads nbformat 4", version), "nbformat",
           "Convert it first: `jupyter nbconvert --to notebook --nbformat 4 FILE` (or open and save it in "
           "JupyterLab).");
    if (version > 4)
      fail(fmt::format("this notebook uses nbformat {}, newer than the nbformat 4 this studio reads", version),
           "nbformat", "Save it as nbformat 4 from the program that wrote it.");
    std::int64_t minor = 0;
    if (auto it = doc.find("nbformat_minor"); it != doc.end() && !it->is_null()) {
      expect(*it, it->is_number_integer() && it->get<std::int64_t>() >= 0, "nbformat_minor",
             "a non-negative integer");
      minor = it->get<std::int64_t>();
    }
    const auto cells = doc.find("cells");
    if (cells == doc.end()) fail("the notebook has no \"cells\" list", "the top-level object");
    expect(*cells, cells->is_array(), "cells", "a list of cells");

    Notebook nb;
    nb.nbformat = 4;
    nb.nbformat_minor = static_cast<int>(std::max<std::int64_t>(minor, 5));
    for (const auto& [key, value] : doc.items()) {
      if (key == "cells" || key == "nbformat" || key == "nbformat_minor") continue;
      if (key == "metadata") {
        expect(value, value.is_object(), "metadata", "an object");
        nb.metadata = value;
      } else {
        nb.extra_fields[key] = value;
      }
    }
    for (const char* transient : {"orig_nbformat", "orig_nbformat_minor", "signature"}) nb.metadata.erase(transient);

    nb.cells.reserve(cells->size());
    for (std::size_t i = 0; i < cells->size(); ++i) nb.cells.push_back(cell((*cells)[i], fmt::format("cells[{}]", i)));

    // Ids: an upgrade from 4.0-4.4 gives every cell a fresh one (nbformat's upgrade); in 4.5 missing, invalid or
    // duplicate ids are replaced (nbformat's validate repairs missing and duplicate ones).
    std::set<std::string> seen;
    for (auto& c : nb.cells) {
      if (minor < 5 || !is_valid_cell_id(c.id) || seen.count(c.id)) c.id.clear();
      if (!c.id.empty()) seen.insert(c.id);
    }
    for (auto& c : nb.cells) {
      if (c.id.empty()) {
        do c.id = new_cell_id(nb);
        while (seen.count(c.id));
        seen.insert(c.id);
      }
    }
    return nb;
  }

 private:
  std::string source_;
};

// Python's json module reads the non-standard tokens NaN, Infinity and -Infinity (and json.dumps writes them).
// nlohmann::json does not, so outside strings they are rewritten into marker strings (`marker` + "nan", "inf",
// "-inf"; `marker` holds random digits and a control character, so no file can contain it by accident) before a
// second parse, and turned back into numbers afterwards.
std::optional<std::string> rewrite_python_constants(std::string_view text, const std::string& marker_json) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, changed = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    std::string_view rest = text.substr(i);
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (rest.starts_with("NaN")) {
      out += '"' + marker_json + "nan\"";
      i += 2;
      changed = true;
    } else if (rest.starts_with("Infinity")) {
      out += '"' + marker_json + "inf\"";
      i += 7;
      changed = true;
    } else if (rest.starts_with("-Infinity")) {
      out += '"' + marker_json + "-inf\"";
      i += 8;
      changed = true;
    } else {
      out += c;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

void restore_python_constants(nlohmann::json& value, const std::string& marker) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (!s.starts_with(marker)) return;
    const std::string_view kind = std::string_view(s).substr(marker.size());
    if (kind == "nan") value = std::numeric_limits<double>::quiet_NaN();
    else if (kind == "inf") value = std::numeric_limits<double>::infinity();
    else if (kind == "-inf") value = -std::numeric_limits<double>::infinity();
  } else if (value.is_array() || value.is_object()) {
    for (auto& item : value) restore_python_constants(item, marker);
  }
}

}  // namespace

NotebookFormatError::NotebookFormatError(std::string source_name, std::string problem, std::string location,
                                         std::string fix)
    : std::runtime_error(fmt::format("{}: cannot open it as a notebook: {} (at {}). {}", source_name, problem,
                                     location, fix)),
      source_name_(std::move(source_name)),
      problem_(std::move(problem)),
      location_(std::move(location)),
      fix_(std::move(fix)) {}

NotebookFileError::NotebookFileError(std::filesystem::path path, std::string message)
    : std::runtime_error(std::move(message)), path_(std::move(path)) {}

Notebook notebook_from_json(const nlohmann::json& document, std::string_view source_name) {
  return NotebookDecoder(source_name).notebook(document);
}

Notebook parse_ipynb(std::string_view text, std::string_view source_name) {
  const NotebookDecoder decoder(source_name);
  std::size_t first_content = text.find_first_not_of(" \t\r\n");
  if (first_content == std::string_view::npos)
    decoder.fail("the file is empty", "byte 0",
                 "If the studio was writing it when it stopped, reopen the studio to get the autosaved copy back; "
                 "otherwise restore it from version control or a backup.");
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0)
      decoder.fail(fmt::format("the file is not UTF-8 text (byte 0x{:02x} is not valid UTF-8); a notebook is UTF-8 "
                               "JSON",
                               static_cast<unsigned char>(text[i])),
                   line_column(text, i), "Open a .ipynb file (Jupyter notebook).");
    i += n;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    decoder.fail(fmt::format("a number is out of range ({})", e.what()), "a number in the file", std::string(kRepairHint));
  } catch (const nlohmann::json::parse_error& first_error) {
    std::random_device random;
    const std::string token = fmt::format("rt-{:08x}{:08x}-", random(), random());
    const std::string marker = "\x01" + token;  // as parsed; written as the JSON escape \u0001 below
    std::optional<std::string> rewritten = rewrite_python_constants(text, "\\u0001" + token);
    bool recovered = false;
    if (rewritten) {
      try {
        doc = nlohmann::json::parse(*rewritten);
        restore_python_constants(doc, marker);
        recovered = true;
      } catch (const nlohmann::json::exception&) {
      }
    }
    if (!recovered) {
      const std::size_t byte = first_error.byte > 0 ? first_error.byte - 1 : 0;
      std::string what = first_error.what();
      if (auto pos = what.find("syntax error"); pos != std::string::npos) what = what.substr(pos);
      const bool at_end = byte + 1 >= text.size() || text.find_first_not_of(" \t\r\n", byte) == std::string_view::npos;
      if (text[first_content] != '{' && text[first_content] != '[')
        decoder.fail("this is not a notebook: the file is not JSON", line_column(text, first_content),
                     "Open a .ipynb file (Jupyter notebook).");
      decoder.fail(at_end ? fmt::format("the JSON ends early; the file looks truncated ({})", what)
                          : fmt::format("the file is not valid JSON ({})", what),
                   line_column(text, byte),
                   at_end ? "If the studio was writing it when it stopped, reopen the studio to get the autosaved "
                            "copy back; otherwise restore it from version control or a backup."
                          : std::string(kRepairHint));
    }
  }
  return decoder.notebook(doc);
}

Notebook read_ipynb(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw NotebookFileError(path, fmt::format("{}: cannot open it: it is a folder, not a notebook file. Choose a "
                                              ".ipynb file.",
                                              path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw NotebookFileError(
        path, fmt::format("{}: cannot open it: {}. {}", path.string(), std::strerror(err),
                          err == ENOENT ? "Check the path; the file may have been moved or deleted."
                                        : "Check the file's permissions."));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    throw NotebookFileError(path, fmt::format("{}: reading it failed: {}. Check the disk and try again.",
                                              path.string(), std::strerror(errno)));
  return parse_ipynb(buffer.str(), path.string());
}

}  // namespace rt::studio
