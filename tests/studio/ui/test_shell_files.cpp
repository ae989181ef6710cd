// The File menu end to end: open / edit / save round trips (byte-identical when unedited, nbformat.validate
// after edits), Open Recent, the unsaved-changes prompt on New / Open / Close / quit, and the messages for a
// corrupt file, a non-notebook and an unwritable place, after which nothing that was open is lost.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QStatusBar>
#include <QtTest>

#include <memory>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook_view/notebook_view.h"
#include "panels/builtin_panels.h"
#include "shell/main_window.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"

using namespace rt::studio;
using namespace rt::studio::test;

class ShellFilesTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<IsolatedSettings> settings_;
  std::unique_ptr<KernelClient> kernel_;
  PanelRegistry panels_;

  std::unique_ptr<MainWindow> make_window() {
    auto w = std::make_unique<MainWindow>(panels_, *kernel_);
    w->show();
    return w;
  }
  QString copy_sample(const QString& name, const QString& as) {
    const QString target = settings_->path(as);
    QFile::remove(target);
    QFile::copy(source_dir() + "/samples/notebooks/" + name, target);
    QFile(target).setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
    return target;
  }
  static void edit_first_cell(MainWindow& w, const std::string& text) {
    w.document()->set_source(0, w.document()->cell(0).source + text);
  }

 private slots:
  void initTestCase() {
    settings_ = std::make_unique<IsolatedSettings>();
    kernel_ = std::make_unique<KernelClient>();
    register_builtin_panels(panels_);
  }
  void cleanupTestCase() { kernel_.reset(); }

  void unedited_save_is_byte_identical() {
    for (const QString name : {"digits_mlp.ipynb", "quickstart.ipynb", "char_transformer.ipynb"}) {
      const QString path = copy_sample(name, "same-" + name);
      const QByteArray before = read_bytes(path);
      auto w = make_window();
      QVERIFY(w->open_file(path));
      QVERIFY(!w->document()->is_dirty());
      QVERIFY2(w->windowTitle().startsWith("same-" + name), qPrintable(w->windowTitle()));
      w->action("actionSave")->trigger();
      QCOMPARE(read_bytes(path), before);
    }
  }

  void edit_then_save_passes_nbformat_validate() {
    const QString path = copy_sample("digits_mlp.ipynb", "edited.ipynb");
    auto w = make_window();
    QVERIFY(w->open_file(path));
    edit_first_cell(*w, "\n# edited by the studio test ✓");
    QVERIFY(w->isWindowModified());
    const std::size_t cells = w->document()->cell_count();
    w->view()->selectCell(1);
    w->view()->execute(CellCommand::InsertBelow);
    QCOMPARE(w->document()->cell_count(), cells + 1);
    w->action("actionSave")->trigger();
    QVERIFY(!w->isWindowModified());
    QVERIFY(!w->document()->is_dirty());
    QCOMPARE(nbformat_validate(path), QString());
    const auto [code, out] = run_python(
        "import sys, nbformat\nnb = nbformat.read(sys.argv[1], as_version=4)\n"
        "print(len(nb.cells)); print('edited by the studio test \\u2713' in nb.cells[0].source)\n"
        "print(nbformat.writes(nb) + '\\n' == open(sys.argv[1], encoding='utf-8').read())",
        {path});
    QCOMPARE(code, 0);
    const QStringList lines = out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0).toULongLong(), w->document()->cell_count());
    QCOMPARE(lines.value(1), QStringLiteral("True"));
    QCOMPARE(lines.value(2), QStringLiteral("True"));  // written exactly as nbformat writes it
  }

  void notebook_written_by_nbformat_opens() {
    const QString path = settings_->path("from_nbformat.ipynb");
    const auto [code, out] = run_python(
        "import sys, nbformat\nfrom nbformat.v4 import new_notebook, new_code_cell, new_markdown_cell, new_raw_cell\n"
        "nb = new_notebook(cells=[new_markdown_cell('# Hi'), new_code_cell('x = 1\\nx'), new_raw_cell('raw')],\n"
        "                  metadata={'custom': {'kept': [1, 2]}})\n"
        "nbformat.write(nb, sys.argv[1])\n",
        {path});
    QCOMPARE(code, 0);
    const QByteArray before = read_bytes(path);
    auto w = make_window();
    QVERIFY(w->open_file(path));
    QCOMPARE(w->document()->cell_count(), std::size_t(3));
    QCOMPARE(w->document()->cell(1).source, std::string("x = 1\nx"));
    QVERIFY(w->save());
    QCOMPARE(read_bytes(path), before);  // unknown metadata kept, ids kept, bytes unchanged
  }

  void save_as_untitled_then_reopen_from_recent() {
    auto w = make_window();
    QVERIFY(w->document()->is_untitled());
    QVERIFY(w->windowTitle().startsWith("Untitled"));
    w->document()->set_source(0, "print('saved as')");
    const QString path = settings_->path("saved_as.ipynb");
    QVERIFY(w->save_as(path));
    QVERIFY(w->windowTitle().startsWith("saved_as.ipynb"));
    QCOMPARE(nbformat_validate(path), QString());
    QCOMPARE(w->recent_files().paths().value(0), QFileInfo(path).absoluteFilePath());

    auto other = make_window();  // a fresh window reads the persisted list
    QCOMPARE(other->recent_files().paths().value(0), QFileInfo(path).absoluteFilePath());
    auto* recent = other->findChild<QMenu*>("menuOpenRecent");
    QVERIFY(recent);
    emit recent->aboutToShow();
    QAction* first = other->findChild<QAction*>("actionRecent1");
    QVERIFY(first);
    first->trigger();
    QCOMPARE(QString::fromStdString(other->document()->path().string()), QFileInfo(path).absoluteFilePath());
    QCOMPARE(other->document()->cell(0).source, std::string("print('saved as')"));
  }

  void recent_list_keeps_ten_and_prunes_missing_files() {
    auto w = make_window();
    w->recent_files().clear();
    QStringList made;
    for (int i = 0; i < 12; ++i) {
      const QString p = settings_->path(QString("r%1.ipynb").arg(i));
      write_bytes(p, read_bytes(source_dir() + "/samples/notebooks/quickstart.ipynb"));
      w->recent_files().add(p);
      made << QFileInfo(p).absoluteFilePath();
    }
    QCOMPARE(w->recent_files().paths().size(), RecentFiles::kMaxEntries);
    QCOMPARE(w->recent_files().paths().first(), made.last());
    QFile::remove(made.last());
    auto* recent = w->findChild<QMenu*>("menuOpenRecent");
    emit recent->aboutToShow();
    QVERIFY(!w->recent_files().paths().contains(made.last()));
    QVERIFY(w->statusBar()->currentMessage().contains("no longer exist"));
    QVERIFY(w->statusBar()->currentMessage().contains("r11.ipynb"));
  }

  void corrupt_and_foreign_files_are_reported_and_nothing_is_lost() {
    const QString good = copy_sample("digits_mlp.ipynb", "kept.ipynb");
    auto w = make_window();
    QVERIFY(w->open_file(good));
    edit_first_cell(*w, "\n# unsaved edit");
    const std::string edited = w->document()->cell(0).source;

    struct Case { QString name; QByteArray bytes; QString expect; };
    const QList<Case> cases = {
        {"truncated.ipynb", read_bytes(good).left(300), "truncated.ipynb"},
        {"not_a_notebook.ipynb", "{\"hello\": [1, 2, 3]}\n", "not_a_notebook.ipynb"},
        {"binary.ipynb", QByteArray("\x89PNG\r\n\x1a\n\0\0\0", 11), "binary.ipynb"},
        {"old_v3.ipynb", "{\"nbformat\": 3, \"nbformat_minor\": 0, \"worksheets\": [], \"metadata\": {}}", "old_v3.ipynb"},
    };
    for (const Case& c : cases) {
      const QString path = settings_->path(c.name);
      write_bytes(path, c.bytes);
      ModalAnswerer problem("problem", "OK");
      QVERIFY(!w->open_file(path));
      QCOMPARE(problem.answered(), 1);
      QVERIFY2(problem.last_text().contains(c.expect), qPrintable(problem.last_text()));
      QVERIFY2(problem.last_text().contains("Nothing that is open was changed"), qPrintable(problem.last_text()));
      QCOMPARE(QString::fromStdString(w->document()->path().string()), QFileInfo(good).absoluteFilePath());
      QCOMPARE(w->document()->cell(0).source, edited);
      QVERIFY(w->isWindowModified());
    }
    ModalAnswerer missing("problem", "OK");
    QVERIFY(!w->open_file(settings_->path("does_not_exist.ipynb")));
    QCOMPARE(missing.answered(), 1);
    QVERIFY(missing.last_text().contains("does_not_exist.ipynb"));
    QVERIFY(w->document()->is_dirty());
  }

  void unwritable_save_is_reported_and_keeps_the_edits() {
    const QString good = copy_sample("digits_mlp.ipynb", "will_fail.ipynb");
    auto w = make_window();
    QVERIFY(w->open_file(good));
    edit_first_cell(*w, "\n# must survive");
    // A path below a regular file cannot be written, even by root.
    const QString blocker = settings_->path("a_file");
    write_bytes(blocker, "x");
    const QString bad = blocker + "/inside.ipynb";
    ModalAnswerer problem("problem", "OK");
    QVERIFY(!w->save_as(bad));
    QCOMPARE(problem.answered(), 1);
    QVERIFY2(problem.last_text().contains("inside.ipynb"), qPrintable(problem.last_text()));
    QVERIFY2(problem.last_text().contains("Save As"), qPrintable(problem.last_text()));
    QCOMPARE(QString::fromStdString(w->document()->path().string()), QFileInfo(good).absoluteFilePath());
    QVERIFY(w->document()->is_dirty());
    QVERIFY(w->isWindowModified());
    QVERIFY(w->document()->cell(0).source.ends_with("# must survive"));
    QVERIFY(!QFile::exists(bad));
    // The original file is untouched, and saving to its own place still works afterwards.
    QVERIFY(!read_bytes(good).contains("must survive"));
    QVERIFY(w->save());
    QVERIFY(read_bytes(good).contains("must survive"));
  }

  void unsaved_changes_prompt_on_new_open_close_and_quit() {
    const QString path = copy_sample("digits_mlp.ipynb", "prompted.ipynb");
    const QString other = copy_sample("digits_cnn.ipynb", "other.ipynb");
    auto w = make_window();
    QVERIFY(w->open_file(path));
    edit_first_cell(*w, "\n# pending");

    {  // Cancel keeps everything
      ModalAnswerer cancel("unsaved", "Cancel");
      w->new_notebook();
      QCOMPARE(cancel.answered(), 1);
      QVERIFY(cancel.last_text().contains("prompted.ipynb"));
      QVERIFY(!w->document()->is_untitled());
      QVERIFY(!w->open_file(other));
      QCOMPARE(cancel.answered(), 2);
      QVERIFY(!w->close_notebook());
      QCOMPARE(cancel.answered(), 3);
      QVERIFY(!w->close());
      QCOMPARE(cancel.answered(), 4);
      QVERIFY(w->isVisible());
      QVERIFY(w->document()->is_dirty());
      QVERIFY(QString::fromStdString(w->document()->path().string()).endsWith("prompted.ipynb"));
    }
    {  // Save writes, then opens the other notebook
      ModalAnswerer save("unsaved", "Save");
      QVERIFY(w->open_file(other));
      QCOMPARE(save.answered(), 1);
      QVERIFY(read_bytes(path).contains("# pending"));
      QVERIFY(QString::fromStdString(w->document()->path().string()).endsWith("other.ipynb"));
    }
    {  // Discard drops the edits
      edit_first_cell(*w, "\n# thrown away");
      ModalAnswerer discard("unsaved", "Discard");
      w->new_notebook();
      QCOMPARE(discard.answered(), 1);
      QVERIFY(w->document()->is_untitled());
      QVERIFY(!read_bytes(other).contains("thrown away"));
    }
    {  // an unmodified notebook closes without a question
      ModalAnswerer none("unsaved", "Cancel");
      QVERIFY(w->close());
      QCOMPARE(none.answered(), 0);
    }
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  configure_application(app);
  ShellFilesTest test;
  return run_qtest(test, argc, argv);
}

#include "test_shell_files.moc"
