// Reading and writing .ipynb exactly as Python's nbformat does: byte-identical round trips, upgrades, and
// files we write checked by nbformat itself.
#include "notebook/ipynb.h"
#include "notebook/outputs.h"
#include "notebook/python_json.h"
#include "notebook/utf8_text.h"
#include "notebook_test_support.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>

using namespace rt::studio;
using rt::studio::test::ScratchDir;

namespace {

// nbformat fixtures are written once per test binary run.
const std::filesystem::path& fixtures() {
  static ScratchDir dir("rt-nbformat-fixtures");
  static bool made = false;
  if (!made) {
    std::string output;
    const auto script = rt::studio::test::test_source_dir() / "nbformat_fixtures.py";
    const int rc = rt::studio::test::run_python(script.string() + " " + dir.path().string(), output);
    INFO(output);
    REQUIRE(rc == 0);
    made = true;
  }
  return dir.path();
}

std::vector<std::filesystem::path> ipynb_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".ipynb") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 60 ? i - 60 : 0;
  return "at byte " + std::to_string(i) + "\n ours:     " + a.substr(from, 120) + "\n expected: " + b.substr(from, 120);
}

}  // namespace

TEST_CASE("python_float_repr matches Python's repr for tricky doubles", "[studio][ipynb]") {
  const std::vector<double> values = {0.0, -0.0, 1.0, -1.5, 0.1, 0.2 + 0.1, 1e-4, 1e-5, 1.5e-7, 1e15, 1e16, 1e17,
                                      123456789.123, 2.5e-300, 5e-324, std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::min(), 1e22, 1e23, 12345678901234567.0,
                                      9007199254740993.0, 0.3333333333333333, 100.0, 1234.5, 9.999999999999999e15,
                                      0.00012345, 0.000012345, 4.35, 1e100, -2.2250738585072014e-308};
  std::string args = "-c \"import sys; print('\\n'.join(repr(float(v)) for v in sys.argv[1:]))\"";
  for (double v : values) args.append(" ").append(python_float_repr(v));  // Python parses our text back ...
  std::string output;
  REQUIRE(rt::studio::test::run_python(args, output) == 0);
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("value " << i);
    CHECK(lines[i] == python_float_repr(values[i]));  // ... and its repr is the text we wrote
  }
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(1e15) == "1000000000000000.0");
  CHECK(python_float_repr(1e-5) == "1e-05");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(std::nan("")) == "NaN");
  CHECK(python_float_repr(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("dump_python_json matches json.dumps for escapes, key order and nesting", "[studio][ipynb]") {
  nlohmann::json doc = {{"b", {1, 2.5, nullptr, true}},
                        {"a", nlohmann::json::object()},
                        {"é", nlohmann::json::array()},
                        {"Z", "ctl \x01\x1f tab\t nl\n cr\r ff\f bs\b del\x7f q\" bsl\\ / é 😀 \u2028"},
                        {"nested", {{"x", {{"y", nlohmann::json::array({nlohmann::json::array()})}}}}}};
  const std::string ours = dump_python_json(doc, 1);
  const ScratchDir dir;
  rt::studio::test::write_bytes(dir / "in.json", ours);
  std::string output;
  const std::string script =
      "-c \"import json,sys; d=json.load(open(sys.argv[1],encoding='utf-8')); "
      "sys.stdout.buffer.write(json.dumps(d, sort_keys=True, indent=1, separators=(',', ': '), "
      "ensure_ascii=False).encode('utf-8'))\" " +
      (dir / "in.json").string();
  REQUIRE(rt::studio::test::run_python(script, output) == 0);
  CHECK(output == ours);
  CHECK(dump_python_json({{"a", {1, 2}}, {"b", "x"}}, -1) == R"({"a": [1, 2], "b": "x"})");
  CHECK_THROWS_WITH(dump_python_json({{"k", {"ok", std::string("bad \xff")}}}), Catch::Contains("$.k[1]"));
}

TEST_CASE("python_splitlines splits like str.splitlines(True)", "[studio][ipynb]") {
  CHECK(python_splitlines("").empty());
  CHECK(python_splitlines("a") == std::vector<std::string>{"a"});
  CHECK(python_splitlines("a\nb\r\nc\rd\n") == std::vector<std::string>{"a\n", "b\r\n", "c\r", "d\n"});
  CHECK(python_splitlines("x\x0by\x0cz\x1c\x1d\x1e.") ==
        std::vector<std::string>{"x\x0b", "y\x0c", "z\x1c", "\x1d", "\x1e", "."});
  CHECK(python_splitlines("p\u2028q\u2029r\u0085s") ==
        std::vector<std::string>{"p\u2028", "q\u2029", "r\u0085", "s"});
  CHECK(python_splitlines("\n\n") == std::vector<std::string>{"\n", "\n"});
}

TEST_CASE("notebooks written by nbformat round-trip byte for byte", "[studio][ipynb]") {
  const auto files = ipynb_files(fixtures() / "written");
  REQUIRE(files.size() >= 4);
  for (const auto& file : files) {
    INFO(file.filename().string());
    const std::string original = rt::studio::test::read_bytes(file);
    const Notebook nb = read_ipynb(file);
    const std::string written = to_ipynb(nb);
    INFO(first_difference(written, original));
    CHECK(written == original);
  }
}

TEST_CASE("the sample notebooks round-trip byte for byte", "[studio][ipynb]") {
  const auto files = ipynb_files(rt::studio::test::samples_dir());
  REQUIRE(!files.empty());
  for (const auto& file : files) {
    INFO(file.filename().string());
    const std::string original = rt::studio::test::read_bytes(file);
    const std::string written = to_ipynb(read_ipynb(file));
    INFO(first_difference(written, original));
    CHECK(written == original);
  }
}

TEST_CASE("reading a notebook keeps what nbformat keeps", "[studio][ipynb]") {
  const Notebook nb = read_ipynb(fixtures() / "written" / "tricky.ipynb");
  REQUIRE(nb.cells.size() == 5);
  CHECK(nb.nbformat == 4);
  CHECK(nb.nbformat_minor == 5);
  CHECK(nb.cells[0].id == "intro-md");
  CHECK(nb.cells[0].type == CellType::markdown);
  REQUIRE(nb.cells[0].attachments.has_value());
  CHECK((*nb.cells[0].attachments)["pic.png"]["text/plain"] == "a\nb\n");  // joined in memory
  CHECK(nb.metadata["unknown_tool"]["anything"]["goes"][2].get<double>() == 2.0);
  CHECK(std::isnan(nb.metadata["non_finite"]["nan"].get<double>()));
  CHECK(std::isinf(nb.metadata["non_finite"]["ninf"].get<double>()));
  CHECK(nb.metadata["ints"][4].get<std::uint64_t>() == std::numeric_limits<std::uint64_t>::max());
  const Cell& code = nb.cells[1];
  CHECK(code.execution_count == 7);
  CHECK(code.source.find("last line no newline") != std::string::npos);
  REQUIRE(code.outputs.size() == 5);
  CHECK(output_kind(code.outputs[0]) == OutputKind::stream);
  CHECK(stream_text(code.outputs[0]) == "0\r1\r2\rdone\nsecond line\n");
  CHECK(mime_text(code.outputs[2], "text/html") == "<b>bold</b>\n<i>it</i>");
  CHECK(code.outputs[2]["data"]["application/json"]["a"][1] == 2.5);
  CHECK(output_kind(code.outputs[4]) == OutputKind::error);
  CHECK(strip_ansi_escapes(error_traceback_text(code.outputs[4])).find("ZeroDivisionError: division by zero") !=
        std::string::npos);
  CHECK(nb.cells[2].id == std::string(64, 'a'));
  CHECK(nb.cells[3].type == CellType::raw);
}

TEST_CASE("files nbformat did not write are read and written as nbformat would", "[studio][ipynb]") {
  for (const auto& file : ipynb_files(fixtures() / "foreign")) {
    INFO(file.filename().string());
    Notebook nb = read_ipynb(file);
    const std::string original = rt::studio::test::read_bytes(file);
    const bool upgraded = original.find("\"nbformat_minor\": 5") == std::string::npos;
    if (upgraded) {
      // nbformat makes up random ids on upgrade; compare with those replaced by the cell index.
      std::set<std::string> ids;
      for (const auto& cell : nb.cells) {
        CHECK(is_valid_cell_id(cell.id));
        CHECK(cell.id.size() == 8);
        ids.insert(cell.id);
      }
      CHECK(ids.size() == nb.cells.size());
      for (std::size_t i = 0; i < nb.cells.size(); ++i) nb.cells[i].id = "cell-" + std::to_string(i);
    }
    const std::string expected = rt::studio::test::read_bytes(fixtures() / "expected" / file.filename());
    const std::string written = to_ipynb(nb);
    INFO(first_difference(written, expected));
    CHECK(written == expected);
  }
}

TEST_CASE("upgrading 4.0 and 4.4 notebooks gives 4.5 with fresh ids and drops transient metadata",
          "[studio][ipynb]") {
  const Notebook nb = read_ipynb(fixtures() / "foreign" / "v4_0.ipynb");
  CHECK(nb.nbformat_minor == 5);
  CHECK(!nb.metadata.contains("orig_nbformat"));
  CHECK(!nb.metadata.contains("signature"));
  CHECK(nb.metadata["kernelspec"]["name"] == "python3");
  REQUIRE(nb.cells.size() == 3);
  CHECK(nb.cells[1].source == "x = 1\nx + 1");
  CHECK(!nb.cells[1].metadata.contains("trusted"));
  CHECK(nb.cells[1].metadata["collapsed"] == true);
  CHECK(mime_text(nb.cells[1].outputs[1], "image/png") == "iVBOR\nw0KG\n");
  const Notebook again = read_ipynb(fixtures() / "foreign" / "v4_4.ipynb");
  CHECK(again.cells[0].id != nb.cells[0].id);  // random, like nbformat's
}

TEST_CASE("4.5 notebooks with missing, invalid or duplicate ids get fresh unique ones", "[studio][ipynb]") {
  const std::string text = R"({"cells": [
    {"cell_type": "code", "id": "same", "metadata": {}, "source": "", "outputs": [], "execution_count": null},
    {"cell_type": "code", "id": "same", "metadata": {}, "source": "", "outputs": [], "execution_count": null},
    {"cell_type": "markdown", "metadata": {}, "source": "no id"},
    {"cell_type": "markdown", "id": "has space", "metadata": {}, "source": ""}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5})";
  const Notebook nb = parse_ipynb(text, "ids.ipynb");
  CHECK(nb.cells[0].id == "same");
  std::set<std::string> ids;
  for (const auto& c : nb.cells) {
    CHECK(is_valid_cell_id(c.id));
    ids.insert(c.id);
  }
  CHECK(ids.size() == 4);
}

