// Bad input and bad places to write: every case gives a clear exception and damages nothing.
#include "notebook/ipynb.h"
#include "notebook_test_support.h"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace rt::studio;
using rt::studio::test::ScratchDir;

namespace {

NotebookFormatError format_error_of(const std::string& text, const std::string& name = "bad.ipynb") {
  try {
    parse_ipynb(text, name);
  } catch (const NotebookFormatError& e) {
    return e;
  }
  FAIL("parse_ipynb accepted: " << text);
  throw std::logic_error("unreachable");
}

const char* kGood = R"({"cells": [{"cell_type": "code", "id": "a1", "metadata": {}, "source": "x", "outputs": [],
  "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})";

}  // namespace

TEST_CASE("empty, non-JSON and truncated files are refused with the place and a fix", "[studio][ipynb]") {
  auto e = format_error_of("");
  CHECK(std::string(e.what()).starts_with("bad.ipynb: "));
  CHECK(e.problem() == "the file is empty");

  e = format_error_of("   \n\t ");
  CHECK(e.problem() == "the file is empty");

  e = format_error_of("print('hello')\n", "script.py");
  CHECK(std::string(e.what()).starts_with("script.py: "));
  CHECK(e.problem().find("not JSON") != std::string::npos);
  CHECK(!e.fix().empty());

  const std::string good = kGood;
  e = format_error_of(good.substr(0, good.size() / 2));
  CHECK(e.problem().find("truncated") != std::string::npos);
  CHECK(e.location().find("byte") != std::string::npos);
  CHECK(e.fix().find("autosaved") != std::string::npos);

  e = format_error_of("{\"cells\": [}\n");
  CHECK(e.problem().find("not valid JSON") != std::string::npos);
  CHECK(e.location() == "byte 11 (line 1, column 12)");

  e = format_error_of("{\n \"a\": 1,\n \"b\": tru\n}");
  CHECK(e.location().find("line 3") != std::string::npos);
}

TEST_CASE("binary and non-UTF-8 files are refused", "[studio][ipynb]") {
  auto e = format_error_of(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), "image.png");
  CHECK(e.problem().find("not UTF-8") != std::string::npos);
  CHECK(e.location().find("byte 0") != std::string::npos);
  e = format_error_of("{\"cells\": [], \"metadata\": {\"k\": \"caf\xe9\"}, \"nbformat\": 4}");
  CHECK(e.problem().find("0xe9") != std::string::npos);
  CHECK(e.location().find("byte 36 (line 1, column 37)") != std::string::npos);
}

TEST_CASE("JSON that is not a notebook is refused", "[studio][ipynb]") {
  CHECK(format_error_of("[1, 2]").problem().find("not a notebook") != std::string::npos);
  CHECK(format_error_of("\"text\"").problem().find("not a notebook") != std::string::npos);
  CHECK(format_error_of(R"({"name": "package.json", "version": "1.0"})").problem().find("no \"nbformat\"") !=
        std::string::npos);
  CHECK(format_error_of(R"({"nbformat": 4, "nbformat_minor": 5, "metadata": {}})").problem().find("no \"cells\"") !=
        std::string::npos);
}

TEST_CASE("other nbformat versions are refused with the conversion to run", "[studio][ipynb]") {
  auto e = format_error_of(R"({"metadata": {"name": ""}, "nbformat": 3, "nbformat_minor": 0, "worksheets": []})");
  CHECK(e.problem().find("nbformat 3") != std::string::npos);
  CHECK(e.fix().find("jupyter nbconvert --to notebook --nbformat 4") != std::string::npos);
  e = format_error_of(R"({"cells": [], "metadata": {}, "nbformat": 5, "nbformat_minor": 0})");
  CHECK(e.problem().find("nbformat 5") != std::string::npos);
  e = format_error_of(R"({"cells": [], "metadata": {}, "nbformat": "4", "nbformat_minor": 0})");
  CHECK(e.location() == "nbformat");
}

TEST_CASE("wrong-typed fields are named by their JSON path", "[studio][ipynb]") {
  const auto path_of = [](const std::string& cells) {
    return format_error_of(R"({"metadata": {}, "nbformat": 4, "nbformat_minor": 5, "cells": )" + cells + "}")
        .location();
  };
  CHECK(path_of("{}") == "cells");
  CHECK(path_of("[1]") == "cells[0]");
  CHECK(path_of(R"([{"id": "a", "metadata": {}, "source": ""}])") == "cells[0]");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": {}, "source": 5}])") == "cells[0].source");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": {}, "source": ["ok", 3]}])") == "cells[0].source[1]");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": [], "source": ""}])") == "cells[0].metadata");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": {}, "source": "", "outputs": [5]}])") ==
        "cells[0].outputs[0]");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": {}, "source": "", "outputs": [{"text": "x"}]}])") ==
        "cells[0].outputs[0]");
  CHECK(path_of(R"([{"cell_type": "code", "id": "a", "metadata": {}, "source": "", "execution_count": "1"}])") ==
        "cells[0].execution_count");
  CHECK(path_of(R"([{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "", "attachments": 1}])") ==
        "cells[0].attachments");
  auto heading = format_error_of(R"({"metadata": {}, "nbformat": 4, "nbformat_minor": 5,
      "cells": [{"cell_type": "heading", "metadata": {}, "source": "", "level": 1}]})");
  CHECK(heading.location() == "cells[0].cell_type");
  CHECK(heading.fix().find("nbconvert") != std::string::npos);
}

