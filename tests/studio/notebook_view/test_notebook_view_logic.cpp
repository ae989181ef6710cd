// The notebook view's plain logic: keymap and chords, execution queue, run-time text, ANSI colours, text tail
// edits, traceback line lookup, kernel mime data, collapsed-output metadata.
#include "notebook_view/ansi_text.h"
#include "notebook_view/cell_widget.h"
#include "notebook_view/code_editor.h"
#include "notebook_view/command_mode_keymap.h"
#include "notebook_view/execution_queue.h"
#include "notebook_view/notebook_execution.h"
#include "notebook_view/output_text_view.h"
#include "runner/cell_output_builder.h"

#include <catch2/catch.hpp>

using namespace rt::studio;
using namespace std::chrono_literals;
using Outcome = CommandModeKeymap::Outcome;

namespace {

CommandModeKeymap::Result press(CommandModeKeymap& keymap, EditorMode mode, Qt::Key key,
                                Qt::KeyboardModifiers modifiers = Qt::NoModifier,
                                CommandModeKeymap::Clock::time_point at = CommandModeKeymap::Clock::now()) {
  return keymap.press(mode, QKeyCombination(modifiers, key), at);
}

bool matches(const CommandModeKeymap::Result& r, CellCommand command) {
  return r.outcome == Outcome::Matched && r.command == command;
}

}  // namespace

TEST_CASE("command mode single keys map to Jupyter's commands", "[studio][keymap]") {
  CommandModeKeymap keymap;
  const auto cmd = EditorMode::Command;
  CHECK(matches(press(keymap, cmd, Qt::Key_A), CellCommand::InsertAbove));
  CHECK(matches(press(keymap, cmd, Qt::Key_B), CellCommand::InsertBelow));
  CHECK(matches(press(keymap, cmd, Qt::Key_M), CellCommand::ToMarkdown));
  CHECK(matches(press(keymap, cmd, Qt::Key_Y), CellCommand::ToCode));
  CHECK(matches(press(keymap, cmd, Qt::Key_R), CellCommand::ToRaw));
  CHECK(matches(press(keymap, cmd, Qt::Key_Z), CellCommand::Undo));
  CHECK(matches(press(keymap, cmd, Qt::Key_Z, Qt::ShiftModifier), CellCommand::Redo));
  CHECK(matches(press(keymap, cmd, Qt::Key_M, Qt::ShiftModifier), CellCommand::MergeSelected));
  CHECK(matches(press(keymap, cmd, Qt::Key_Up), CellCommand::SelectPrevious));
  CHECK(matches(press(keymap, cmd, Qt::Key_K), CellCommand::SelectPrevious));
  CHECK(matches(press(keymap, cmd, Qt::Key_J), CellCommand::SelectNext));
  CHECK(matches(press(keymap, cmd, Qt::Key_Down, Qt::ShiftModifier), CellCommand::ExtendSelectionDown));
  CHECK(matches(press(keymap, cmd, Qt::Key_C), CellCommand::Copy));
  CHECK(matches(press(keymap, cmd, Qt::Key_X), CellCommand::Cut));
  CHECK(matches(press(keymap, cmd, Qt::Key_V), CellCommand::PasteBelow));
  CHECK(matches(press(keymap, cmd, Qt::Key_Return), CellCommand::EnterEditMode));
  CHECK(matches(press(keymap, cmd, Qt::Key_Enter, Qt::KeypadModifier), CellCommand::EnterEditMode));
  CHECK(press(keymap, cmd, Qt::Key_Q).outcome == Outcome::NotHandled);
}