TEST_CASE("unknown fields at every level survive a round trip", "[studio][ipynb]") {
  const std::string text = R"({"cells": [{"cell_type": "code", "id": "c1", "metadata": {"x-tool": {"deep": [1.0, 1e-07]}},
    "source": ["a\n", "b"], "outputs": [{"output_type": "future_kind", "payload": {"k": [1, 2]}},
    {"output_type": "stream", "name": "stdout", "text": ["p\n"], "extra": 1}], "execution_count": 3, "x-cell": true},
    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "", "outputs": ["odd"]}],
    "metadata": {"vendor": {"a": null}}, "nbformat": 4, "nbformat_minor": 5, "x-top": [1]})";
  const Notebook nb = parse_ipynb(text);
  CHECK(nb.extra_fields["x-top"] == nlohmann::json::array({1}));
  CHECK(nb.cells[0].extra_fields["x-cell"] == true);
  CHECK(nb.cells[0].outputs[0]["payload"]["k"][1] == 2);
  CHECK(nb.cells[1].extra_fields["outputs"][0] == "odd");  // kept verbatim, not treated as outputs
  const Notebook again = parse_ipynb(to_ipynb(nb));
  CHECK(to_ipynb(again) == to_ipynb(nb));
  const std::string written = to_ipynb(nb);
  CHECK(written.find("\"x-top\": [\n  1\n ]") != std::string::npos);
  CHECK(written.find("\"future_kind\"") != std::string::npos);
  CHECK(written.find("1e-07") != std::string::npos);
}

