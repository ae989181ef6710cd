// NotebookView without a kernel (QtTest, offscreen): widgets follow the document, Jupyter's keys in command and
// edit mode make the right structural edits, markdown renders, outputs (streams with '\r', errors, images) draw.
#include "notebook_view_fixture.h"

#include "notebook/outputs.h"
#include "notebook/stream_accumulator.h"
#include "notebook_view/markdown_view.h"
#include "notebook_view/output_area.h"

#include <Qsci/qscilexer.h>

#include <QBuffer>
#include <QElapsedTimer>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QtTest>

using namespace rt::studio;
using namespace rt::studio::testing;

namespace {

Notebook threeCells() {
  return makeNotebook({{CellType::code, "x = 1"}, {CellType::markdown, "# Title\n\nSome *text*."},
                       {CellType::code, "print(x)"}});
}

std::string pngBase64(int w, int h) {
  QImage image(w, h, QImage::Format_RGB32);
  image.fill(Qt::red);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes.toBase64().toStdString();
}

}  // namespace

class NotebookViewWidgetsTest : public QObject {
  Q_OBJECT

 private slots:
  void opensNotebookWithOneWidgetPerCell() {
    ShownNotebook s(threeCells());
    QCOMPARE(s.view->cell_count(), 3);
    QCOMPARE(s.cell(0)->cell_type(), CellType::code);
    QCOMPARE(s.cell(0)->editor()->text(), QStringLiteral("x = 1"));
    QCOMPARE(s.cell(0)->prompt_text(), QStringLiteral("[ ]:"));
    QVERIFY(s.cell(1)->is_rendered());
    QVERIFY(s.cell(1)->markdown_view()->rendered_text().contains(QStringLiteral("Title")));
    QVERIFY(!s.cell(1)->markdown_view()->rendered_text().contains(QStringLiteral("#")));
    QCOMPARE(s.view->active_index(), 0);
    QCOMPARE(s.view->mode(), EditorMode::Command);
    QCOMPARE(s.cell(0)->highlight(), CellWidget::Highlight::ActiveCommand);
    QCOMPARE(s.cell(1)->highlight(), CellWidget::Highlight::None);
  }

  void codeEditorIsConfiguredForPython() {
    ShownNotebook s(makeNotebook({{CellType::code, ""}}));
    CodeEditor* e = s.cell(0)->editor();
    QVERIFY(e->lexer() != nullptr);
    QCOMPARE(QString::fromLatin1(e->lexer()->language()), QStringLiteral("Python"));
    QCOMPARE(e->indentationWidth(), 4);
    QVERIFY(!e->indentationsUseTabs());
    QCOMPARE(e->braceMatching(), QsciScintilla::SloppyBraceMatch);
    QVERIFY(e->marginLineNumbers(0));
    const int oneLine = e->height();
    s.key(Qt::Key_Return);  // edit mode
    QCOMPARE(s.view->mode(), EditorMode::Edit);
    s.typeText("for i in range(3):");
    s.editorKey(Qt::Key_Return);
    s.typeText("print(i)");
    // Auto-indent after ':' (4 spaces), and the text reached the model.
    QCOMPARE(QString::fromStdString(s.source(0)), QStringLiteral("for i in range(3):\n    print(i)"));
    QVERIFY(e->height() > oneLine);  // grows with its lines
    const int marginWidth = e->marginWidth(0);
    for (int i = 0; i < 12; ++i) s.editorKey(Qt::Key_Return);
    QCOMPARE(e->marginWidth(0), marginWidth);  // 14 lines: no sideways jump of the text
  }