TEST_CASE("run keys work in both modes, edit mode leaves other keys to the editor", "[studio][keymap]") {
  CommandModeKeymap keymap;
  for (EditorMode mode : {EditorMode::Command, EditorMode::Edit}) {
    CHECK(matches(press(keymap, mode, Qt::Key_Return, Qt::ShiftModifier), CellCommand::RunAndSelectNext));
    CHECK(matches(press(keymap, mode, Qt::Key_Return, Qt::ControlModifier), CellCommand::RunInPlace));
    CHECK(matches(press(keymap, mode, Qt::Key_Return, Qt::AltModifier), CellCommand::RunAndInsertBelow));
  }
  CHECK(press(keymap, EditorMode::Edit, Qt::Key_A).outcome == Outcome::NotHandled);
  CHECK(press(keymap, EditorMode::Edit, Qt::Key_D).outcome == Outcome::NotHandled);
  CHECK(press(keymap, EditorMode::Edit, Qt::Key_Return).outcome == Outcome::NotHandled);  // a newline
  CHECK(matches(press(keymap, EditorMode::Edit, Qt::Key_Escape), CellCommand::EnterCommandMode));
  CHECK(matches(press(keymap, EditorMode::Edit, Qt::Key_Minus, Qt::ControlModifier | Qt::ShiftModifier),
                CellCommand::SplitAtCursor));
  // Shift+'-' arrives as '_' on a US keyboard.
  CHECK(matches(press(keymap, EditorMode::Edit, Qt::Key_Underscore, Qt::ControlModifier | Qt::ShiftModifier),
                CellCommand::SplitAtCursor));
}

TEST_CASE("chords: D,D deletes, I,I interrupts, 0,0 restarts, other keys and timeouts cancel", "[studio][keymap]") {
  CommandModeKeymap keymap;
  const auto cmd = EditorMode::Command;
  const auto t0 = CommandModeKeymap::Clock::now();
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(keymap.chord_pending());
  CHECK(matches(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0 + 200ms), CellCommand::DeleteSelected));
  CHECK_FALSE(keymap.chord_pending());

  CHECK(press(keymap, cmd, Qt::Key_I, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(matches(press(keymap, cmd, Qt::Key_I, Qt::NoModifier, t0 + 100ms), CellCommand::Interrupt));
  CHECK(press(keymap, cmd, Qt::Key_0, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(matches(press(keymap, cmd, Qt::Key_0, Qt::NoModifier, t0 + 100ms), CellCommand::Restart));

  // D then A: the chord is cancelled and A acts on its own.
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(matches(press(keymap, cmd, Qt::Key_A, Qt::NoModifier, t0 + 100ms), CellCommand::InsertAbove));
  // D, (too late) D: the second D starts a new chord instead of deleting.
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0 + CommandModeKeymap::kChordTimeout + 1ms).outcome ==
        Outcome::Pending);
  // I then D: neither interrupt nor delete yet.
  keymap.reset();
  CHECK(press(keymap, cmd, Qt::Key_I, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0 + 10ms).outcome == Outcome::Pending);
  CHECK(matches(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0 + 20ms), CellCommand::DeleteSelected));
  // A chord never completes across a mode change.
  CHECK(press(keymap, cmd, Qt::Key_D, Qt::NoModifier, t0).outcome == Outcome::Pending);
  CHECK(press(keymap, EditorMode::Edit, Qt::Key_D, Qt::NoModifier, t0 + 10ms).outcome == Outcome::NotHandled);
}

TEST_CASE("would_handle answers without consuming chords", "[studio][keymap]") {
  CommandModeKeymap keymap;
  const auto t0 = CommandModeKeymap::Clock::now();
  CHECK(keymap.would_handle(EditorMode::Command, QKeyCombination(Qt::Key_D), t0));
  CHECK_FALSE(keymap.chord_pending());
  CHECK_FALSE(keymap.would_handle(EditorMode::Edit, QKeyCombination(Qt::Key_D), t0));
  CHECK(keymap.would_handle(EditorMode::Edit, QKeyCombination(Qt::ShiftModifier, Qt::Key_Return), t0));
  CHECK_FALSE(keymap.would_handle(EditorMode::Command, QKeyCombination(Qt::ControlModifier, Qt::Key_S), t0));
}

TEST_CASE("shortcut texts for menus", "[studio][keymap]") {
  CommandModeKeymap keymap;
  CHECK(keymap.shortcut_text(CellCommand::DeleteSelected) == QStringLiteral("D, D"));
  CHECK(keymap.shortcut_text(CellCommand::RunAndSelectNext) == QStringLiteral("Shift+Enter"));
  CHECK(keymap.shortcut_text(CellCommand::ClearOutputs).isEmpty());
  CHECK(cell_command_title(CellCommand::DeleteSelected) == QStringLiteral("Delete selected cells"));
}