TEST_CASE("read_ipynb reports missing files and folders", "[studio][ipynb]") {
  const ScratchDir dir;
  CHECK_THROWS_MATCHES(read_ipynb(dir / "nope.ipynb"), NotebookFileError,
                       Catch::Matchers::Predicate<NotebookFileError>([](const NotebookFileError& e) {
                         const std::string what = e.what();
                         return what.find("nope.ipynb") != std::string::npos &&
                                what.find("No such file") != std::string::npos;
                       }));
  CHECK_THROWS_AS(read_ipynb(dir.path()), NotebookFileError);
  rt::studio::test::write_bytes(dir / "t.ipynb", "{\"cells\": [");
  CHECK_THROWS_AS(read_ipynb(dir / "t.ipynb"), NotebookFormatError);
}

TEST_CASE("write_ipynb replaces files atomically and leaves no temporaries", "[studio][ipynb]") {
  const ScratchDir dir;
  const auto path = dir / "nb.ipynb";
  Notebook nb = parse_ipynb(kGood);
  write_ipynb(path, nb);
  const std::string first = rt::studio::test::read_bytes(path);
  CHECK(first == to_ipynb(nb));
  std::filesystem::permissions(path, std::filesystem::perms(0640));
  nb.cells[0].source = "y = 2";
  write_ipynb(path, nb);
  CHECK(read_ipynb(path).cells[0].source == "y = 2");
  CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) == std::filesystem::perms(0640));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);

  // Through a symlink: the link stays and its target changes.
  std::filesystem::create_symlink(path, dir / "link.ipynb");
  nb.cells[0].source = "z = 3";
  write_ipynb(dir / "link.ipynb", nb);
  CHECK(std::filesystem::is_symlink(dir / "link.ipynb"));
  CHECK(read_ipynb(path).cells[0].source == "z = 3");
}

TEST_CASE("saving where it cannot write gives a clear error and damages nothing", "[studio][ipynb]") {
  const ScratchDir dir;
  const Notebook nb = parse_ipynb(kGood);

  SECTION("missing folder") {
    try {
      write_ipynb(dir / "no" / "such" / "nb.ipynb", nb);
      FAIL("no error");
    } catch (const NotebookFileError& e) {
      CHECK(std::string(e.what()).find("does not exist") != std::string::npos);
      CHECK(std::string(e.what()).find("Save As") != std::string::npos);
    }
  }
  SECTION("a file where the folder should be") {
    rt::studio::test::write_bytes(dir / "plain", "x");
    CHECK_THROWS_AS(write_ipynb(dir / "plain" / "nb.ipynb", nb), NotebookFileError);
  }
  SECTION("a folder with the notebook's name") {
    std::filesystem::create_directory(dir / "taken.ipynb");
    CHECK_THROWS_WITH(write_ipynb(dir / "taken.ipynb", nb), Catch::Contains("folder"));
  }
  SECTION("read-only folder keeps the existing file") {
    const auto path = dir / "keep.ipynb";
    write_ipynb(path, nb);
    const std::string before = rt::studio::test::read_bytes(path);
    if (::geteuid() == 0) {
      // root ignores permissions; /proc refuses new files for everyone.
      CHECK_THROWS_WITH(write_ipynb("/proc/rt-test.ipynb", nb), Catch::Contains("cannot save"));
    } else {
      std::filesystem::permissions(dir.path(), std::filesystem::perms(0500));
      Notebook changed = nb;
      changed.cells[0].source = "changed";
      CHECK_THROWS_WITH(write_ipynb(path, changed), Catch::Contains("Permission denied"));
      std::filesystem::permissions(dir.path(), std::filesystem::perms(0700));
    }
    CHECK(rt::studio::test::read_bytes(path) == before);
  }
  SECTION("text that cannot be written keeps the existing file") {
    const auto path = dir / "keep.ipynb";
    write_ipynb(path, nb);
    const std::string before = rt::studio::test::read_bytes(path);
    Notebook bad = nb;
    bad.cells[0].source = "bad byte \xff";
    CHECK_THROWS_WITH(write_ipynb(path, bad), Catch::Contains("UTF-8") && Catch::Contains("cells[0].source"));
    CHECK(rt::studio::test::read_bytes(path) == before);
    Notebook markdown_with_outputs = nb;
    markdown_with_outputs.cells[0].type = CellType::markdown;
    markdown_with_outputs.cells[0].outputs.push_back({{"output_type", "stream"}});
    CHECK_THROWS_AS(write_ipynb(path, markdown_with_outputs), NotebookFileError);
    CHECK(rt::studio::test::read_bytes(path) == before);
  }
}