  void commandModeKeysEditStructure() {
    ShownNotebook s(threeCells());
    QSignalSpy modified(s.view.get(), &NotebookView::modifiedChanged);
    s.key(Qt::Key_B);  // insert below cell 0
    QCOMPARE(s.view->cell_count(), 4);
    QCOMPARE(s.view->active_index(), 1);
    QCOMPARE(s.type(1), CellType::code);
    QCOMPARE(s.source(1), std::string());
    QVERIFY(s.doc->is_dirty());
    QCOMPARE(modified.count(), 1);
    QCOMPARE(modified.first().first().toBool(), true);
    s.key(Qt::Key_A);  // insert above the new cell
    QCOMPARE(s.view->cell_count(), 5);
    QCOMPARE(s.view->active_index(), 1);
    s.key(Qt::Key_D);
    QCOMPARE(s.view->cell_count(), 5);  // one D does nothing yet
    s.key(Qt::Key_D);
    QCOMPARE(s.view->cell_count(), 4);
    s.key(Qt::Key_Z);  // undo the deletion
    QCOMPARE(s.view->cell_count(), 5);
    s.key(Qt::Key_Z, Qt::ShiftModifier);  // redo it
    QCOMPARE(s.view->cell_count(), 4);

    s.view->selectCell(0);
    s.key(Qt::Key_M);
    QCOMPARE(s.type(0), CellType::markdown);
    QCOMPARE(s.cell(0)->cell_type(), CellType::markdown);
    QCOMPARE(s.source(0), std::string("x = 1"));
    s.key(Qt::Key_R);
    QCOMPARE(s.type(0), CellType::raw);
    s.key(Qt::Key_Y);
    QCOMPARE(s.type(0), CellType::code);
    QCOMPARE(s.view->active_index(), 0);
    s.key(Qt::Key_Z);  // undo the type change: raw again
    QCOMPARE(s.type(0), CellType::raw);
    // Every widget still shows its cell.
    for (int i = 0; i < s.view->cell_count(); ++i) QCOMPARE(s.cell(i)->cell_id(), s.doc->cell(i).id);
  }

  void selectionMovesAndExtends() {
    ShownNotebook s(makeNotebook({{CellType::code, "a"}, {CellType::code, "b"}, {CellType::code, "c"},
                                  {CellType::code, "d"}}));
    s.key(Qt::Key_J);
    QCOMPARE(s.view->active_index(), 1);
    s.key(Qt::Key_Down);
    QCOMPARE(s.view->active_index(), 2);
    s.key(Qt::Key_K);
    QCOMPARE(s.view->active_index(), 1);
    s.key(Qt::Key_Down, Qt::ShiftModifier);
    QCOMPARE(s.view->selected_indices(), (std::vector<std::size_t>{1, 2}));
    QCOMPARE(s.cell(1)->highlight(), CellWidget::Highlight::Selected);
    QCOMPARE(s.cell(2)->highlight(), CellWidget::Highlight::ActiveCommand);
    s.key(Qt::Key_D);
    s.key(Qt::Key_D);  // deletes both selected cells
    QCOMPARE(s.view->cell_count(), 2);
    QCOMPARE(s.source(0), std::string("a"));
    QCOMPARE(s.source(1), std::string("d"));
    s.key(Qt::Key_Up);
    s.key(Qt::Key_Up);  // stays at the top
    QCOMPARE(s.view->active_index(), 0);
  }