TEST_CASE("execution queue: one request in flight, FIFO, routing by cell id", "[studio][queue]") {
  ExecutionQueue q;
  const auto t0 = ExecutionQueue::Clock::now();
  q.enqueue("a", t0);
  q.enqueue("b", t0);
  q.enqueue("a", t0);  // the same cell twice
  REQUIRE(q.next_to_submit() != nullptr);
  CHECK(q.next_to_submit()->cell_id == "a");
  q.mark_submitted(11);
  CHECK(q.next_to_submit() == nullptr);  // one at a time
  CHECK_THROWS_AS(q.mark_submitted(12), std::logic_error);
  CHECK(q.state_of_cell("a") == ExecutionQueue::State::Submitted);
  CHECK(q.state_of_cell("b") == ExecutionQueue::State::Waiting);
  CHECK_FALSE(q.state_of_cell("zzz").has_value());
  CHECK(q.mark_started(11, t0 + 1s) == std::optional<std::string>("a"));
  CHECK(q.cell_for(11) == std::optional<std::string>("a"));
  CHECK(q.state_of_cell("a") == ExecutionQueue::State::Running);
  const auto done = q.finish(11, t0 + 3s);
  REQUIRE(done);
  CHECK(done->cell_id == "a");
  CHECK(done->run_time.count() == Approx(2.0));
  CHECK_FALSE(q.finish(11, t0).has_value());  // late duplicate
  CHECK(q.next_to_submit()->cell_id == "b");
  q.mark_submitted(12);
  CHECK_THROWS_AS(q.mark_submitted(12), std::logic_error);
  // Aborted before it started: run time zero.
  const auto aborted = q.finish(12, t0 + 5s);
  REQUIRE(aborted);
  CHECK(aborted->run_time.count() == 0.0);
  CHECK(q.size() == 1);
  q.drop_next_to_submit();
  CHECK(q.empty());
}

TEST_CASE("execution queue: drop_waiting keeps the request in flight", "[studio][queue]") {
  ExecutionQueue q;
  const auto t0 = ExecutionQueue::Clock::now();
  for (const char* id : {"a", "b", "c"}) q.enqueue(id, t0);
  q.mark_submitted(1);
  q.mark_started(1, t0);
  const auto dropped = q.drop_waiting();
  CHECK(dropped == std::vector<std::string>{"b", "c"});
  CHECK(q.size() == 1);
  REQUIRE(q.in_flight());
  CHECK(q.in_flight()->cell_id == "a");
  CHECK(q.take_all().size() == 1);
  CHECK(q.empty());
  CHECK_FALSE(q.mark_started(1, t0).has_value());
}

TEST_CASE("run times read like JupyterLab's", "[studio][queue]") {
  using D = std::chrono::duration<double>;
  CHECK(format_run_time(D(0.0004)) == "0.4 ms");
  CHECK(format_run_time(D(0.012)) == "12 ms");
  CHECK(format_run_time(D(0.9999)) == "1.0 s");
  CHECK(format_run_time(D(1.24)) == "1.2 s");
  CHECK(format_run_time(D(125)) == "2 min 5 s");
  CHECK(format_run_time(D(3 * 3600 + 120)) == "3 h 2 min");
  CHECK(format_run_time(D(-1)) == "0.0 ms");
}

TEST_CASE("ANSI colours become HTML spans, other escapes vanish", "[studio][ansi]") {
  CHECK(ansi_to_html("\x1b[0;31mZeroDivisionError\x1b[0m: division by zero") ==
        "<span style=\"color:#c91b00\">ZeroDivisionError</span>: division by zero");
  CHECK(ansi_to_html("a < b & \"c\"") == "a &lt; b &amp; &quot;c&quot;");
  CHECK(ansi_to_html("\x1b[1;32mok\x1b[22m!\x1b[39m") ==
        "<span style=\"color:#00a600;font-weight:bold\">ok</span><span style=\"color:#00a600\">!</span>");
  CHECK(ansi_to_html("\x1b[38;5;196mx") == "<span style=\"color:#ff0000\">x</span>");
  CHECK(ansi_to_html("\x1b[38;2;1;2;3mx") == "<span style=\"color:#010203\">x</span>");
  CHECK(ansi_to_html("\x1b[2K\x1b[1Gline\x1b]0;title\x07 end\x1b") == "line end");
  CHECK(ansi_to_html("caf\xc3\xa9\n") == "caf\xc3\xa9\n");
}

