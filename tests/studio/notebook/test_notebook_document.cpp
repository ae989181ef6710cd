// NotebookDocument: structural edits, undo/redo, change notifications, dirty state and saving.
#include "notebook/ipynb.h"
#include "notebook/notebook_document.h"
#include "notebook/outputs.h"
#include "notebook_test_support.h"

#include <catch2/catch.hpp>

#include <set>

using namespace rt::studio;
using rt::studio::test::ScratchDir;

namespace {

NotebookDocument three_cells() {
  Notebook nb = Notebook::new_empty();
  nb.cells.push_back(Cell::new_code(nb, "a = 1"));
  nb.cells.push_back(Cell::new_markdown(nb, "# b"));
  nb.cells.push_back(Cell::new_code(nb, "c = 3"));
  nb.cells[2].outputs.push_back(make_stream_output("stdout", "c\n"));
  nb.cells[2].execution_count = 5;
  return NotebookDocument(std::move(nb));
}

std::vector<std::string> sources(const NotebookDocument& doc) {
  std::vector<std::string> out;
  for (const auto& c : doc.notebook().cells) out.push_back(c.source);
  return out;
}

std::vector<std::string> ids(const NotebookDocument& doc) {
  std::vector<std::string> out;
  for (const auto& c : doc.notebook().cells) out.push_back(c.id);
  return out;
}

}  // namespace

TEST_CASE("a new document is one empty code cell, untitled and clean", "[studio][document]") {
  NotebookDocument doc;
  REQUIRE(doc.cell_count() == 1);
  CHECK(doc.cell(0).is_code());
  CHECK(doc.is_untitled());
  CHECK(doc.display_name() == "Untitled");
  CHECK(!doc.is_dirty());
  CHECK(!doc.can_undo());
  CHECK_THROWS_AS(doc.save(), std::logic_error);
}

TEST_CASE("insert, delete and undo restore cells with their ids", "[studio][document]") {
  NotebookDocument doc = three_cells();
  const auto original_ids = ids(doc);
  const std::size_t at = doc.insert_cell(1, CellType::code, "new");
  CHECK(at == 1);
  CHECK(sources(doc) == std::vector<std::string>{"a = 1", "new", "# b", "c = 3"});
  const auto after_insert = ids(doc);
  CHECK(std::set<std::string>(after_insert.begin(), after_insert.end()).size() == 4);
  CHECK(doc.is_dirty());

  const std::size_t select = doc.delete_cells({2, 0});
  CHECK(sources(doc) == std::vector<std::string>{"new", "c = 3"});
  CHECK(select == 0);
  CHECK(doc.undo() == 0u);  // Z: the deleted cells come back where they were
  CHECK(sources(doc) == std::vector<std::string>{"a = 1", "new", "# b", "c = 3"});
  CHECK(doc.cell(0).id == original_ids[0]);
  CHECK(doc.cell(2).id == original_ids[1]);
  CHECK(doc.undo().has_value());  // the insertion
  CHECK(ids(doc) == original_ids);
  CHECK(!doc.undo().has_value());
  CHECK(doc.redo().has_value());
  CHECK(doc.redo().has_value());
  CHECK(sources(doc) == std::vector<std::string>{"new", "c = 3"});
  CHECK(!doc.can_redo());
  CHECK_THROWS_AS(doc.insert_cell(9, CellType::code), std::out_of_range);
  CHECK_THROWS_AS(doc.delete_cells({7}), std::out_of_range);
  CHECK(doc.cell_count() == 2);  // nothing changed by the failed edits
}

TEST_CASE("deleting every cell leaves one empty code cell, and undo brings all back", "[studio][document]") {
  NotebookDocument doc = three_cells();
  const auto before = ids(doc);
  doc.delete_cells({0, 1, 2});
  REQUIRE(doc.cell_count() == 1);
  CHECK(doc.cell(0).source.empty());
  CHECK(doc.cell(0).is_code());
  doc.undo();
  CHECK(ids(doc) == before);
  CHECK(doc.cell(2).outputs.size() == 1);
}

