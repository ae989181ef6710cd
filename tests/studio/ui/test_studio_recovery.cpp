// Crash recovery with real processes: a studio process types into a cell, autosaves, and is killed with
// SIGKILL; the real rtorch-studio binary then starts, is offered the edits ("Recover unsaved changes to ...?"),
// takes them (its autosave writes them back under its own pid) and is killed again; finally a studio started in
// this process recovers them into its window, and saving writes them to the notebook and drops the recovery copy.
//
// The first process is this test binary in `--child NOTEBOOK` mode: it runs StudioSession, the code
// rtorch-studio's main() runs, and types with real key events, which a separate binary cannot be made to do.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTimer>
#include <QtTest>

#include <csignal>
#include <memory>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook/recovery_store.h"
#include "notebook_view/cell_widget.h"
#include "notebook_view/code_editor.h"
#include "notebook_view/notebook_view.h"
#include "shell/autosaver.h"
#include "shell/main_window.h"
#include "panels/builtin_panels.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"

using namespace rt::studio;
using namespace rt::studio::test;

namespace {

const char* const kTyped = "# typed just before the crash";

// Child mode: open the notebook, type into its first code cell, keep autosaving until killed.
int run_child(int argc, char** argv, const QString& notebook) {
  QApplication app(argc, argv);
  configure_application(app);
  StudioOptions options;
  options.notebook = notebook.toStdString();
  options.autosave_interval_ms = 150;
  StudioSession session(options, register_builtin_panels);
  QObject::connect(&session, &StudioSession::ready, &session, [&session] {
    NotebookView* view = session.window().view();
    int code = 0;
    while (code < view->cell_count() && session.window().document()->cell(code).type != CellType::code) ++code;
    view->selectCell(code);
    view->enterEditMode();
    CodeEditor* editor = view->cell_widget(code)->editor();
    if (!editor) {
      std::fprintf(stderr, "child: cell %d has no editor\n", code);
      std::exit(3);
    }
    editor->setFocus();
    QTest::keyClick(editor, Qt::Key_End, Qt::ControlModifier);
    QTest::keyClick(editor, Qt::Key_Return);
    QTest::keyClicks(editor, kTyped);
    std::fprintf(stderr, "child: typed into cell %d; dirty=%d\n", code, int(session.window().document()->is_dirty()));
  });
  session.start();
  return app.exec();
}

QProcessEnvironment child_environment(const IsolatedSettings& settings) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  env.insert("XDG_CONFIG_HOME", settings.path("config"));
  env.insert("RT_STUDIO_RECOVERY_DIR", settings.recovery_dir());
  env.insert("OMP_NUM_THREADS", "2");
  return env;
}

// The recovery entry whose notebook contains the typed text, written by process `pid` (0: any).
std::optional<RecoveryEntry> typed_entry(const IsolatedSettings& settings, int pid = 0) {
  RecoveryStore store(settings.recovery_dir().toStdString());
  for (const RecoveryEntry& e : store.list()) {
    if (!e.error.empty() || (pid != 0 && e.owner_pid != pid)) continue;
    try {
      for (const Cell& c : store.load(e).cells)
        if (c.source.find(kTyped) != std::string::npos) return e;
    } catch (...) {
    }
  }
  return std::nullopt;
}

void kill_hard(QProcess& p) {
  ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
  p.waitForFinished(10000);  // reaps it, so the store no longer sees its pid alive
}

}  // namespace

class StudioRecoveryTest : public QObject {
  Q_OBJECT

 public:
  explicit StudioRecoveryTest(QString self) : self_(std::move(self)) {}

 private:
  QString self_;
  std::unique_ptr<IsolatedSettings> settings_;
  QString notebook_;
  QByteArray original_;

 private slots:
  void initTestCase() {
    settings_ = std::make_unique<IsolatedSettings>();
    notebook_ = settings_->path("crash.ipynb");
    QVERIFY(QFile::copy(source_dir() + "/samples/notebooks/digits_mlp.ipynb", notebook_));
    original_ = read_bytes(notebook_);
  }