TEST_CASE("tail edits change only the end of the shown text", "[studio][output]") {
  auto e = tail_edit(QStringLiteral("epoch 1\n 10%"), QStringLiteral("epoch 1\n 20%|##"));
  CHECK(e.keep == 9);  // "epoch 1\n " is kept
  CHECK(e.insert == QStringLiteral("20%|##"));
  e = tail_edit(QStringLiteral("abc"), QStringLiteral("abcdef"));
  CHECK(e.keep == 3);
  CHECK(e.insert == QStringLiteral("def"));
  e = tail_edit(QStringLiteral("abcdef"), QStringLiteral("ab"));
  CHECK(e.keep == 2);
  CHECK(e.insert.isEmpty());
  // Two different emoji share a high surrogate: the edit must not keep half a character.
  e = tail_edit(QString::fromUtf8("x\xf0\x9f\x98\x80"), QString::fromUtf8("x\xf0\x9f\x98\x81"));
  CHECK(e.keep == 1);
}

TEST_CASE("traceback lines are found for the cell's own label", "[studio][execution]") {
  const std::vector<std::string> tb = {
      "Traceback (most recent call last):",
      "  File \"<cell 3>\", line 4, in <module>\n    f()",
      "  File \"<cell 2>\", line 2, in f\n    1/0",
      "  File \"<cell 3>\", line 7, in g",
      "ZeroDivisionError: division by zero"};
  CHECK(traceback_line_in_cell(tb, "3") == 7);  // the innermost frame in cell 3
  CHECK(traceback_line_in_cell(tb, "2") == 2);
  CHECK(traceback_line_in_cell(tb, "9") == 0);
}

TEST_CASE("kernel mime data becomes nbformat outputs", "[studio][execution]") {
  DisplayData data;
  data.data = {{"text/plain", "{'a': 1}"}, {"application/json", "{\"a\": 1}"},
               {"application/vnd.custom+json", "not json"}};
  data.metadata_json = "{\"isolated\": true}";
  const auto out = execute_result_output(4, data);
  CHECK(out["output_type"] == "execute_result");
  CHECK(out["execution_count"] == 4);
  CHECK(out["data"]["application/json"]["a"] == 1);
  CHECK(out["data"]["application/vnd.custom+json"] == "not json");
  CHECK(out["data"]["text/plain"] == "{'a': 1}");
  CHECK(out["metadata"]["isolated"] == true);
  data.metadata_json = "garbage";
  CHECK(display_data_output(data)["metadata"] == nlohmann::json::object());
  ExecutionError error;
  error.ename = "ValueError";
  error.evalue = "bad";
  error.traceback = {"line 1", "line 2"};
  const auto err = error_output(error);
  CHECK(err["output_type"] == "error");
  CHECK(err["traceback"].size() == 2);
}

TEST_CASE("collapsed outputs are read and written as JupyterLab does", "[studio][output]") {
  nlohmann::json md = {{"tags", {"x"}}};
  CHECK_FALSE(outputs_hidden(md));
  md = with_outputs_hidden(md, true);
  CHECK(md["collapsed"] == true);
  CHECK(md["jupyter"]["outputs_hidden"] == true);
  CHECK(outputs_hidden(md));
  md = with_outputs_hidden(md, false);
  CHECK(md == nlohmann::json({{"tags", {"x"}}}));
  CHECK(outputs_hidden(nlohmann::json({{"jupyter", {{"outputs_hidden", true}}}})));
  CHECK_FALSE(outputs_hidden(nlohmann::json::array()));
}

TEST_CASE("Python auto-indent follows blocks", "[studio][editor]") {
  CHECK(python_indent_after(QStringLiteral("for i in range(3):")) == 4);
  CHECK(python_indent_after(QStringLiteral("    if x:  # comment")) == 8);
  CHECK(python_indent_after(QStringLiteral("    x = 1")) == 4);
  CHECK(python_indent_after(QStringLiteral("        return x")) == 4);
  CHECK(python_indent_after(QStringLiteral("    pass")) == 0);
  CHECK(python_indent_after(QStringLiteral("    raise ValueError('x:')")) == 0);
  CHECK(python_indent_after(QStringLiteral("s = 'a:'")) == 0);             // ':' inside a string
  CHECK(python_indent_after(QStringLiteral("d = {1: 2}  # ends:")) == 0);  // ':' in a comment
  CHECK(python_indent_after(QStringLiteral("\tif y:")) == 8);
  CHECK(python_indent_after(QStringLiteral("returned = 1")) == 0);
}