TEST_CASE("notebooks we build and write pass nbformat.validate and equal nbformat.writes", "[studio][ipynb]") {
  const ScratchDir dir;
  std::vector<std::filesystem::path> files;

  Notebook built = Notebook::new_empty();
  built.cells.push_back(Cell::new_markdown(built, "# Built by rt_notebook\n\nUnicode: é 😀"));
  Cell code = Cell::new_code(built, "for i in range(3):\n    print(i)\n1 + 1");
  code.execution_count = 4;
  code.outputs.push_back(make_stream_output("stdout", "0\n1\n2\n"));
  code.outputs.push_back(make_stream_output("stderr", "careful\n"));
  code.outputs.push_back(make_execute_result(4, {{"text/plain", "2"}}));
  code.outputs.push_back(make_display_data({{"image/png", "iVBORw0KGgo="}, {"text/plain", "<Figure>"}},
                                           {{"image/png", {{"width", 10}}}}));
  code.outputs.push_back(make_error_output("ValueError", "bad", {"Traceback (most recent call last):", "ValueError: bad"}));
  built.cells.push_back(code);
  built.cells.push_back(Cell::new_code(built));
  built.cells.push_back(Cell::new_raw(built, "raw\n"));
  built.metadata["rustytorch"] = {{"lr", 0.001}, {"big", 1e300}, {"steps", 10}};
  files.push_back(dir / "built.ipynb");
  write_ipynb(files.back(), built);

  files.push_back(dir / "empty.ipynb");
  write_ipynb(files.back(), Notebook::new_empty());

  for (const auto& fixture : ipynb_files(fixtures() / "foreign")) {  // upgraded ones
    files.push_back(dir / ("reread-" + fixture.filename().string()));
    write_ipynb(files.back(), read_ipynb(fixture));
  }
  for (const auto& sample : ipynb_files(rt::studio::test::samples_dir())) {
    files.push_back(dir / ("sample-" + sample.filename().string()));
    write_ipynb(files.back(), read_ipynb(sample));
  }

  std::string args = (rt::studio::test::test_source_dir() / "nbformat_check.py").string();
  for (const auto& f : files) args.append(" ").append(f.string());
  std::string output;
  const int rc = rt::studio::test::run_python(args, output);
  INFO(output);
  CHECK(rc == 0);
  CHECK(output.find("0 failed") != std::string::npos);
}