  void a_killed_studio_leaves_its_unsaved_edits() {
    QProcess child;
    child.setProcessEnvironment(child_environment(*settings_));
    child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    child.start(self_, {"--child", notebook_});
    QVERIFY(child.waitForStarted());
    QVERIFY2(wait_until([&] { return typed_entry(*settings_).has_value(); }, 60000), "no autosave with the edit");
    QCOMPARE(typed_entry(*settings_)->owner_pid, int(child.processId()));
    QVERIFY(typed_entry(*settings_)->owner_running);  // a live owner: another studio would not offer it
    kill_hard(child);
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);
    const auto entry = typed_entry(*settings_);
    QVERIFY(entry);
    QVERIFY(!entry->owner_running);
    QCOMPARE(read_bytes(notebook_), original_);  // the notebook itself was never written
  }

  void the_real_binary_offers_and_takes_them() {
    const int before = typed_entry(*settings_)->owner_pid;
    QProcess studio;
    QProcessEnvironment env = child_environment(*settings_);
    env.insert("RT_STUDIO_AUTO_ANSWER", "recover=Recover");
    studio.setProcessEnvironment(env);
    studio.start(RT_STUDIO_EXECUTABLE, {"--autosave-interval-ms", "150", notebook_});
    QVERIFY(studio.waitForStarted());
    // After recovering, its own autosave rewrites the copy under its pid: the edits are in its document.
    const bool taken = wait_until([&] { return typed_entry(*settings_, int(studio.processId())).has_value(); }, 60000);
    const QString err = QString::fromLocal8Bit(studio.readAllStandardError());
    QVERIFY2(taken, qPrintable(err));
    QVERIFY2(err.contains("prompt recover: Recover unsaved changes to crash.ipynb from"), qPrintable(err));
    QVERIFY(before != int(studio.processId()));
    kill_hard(studio);
    QCOMPARE(read_bytes(notebook_), original_);
  }

  void a_new_studio_recovers_them_into_its_window_and_saves() {
    ModalAnswerer recover("recover", "Recover");
    StudioOptions options;
    options.notebook = notebook_.toStdString();
    StudioSession session(options, register_builtin_panels);
    bool ready = false;
    connect(&session, &StudioSession::ready, this, [&] { ready = true; });
    session.start();
    QVERIFY(wait_until([&] { return ready; }, 30000));
    QCOMPARE(recover.answered(), 1);
    QVERIFY2(recover.last_text().contains("Recover unsaved changes to crash.ipynb from"), qPrintable(recover.last_text()));
    NotebookDocument* doc = session.window().document();
    QCOMPARE(QString::fromStdString(doc->path().string()), QFileInfo(notebook_).absoluteFilePath());
    QVERIFY(doc->is_dirty());
    QVERIFY(session.window().isWindowModified());
    bool found = false;
    for (std::size_t i = 0; i < doc->cell_count(); ++i) found |= doc->cell(i).source.find(kTyped) != std::string::npos;
    QVERIFY(found);
    QVERIFY(session.window().save());
    QVERIFY(read_bytes(notebook_).contains(kTyped));
    QCOMPARE(nbformat_validate(notebook_), QString());
    QVERIFY(!typed_entry(*settings_).has_value());  // saved: the recovery copy is gone
    RecoveryStore store(settings_->recovery_dir().toStdString());
    QVERIFY(store.list().empty());
  }
};

int main(int argc, char** argv) {
  if (argc >= 3 && QByteArray(argv[1]) == "--child") return run_child(argc, argv, QString::fromLocal8Bit(argv[2]));
  QApplication app(argc, argv);
  configure_application(app);
  StudioRecoveryTest test(QCoreApplication::applicationFilePath());
  return run_qtest(test, argc, argv);
}

#include "test_studio_recovery.moc"