TEST_CASE("moves keep ids and undo moves back", "[studio][document]") {
  NotebookDocument doc = three_cells();
  const auto before = ids(doc);
  CHECK(doc.move_cells_down(0) == 1);
  CHECK(ids(doc) == std::vector<std::string>{before[1], before[0], before[2]});
  CHECK(doc.move_cells_up(1, 2) == 0);  // block [1,3) up
  CHECK(ids(doc) == std::vector<std::string>{before[0], before[2], before[1]});
  CHECK(doc.move_cells_up(0) == 0);  // at the top: nothing
  CHECK(doc.move_cells_down(2) == 2);
  CHECK(doc.move_cell(2, 0) == 0);
  CHECK(ids(doc) == std::vector<std::string>{before[1], before[0], before[2]});
  doc.undo();
  doc.undo();
  doc.undo();
  CHECK(ids(doc) == before);
}

TEST_CASE("split at the cursor trims newlines, the second part keeps outputs", "[studio][document]") {
  NotebookDocument doc = three_cells();
  doc.set_source(2, "x = 1\n\ny = 2\n");
  const std::string id = doc.cell(2).id;
  const std::size_t second = doc.split_cell(2, 6);  // after "x = 1\n"
  CHECK(second == 3);
  CHECK(doc.cell(2).source == "x = 1");
  CHECK(doc.cell(3).source == "y = 2");
  CHECK(doc.cell(2).id == id);
  CHECK(doc.cell(3).id != id);
  CHECK(doc.cell(2).outputs.empty());
  CHECK(doc.cell(3).outputs.size() == 1);
  CHECK(doc.cell(3).execution_count == 5);
  doc.set_source(1, "é");
  doc.split_cell(1, 1);  // inside the 2-byte character: moved back to its start
  CHECK(doc.cell(1).source.empty());
  CHECK(doc.cell(2).source == "é");
  doc.undo();
  doc.undo();
  CHECK(doc.cell_count() == 3);
  CHECK(doc.cell(2).source == "x = 1\n\ny = 2\n");
  CHECK(doc.cell(2).outputs.size() == 1);
}

TEST_CASE("merge joins sources with a blank line and undo/redo keep later typing", "[studio][document]") {
  NotebookDocument doc = three_cells();
  const auto before = ids(doc);
  CHECK(doc.merge_cells(0, 3) == 0);
  REQUIRE(doc.cell_count() == 1);
  CHECK(doc.cell(0).source == "a = 1\n\n# b\n\nc = 3");
  CHECK(doc.cell(0).id == before[0]);
  CHECK(doc.cell(0).outputs.size() == 1);  // code outputs concatenated
  CHECK(!doc.cell(0).execution_count);
  doc.set_source(0, "typed after merge");
  doc.undo();
  CHECK(ids(doc) == before);
  CHECK(sources(doc) == std::vector<std::string>{"a = 1", "# b", "c = 3"});
  doc.redo();
  CHECK(doc.cell(0).source == "typed after merge");
  CHECK_THROWS_AS(doc.merge_cells(0, 1), std::invalid_argument);
}

TEST_CASE("changing type drops outputs and undo gives them back", "[studio][document]") {
  NotebookDocument doc = three_cells();
  CHECK(doc.change_cell_type({2, 1}, CellType::markdown) == 1);
  CHECK(doc.cell(2).type == CellType::markdown);
  CHECK(doc.cell(2).outputs.empty());
  CHECK(!doc.cell(2).execution_count);
  CHECK_NOTHROW(to_ipynb(doc.notebook()));  // a markdown cell without outputs is writable
  doc.set_source(2, "edited as markdown");
  doc.undo();
  CHECK(doc.cell(2).type == CellType::code);
  CHECK(doc.cell(2).outputs.size() == 1);
  CHECK(doc.cell(2).execution_count == 5);
  CHECK(doc.cell(2).source == "edited as markdown");  // type changes never revert text
  const auto revision = doc.revision();
  doc.change_cell_type({0}, CellType::code);  // already code: no change, no history
  CHECK(doc.revision() == revision);
}

