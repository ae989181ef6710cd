// app/studio/notebook/ipynb.h — reading and writing .ipynb files exactly as Python's nbformat does.
//
//   try {
//     rt::studio::Notebook nb = rt::studio::read_ipynb("samples/notebooks/digits_mlp.ipynb");
//     nb.cells[1].source = "epochs = 5";
//     rt::studio::write_ipynb("samples/notebooks/digits_mlp.ipynb", nb);  // atomic: never a half-written file
//   } catch (const rt::studio::NotebookFormatError& e) {  // not a notebook / corrupt / unsupported version
//     show_message(e.what());                                // names the file, the problem, where, and the fix
//   } catch (const rt::studio::NotebookFileError& e) {    // cannot read or write the file
//     show_message(e.what());
//   }
//
// Contracts (see Note [Writing like nbformat] in ipynb_writer.cpp):
// - to_ipynb(nb) == nbformat.writes(nb) + "\n" as nbformat 5 writes it: json.dumps(sort_keys=True, indent=1,
//   separators=(",", ": "), ensure_ascii=False); source, stream text, and the text/* (plus
//   application/javascript and image/svg+xml) entries of mimebundles and attachments split into lines with
//   Python's str.splitlines(keepends=True); floats written as Python's repr (shortest round-trip digits,
//   "1e-05", "1e+16", "NaN", "Infinity"); metadata "orig_nbformat", "orig_nbformat_minor", "signature" and cell
//   "trusted" metadata dropped, as nbformat's strip_transient does.
// - parse_ipynb(text) is nbformat.reads(text, as_version=4): lists of lines joined; nbformat 4.0-4.4 upgraded
//   to 4.5 (every cell gets a fresh id); duplicate or missing ids in a 4.5 file replaced by fresh ones (as
//   nbformat's validate repairs them). So read_ipynb + write_ipynb of a file nbformat wrote is byte-identical.
// - Errors. NotebookFormatError: not JSON (with line, column and byte offset), not a notebook (no "cells" /
//   "nbformat"), nbformat 3 or older or 5+ (with the conversion command to run), a wrong-typed field (with its
//   JSON path, e.g. `cells[3].source`), invalid UTF-8. NotebookFileError: missing file, unreadable file,
//   unwritable directory or disk full (with errno's text). Every message starts with the file name and ends
//   with what to do. Limitation: integers beyond 64 bits are read as floats.
// - write_ipynb writes a hidden `.NAME.tmp-XXXXXXXX` in the same directory, fsyncs it, renames it over `path` and fsyncs
//   the directory; on any failure the temporary is removed and an existing `path` is left untouched. The
//   file mode of an existing `path` is kept (new files get 0644 minus umask). Symlinks are written through.
#pragma once
#include "notebook/notebook.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rt::studio {

// The input is not a notebook we can read. what() is the full message; the parts are kept for the UI.
class NotebookFormatError : public std::runtime_error {
 public:
  NotebookFormatError(std::string source_name, std::string problem, std::string location, std::string fix);
  const std::string& source_name() const { return source_name_; }
  const std::string& problem() const { return problem_; }
  const std::string& location() const { return location_; }  // "byte 120 (line 7, column 3)" or "cells[2].id"
  const std::string& fix() const { return fix_; }

 private:
  std::string source_name_, problem_, location_, fix_;
};

// Reading or writing the file itself failed (permissions, missing directory, disk full).
class NotebookFileError : public std::runtime_error {
 public:
  NotebookFileError(std::filesystem::path path, std::string message);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Parses notebook JSON text. `source_name` (a path or "clipboard") prefixes error messages.
Notebook parse_ipynb(std::string_view text, std::string_view source_name = "<notebook>");
// Reads and parses a file; NotebookFileError if it cannot be read, NotebookFormatError if it is not a notebook.
Notebook read_ipynb(const std::filesystem::path& path);

// The exact bytes nbformat would write for `nb`, trailing newline included.
std::string to_ipynb(const Notebook& nb);
// The notebook as an nbformat json tree (lines split as on disk); to_ipynb() is dump_python_json(to_json(nb)).
nlohmann::json notebook_to_json(const Notebook& nb);
// Inverse of notebook_to_json, with parse_ipynb's upgrades and checks; `source_name` prefixes errors.
Notebook notebook_from_json(const nlohmann::json& document, std::string_view source_name = "<notebook>");

// Atomically replaces `path` with to_ipynb(nb); see the contracts above.
void write_ipynb(const std::filesystem::path& path, const Notebook& nb);

// Writes `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the directory). Throws
// NotebookFileError naming the path and the OS error, leaving any existing `path` untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace rt::studio