  void shiftEnterOnLastCellAppendsACellAndEdits() {
    ShownNotebook s(makeNotebook({{CellType::markdown, "*hi*"}}));
    QSignalSpy aboutToRun(s.view.get(), &NotebookView::aboutToRun);
    s.key(Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(s.view->cell_count(), 2);
    QCOMPARE(s.type(1), CellType::code);
    QCOMPARE(s.view->active_index(), 1);
    QCOMPARE(s.view->mode(), EditorMode::Edit);
    QCOMPARE(s.cell(1)->highlight(), CellWidget::Highlight::ActiveEdit);
    QCOMPARE(aboutToRun.count(), 0);  // nothing to run: markdown only renders
    QVERIFY(s.cell(0)->is_rendered());
    // Typing goes to the new cell, not to the command keymap.
    s.typeText("abd");
    QCOMPARE(s.source(1), std::string("abd"));
    QCOMPARE(s.view->cell_count(), 2);
    s.editorKey(Qt::Key_Escape);
    QCOMPARE(s.view->mode(), EditorMode::Command);
    QCOMPARE(s.cell(1)->highlight(), CellWidget::Highlight::ActiveCommand);
  }

  void upAndDownMoveBetweenEditors() {
    ShownNotebook s(makeNotebook({{CellType::code, "a = 1\nb = 2"}, {CellType::code, "c = 3"}}));
    s.key(Qt::Key_Return);
    s.cell(0)->editor()->setCursorPosition(0, 0);
    s.editorKey(Qt::Key_Down);  // inside the cell: the caret moves down a line
    QCOMPARE(s.view->active_index(), 0);
    s.editorKey(Qt::Key_Down);  // from the last line: into the next cell
    QCOMPARE(s.view->active_index(), 1);
    QCOMPARE(s.view->mode(), EditorMode::Edit);
    QVERIFY(s.cell(1)->editor()->hasFocus());
    s.editorKey(Qt::Key_Up);  // back up, onto the last line of cell 0
    QCOMPARE(s.view->active_index(), 0);
    int line = -1, index = -1;
    s.cell(0)->editor()->getCursorPosition(&line, &index);
    QCOMPARE(line, 1);
    s.editorKey(Qt::Key_Up);
    s.editorKey(Qt::Key_Up);  // the first cell's first line: stays
    QCOMPARE(s.view->active_index(), 0);
  }

  void markdownEditsAndRendersAgain() {
    ShownNotebook s(makeNotebook({{CellType::markdown, "# Old"}, {CellType::code, ""}}));
    QVERIFY(s.cell(0)->is_rendered());
    s.key(Qt::Key_Return);  // Enter edits
    QVERIFY(!s.cell(0)->is_rendered());
    QVERIFY(s.cell(0)->editor() != nullptr);
    QCOMPARE(s.cell(0)->editor()->text(), QStringLiteral("# Old"));
    s.cell(0)->editor()->selectAll();
    s.cell(0)->editor()->replaceSelectedText(QStringLiteral("## New heading\n\n- item one\n- item `two`"));
    QCOMPARE(s.source(0), std::string("## New heading\n\n- item one\n- item `two`"));
    s.editorKey(Qt::Key_Return, Qt::ShiftModifier);
    QVERIFY(s.cell(0)->is_rendered());
    const QString rendered = s.cell(0)->markdown_view()->rendered_text();
    QVERIFY2(rendered.contains(QStringLiteral("New heading")), qPrintable(rendered));
    QVERIFY(rendered.contains(QStringLiteral("item two")));
    QVERIFY(!rendered.contains(QStringLiteral("##")));
    QCOMPARE(s.view->active_index(), 1);
    QCOMPARE(s.view->mode(), EditorMode::Command);
    // Double-click edits again.
    QTest::mouseDClick(s.cell(0)->markdown_view()->viewport(), Qt::LeftButton);
    QVERIFY(!s.cell(0)->is_rendered());
    QCOMPARE(s.view->active_index(), 0);
    QCOMPARE(s.view->mode(), EditorMode::Edit);
  }

  void splitMergeMoveCopyPaste() {
    ShownNotebook s(makeNotebook({{CellType::code, "a = 1\nb = 2"}, {CellType::code, "c = 3"}}));
    s.key(Qt::Key_Return);
    s.cell(0)->editor()->setCursorPosition(1, 0);  // start of "b = 2"
    s.editorKey(Qt::Key_Minus, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(s.view->cell_count(), 3);
    QCOMPARE(s.source(0), std::string("a = 1"));
    QCOMPARE(s.source(1), std::string("b = 2"));
    QCOMPARE(s.view->active_index(), 1);
    s.editorKey(Qt::Key_Escape);
    s.key(Qt::Key_Up);
    s.key(Qt::Key_Down, Qt::ShiftModifier);
    s.key(Qt::Key_M, Qt::ShiftModifier);  // merge the two selected
    QCOMPARE(s.view->cell_count(), 2);
    QCOMPARE(s.source(0), std::string("a = 1\n\nb = 2"));
    s.key(Qt::Key_Down, Qt::ControlModifier | Qt::ShiftModifier);  // move down
    QCOMPARE(s.source(0), std::string("c = 3"));
    QCOMPARE(s.view->active_index(), 1);
    s.key(Qt::Key_C);
    s.key(Qt::Key_V);  // paste below
    QCOMPARE(s.view->cell_count(), 3);
    QCOMPARE(s.source(2), std::string("a = 1\n\nb = 2"));
    QVERIFY(s.doc->cell(2).id != s.doc->cell(1).id);  // fresh id
    s.view->selectCell(0);
    s.key(Qt::Key_X);  // cut the first
    QCOMPARE(s.view->cell_count(), 2);
    s.key(Qt::Key_V, Qt::ShiftModifier);  // paste above
    QCOMPARE(s.view->cell_count(), 3);
    QCOMPARE(s.source(0), std::string("c = 3"));
    for (int i = 0; i < s.view->cell_count(); ++i) QCOMPARE(s.cell(i)->cell_id(), s.doc->cell(i).id);
  }

  void streamOutputsOverwriteWithCarriageReturnAndAreCoalesced() {
    ShownNotebook s(makeNotebook({{CellType::code, "for ..."}}));
    StreamAccumulator acc;
    s.doc->edit_outputs(0, [&](auto& outs) { acc.append(outs, "stdout", "epoch 1\n  10%|#   |\r"); });
    s.view->flushOutputs();
    QCOMPARE(s.cell(0)->output_area()->visible_text(), QStringLiteral("epoch 1\n  10%|#   |"));
    // Many quick appends: nothing is redrawn until the flush interval passes.
    for (int i = 2; i <= 10; ++i) {
      const std::string bar = "  " + std::to_string(i * 10) + "%|" + std::string(static_cast<std::size_t>(i), '#') + "\r";
      s.doc->edit_outputs(0, [&](auto& outs) { acc.append(outs, "stdout", bar); });
    }
    QCOMPARE(s.cell(0)->output_area()->visible_text(), QStringLiteral("epoch 1\n  10%|#   |"));
    QTRY_COMPARE_WITH_TIMEOUT(s.cell(0)->output_area()->visible_text(), QStringLiteral("epoch 1\n  100%|##########"),
                              2000);
    s.doc->edit_outputs(0, [&](auto& outs) { acc.append(outs, "stderr", "warning: slow\n"); });
    s.view->flushOutputs();
    QCOMPARE(s.cell(0)->output_area()->output_count(), 2);
    QVERIFY(s.cell(0)->output_area()->visible_text().endsWith(QStringLiteral("warning: slow")));
  }

  void outputFloodIsCappedWithMarker() {
    ShownNotebook s(makeNotebook({{CellType::code, "flood"}}));
    StreamAccumulator acc({.max_text_bytes = 10000});
    const std::string line(99, 'x');
    for (int i = 0; i < 2000; ++i) s.doc->edit_outputs(0, [&](auto& outs) { acc.append(outs, "stdout", line + "\n"); });
    s.view->flushOutputs();
    const QString text = s.cell(0)->output_area()->visible_text();
    QVERIFY(text.size() < 11000);
    QVERIFY2(text.contains(QStringLiteral("output truncated")), qPrintable(text.right(200)));
  }

  void errorsImagesAndResultsDraw() {
    ShownNotebook s(makeNotebook({{CellType::code, "1/0"}}));
    std::vector<nlohmann::json> outs;
    outs.push_back(make_error_output("ZeroDivisionError", "division by zero",
                                     {"Traceback (most recent call last):",
                                      "  File \"<cell 1>\", line 1, in <module>\n    1/0",
                                      "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"}));
    outs.push_back(make_display_data({{"image/png", pngBase64(320, 200)}, {"text/plain", "<Figure>"}}));
    outs.push_back(make_execute_result(1, {{"text/plain", "tensor([1., 2.])"}}));
    outs.push_back(make_display_data({{"text/html", "<b>bold</b> table"}, {"text/plain", "plain"}}));
    outs.push_back(make_display_data({{"text/html", "<script>alert(1)</script>"}, {"text/plain", "fallback"}}));
    s.doc->set_outputs(0, outs, 1);
    s.view->flushOutputs();
    OutputArea* area = s.cell(0)->output_area();
    QCOMPARE(area->output_count(), 5);
    const QString text = area->visible_text();
    QVERIFY2(text.contains(QStringLiteral("File \"<cell 1>\", line 1")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("    1/0")));
    QVERIFY(text.contains(QStringLiteral("ZeroDivisionError: division by zero")));  // ANSI removed
    QVERIFY(!text.contains(QStringLiteral("\x1b")));
    QVERIFY(text.contains(QStringLiteral("[image 320x200]")));
    QVERIFY(text.contains(QStringLiteral("tensor([1., 2.])")));
    QVERIFY(text.contains(QStringLiteral("bold table")));
    QVERIFY(text.contains(QStringLiteral("fallback")));
    QVERIFY(!text.contains(QStringLiteral("alert")));
    QCOMPARE(s.cell(0)->prompt_text(), QStringLiteral("[1]:"));
    // Images are scaled down to the width, never up.
    auto* image = area->findChild<QLabel*>(QString(), Qt::FindChildrenRecursively);
    QVERIFY(image != nullptr);
    s.view->resize(300, 600);
    QApplication::processEvents();
    bool scaled = false;
    for (QLabel* label : area->findChildren<QLabel*>()) {
      if (!label->pixmap().isNull()) scaled = label->pixmap().width() <= label->width() && label->pixmap().width() < 320;
    }
    QVERIFY(scaled);
  }

  void outputsCollapseWithOAndPersistInMetadata() {
    ShownNotebook s(makeNotebook({{CellType::code, "print(1)"}}));
    s.doc->set_outputs(0, {make_stream_output("stdout", "1\n")}, 1);
    s.view->flushOutputs();
    QVERIFY(!s.cell(0)->output_area()->is_collapsed());
    s.key(Qt::Key_O);
    QVERIFY(s.cell(0)->output_area()->is_collapsed());
    QVERIFY(outputs_hidden(s.doc->cell(0).metadata));
    QVERIFY(s.cell(0)->output_area()->visible_text().contains(QStringLiteral("hidden")));
    s.key(Qt::Key_O);
    QVERIFY(!s.cell(0)->output_area()->is_collapsed());
    QCOMPARE(s.doc->cell(0).metadata, nlohmann::json::object());
  }

  void clearOutputsClearsTheModel() {
    ShownNotebook s(makeNotebook({{CellType::code, "a"}, {CellType::code, "b"}}));
    s.doc->set_outputs(0, {make_stream_output("stdout", "A\n")}, 1);
    s.doc->set_outputs(1, {make_stream_output("stdout", "B\n")}, 2);
    s.view->clearOutputs();  // the active cell only
    QVERIFY(s.doc->cell(0).outputs.empty());
    QVERIFY(!s.doc->cell(0).execution_count);
    QCOMPARE(s.doc->cell(1).outputs.size(), std::size_t{1});
    s.view->clearAllOutputs();
    QVERIFY(s.doc->cell(1).outputs.empty());
    s.view->flushOutputs();
    QCOMPARE(s.cell(1)->output_area()->output_count(), 0);
    QCOMPARE(s.cell(1)->prompt_text(), QStringLiteral("[ ]:"));
  }

  void externalDocumentChangesAreShown() {
    ShownNotebook s(threeCells());
    s.doc->set_source(0, "y = 2");
    QCOMPARE(s.cell(0)->editor()->text(), QStringLiteral("y = 2"));
    s.doc->insert_cell(3, CellType::raw, "raw text");
    QCOMPARE(s.view->cell_count(), 4);
    QCOMPARE(s.cell(3)->cell_type(), CellType::raw);
    QCOMPARE(s.cell(3)->editor()->text(), QStringLiteral("raw text"));
    Notebook other = makeNotebook({{CellType::code, "only"}});
    s.doc->replace_notebook(other, false);
    QCOMPARE(s.view->cell_count(), 1);
    QCOMPARE(s.cell(0)->editor()->text(), QStringLiteral("only"));
  }

  void runWithoutKernelSaysSo() {
    ShownNotebook s(makeNotebook({{CellType::code, "1 + 1"}}));
    QSignalSpy message(s.view.get(), &NotebookView::message);
    s.view->runSelectedInPlace();
    QCOMPARE(message.count(), 1);
    QVERIFY(message.first().first().toString().contains(QStringLiteral("kernel")));
    QVERIFY(!s.view->is_busy());
  }

  void threeHundredCellsLoad() {
    std::vector<CellSpec> specs;
    for (int i = 0; i < 300; ++i) {
      specs.push_back(i % 3 == 2 ? CellSpec{CellType::markdown, "## Section " + std::to_string(i)}
                                 : CellSpec{CellType::code, "x" + std::to_string(i) + " = " + std::to_string(i) +
                                                                "\nprint(x" + std::to_string(i) + ")"});
    }
    QElapsedTimer timer;
    timer.start();
    ShownNotebook s(makeNotebook(specs));
    qInfo("300 cells opened and shown in %lld ms", static_cast<long long>(timer.elapsed()));
    QCOMPARE(s.view->cell_count(), 300);
    QCOMPARE(s.cell(299)->cell_id(), s.doc->cell(299).id);
    s.view->selectCell(299);
    QApplication::processEvents();
    QVERIFY(s.cell(299)->visibleRegion().isEmpty() == false);  // scrolled into view
    s.key(Qt::Key_D);
    s.key(Qt::Key_D);
    QCOMPARE(s.view->cell_count(), 299);
  }

  void rendersToImage() {
    ShownNotebook s(threeCells());
    const QImage image = s.view->render_to_image();
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), s.view->size() * s.view->devicePixelRatio());
  }
};

QTEST_MAIN(NotebookViewWidgetsTest)
#include "test_notebook_view_widgets.moc"