TEST_CASE("copy and paste give fresh ids", "[studio][document]") {
  NotebookDocument doc = three_cells();
  const auto clipboard = doc.copy_cells({2, 0});
  REQUIRE(clipboard.size() == 2);
  CHECK(clipboard[0].source == "a = 1");
  CHECK(doc.paste_cells(3, clipboard) == 3);
  CHECK(sources(doc) == std::vector<std::string>{"a = 1", "# b", "c = 3", "a = 1", "c = 3"});
  const auto all = ids(doc);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == 5);
  doc.paste_cells(0, clipboard);  // pasting twice still never duplicates an id
  const auto again = ids(doc);
  CHECK(std::set<std::string>(again.begin(), again.end()).size() == 7);
  doc.undo();
  doc.undo();
  CHECK(doc.cell_count() == 3);
}

TEST_CASE("clear outputs is one undoable step", "[studio][document]") {
  NotebookDocument doc = three_cells();
  doc.clear_outputs();
  CHECK(doc.cell(2).outputs.empty());
  CHECK(!doc.cell(2).execution_count);
  doc.undo();
  CHECK(doc.cell(2).outputs.size() == 1);
  const auto revision = doc.revision();
  doc.clear_outputs({0, 1});  // nothing to clear
  CHECK(doc.revision() == revision);
}

TEST_CASE("listeners hear every change with the affected range", "[studio][document]") {
  NotebookDocument doc = three_cells();
  std::vector<DocumentChange> heard;
  const int token = doc.add_listener([&](const DocumentChange& c) {
    heard.push_back(c);
    CHECK(doc.cell_count() > 0);  // called after the change, with the document consistent
  });
  doc.insert_cell(3, CellType::raw);
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].kind == DocumentChange::Kind::cells_replaced);
  CHECK(heard[0].index == 3);
  CHECK(heard[0].removed == 0);
  CHECK(heard[0].inserted == 1);
  doc.merge_cells(0, 2);
  CHECK(heard.back().kind == DocumentChange::Kind::cells_replaced);
  CHECK(heard.back().removed == 2);
  CHECK(heard.back().inserted == 1);
  doc.move_cell(0, 2);
  CHECK(heard.back().kind == DocumentChange::Kind::cell_moved);
  CHECK(heard.back().to_index == 2);
  doc.set_source(0, "s");
  CHECK(heard.back().kind == DocumentChange::Kind::source);
  doc.edit_outputs(0, [](std::vector<nlohmann::json>& outputs) { outputs.push_back(make_stream_output("stdout", "x")); });
  CHECK(heard.back().kind == DocumentChange::Kind::outputs);
  CHECK(doc.cell(0).outputs.size() == 2);
  const std::size_t count = heard.size();
  doc.remove_listener(token);
  doc.set_source(0, "t");
  CHECK(heard.size() == count);
  REQUIRE(doc.cell(1).type == CellType::raw);
  CHECK_THROWS_AS(doc.set_outputs(1, {}, 1), std::invalid_argument);  // a raw cell has no outputs
}

TEST_CASE("dirty state follows edits and saves, failed saves change nothing", "[studio][document]") {
  const ScratchDir dir;
  NotebookDocument doc = three_cells();
  doc.save_as(dir / "nb.ipynb");
  CHECK(!doc.is_dirty());
  CHECK(doc.path() == dir / "nb.ipynb");
  CHECK(doc.display_name() == "nb.ipynb");
  CHECK(!doc.changed_on_disk());

  doc.set_source(0, "changed");
  CHECK(doc.is_dirty());
  CHECK_THROWS_AS(doc.save_as(dir / "missing" / "x.ipynb"), NotebookFileError);
  CHECK(doc.is_dirty());
  CHECK(doc.path() == dir / "nb.ipynb");
  doc.insert_cell(3, CellType::code, "structural");
  doc.save();
  CHECK(!doc.is_dirty());

  NotebookDocument reopened = NotebookDocument::open(dir / "nb.ipynb");
  CHECK(reopened.cell(0).source == "changed");
  CHECK(!reopened.is_dirty());
  CHECK(reopened.notebook().cells[0].id == doc.notebook().cells[0].id);  // ids are stable across saves

  rt::studio::test::write_bytes(dir / "nb.ipynb", to_ipynb(Notebook::new_empty()));
  CHECK(doc.changed_on_disk());  // someone else wrote it
  REQUIRE(doc.undo().has_value());  // undoing the insertion after the save makes it dirty again
  CHECK(doc.is_dirty());
}
