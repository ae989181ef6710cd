// The Attach dialog and the session picker on the offscreen platform, against a real `rtorch run --attach`
// process: Remote > Attach… opens the dialog, which lists the job with its rank; Attach makes the rank a live
// session that the picker shows and grows; killing the process shows "process exited" in the rank table and in
// the picker, which keeps what arrived.
#include <QApplication>
#include <QPushButton>
#include <QTableWidget>
#include <QtTest>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "attach/attach_dialog.h"
#include "attach/attached_sessions.h"
#include "attach_test_process.h"
#include "panels/builtin_panels.h"
#include "qt_wait.h"
#include "shell/panel.h"
#include "viz_panels/session_picker.h"

using namespace rt::studio;
using namespace rt::studio::test;

namespace {

int find_entry(const SessionPicker& picker, const QString& text) {
  for (int i = 0; i < picker.count(); ++i)
    if (picker.entryText(i).contains(text)) return i;
  return -1;
}

constexpr int kStateColumn = 7;

}  // namespace

class AttachDialogTest : public QObject {
  Q_OBJECT

 private slots:
  void remote_menu_opens_one_attach_dialog() {
    PanelRegistry registry;
    register_builtin_panels(registry);
    const StudioCommand* attach = nullptr;
    for (const StudioCommand& c : registry.commands())
      if (c.id == "actionAttach") attach = &c;
    QVERIFY(attach);
    QCOMPARE(attach->menu, QStringLiteral("&Remote"));
    QWidget window;
    attach->run(&window);
    attach->run(&window);
    const auto dialogs = window.findChildren<AttachDialog*>();
    QCOMPARE(dialogs.size(), qsizetype(1));
    QVERIFY(dialogs[0]->isVisible());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add_command(*attach));
  }

  void a_silent_agent_is_listed_as_not_answering() {
    PrivateRuntimeDir dir;
    // A socket that listens and never accepts: nothing ever answers the status request.
    const std::string path = (dir.path / "silent.r0.1.sock").string();
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    QVERIFY(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    QVERIFY(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
    QVERIFY(::listen(fd, 8) == 0);
    rt::remote::AgentManifest m;
    m.job = "silent";
    m.pid = int(::getpid());
    m.host = "localhost";
    m.protocol = 1;
    m.socket = path;
    rt::remote::write_manifest(dir.path / "silent.r0.1.json", m);

    AttachDialog dialog;
    dialog.show();
    // The listing runs off the GUI thread: events are processed while the agent stays silent.
    QVERIFY(wait_until([&] { return dialog.jobCount() == 1 && !dialog.listing(); }, 30000));
    QVERIFY(dialog.selectJob("silent"));
    const QString state = dialog.rankTable()->item(0, kStateColumn)->text();
    QVERIFY2(state.startsWith("not answering: ") && state.contains("did not answer"), qPrintable(state));
    QVERIFY(dialog.attachSelected());
    QVERIFY(wait_until([&] { return dialog.rankTable()->item(0, kStateColumn)->text().startsWith("not answering"); }, 30000));
    AttachedSessions::instance().clear();
    ::close(fd);
  }

  void attached_rank_grows_in_the_picker_until_its_process_dies() {
    PrivateRuntimeDir dir;
    AttachableProcess process(dir, "dialog-test", 0, 1);
    QVERIFY2(process.wait_ready(120000), process.log().c_str());

    SessionPicker picker;
    std::shared_ptr<const rt::prof::SessionData> shown;
    int grew = 0;
    connect(&picker, &SessionPicker::sessionLoaded, this, [&](auto data, bool) { shown = data; });
    connect(&picker, &SessionPicker::sessionGrew, this, [&](auto data, auto) {
      shown = data;
      ++grew;
    });
    picker.show();

    AttachDialog dialog;
    dialog.show();
    QVERIFY(wait_until([&] { return dialog.jobCount() == 1 && !dialog.listing(); }, 30000));
    QCOMPARE(dialog.jobName(0), QStringLiteral("dialog-test"));
    QVERIFY(dialog.selectJob("dialog-test"));
    QTableWidget* ranks = dialog.rankTable();
    QCOMPARE(ranks->rowCount(), 1);
    QCOMPARE(ranks->item(0, 2)->text(), QString::number(process.pid()));
    QVERIFY2(!ranks->item(0, kStateColumn)->text().startsWith("not answering"), qPrintable(ranks->item(0, kStateColumn)->text()));
    QVERIFY(dialog.findChild<QPushButton*>("attachButton")->isEnabled());
    QVERIFY(!dialog.findChild<QPushButton*>("detachButton")->isEnabled());

    QVERIFY(dialog.attachSelected());
    QVERIFY(!dialog.findChild<QPushButton*>("attachButton")->isEnabled());
    QVERIFY(dialog.findChild<QPushButton*>("detachButton")->isEnabled());
    // A second Attach of the same job is refused in the status line.
    QVERIFY(!dialog.attachSelected());
    QVERIFY2(dialog.statusText().contains("attached already"), qPrintable(dialog.statusText()));

    // The picker lists the rank, follows it (it showed nothing) and grows it.
    QVERIFY(wait_until([&] { return find_entry(picker, "dialog-test rank 0 (attached)") >= 0; }, 10000));
    QVERIFY(wait_until([&] { return shown && shown->ops.size() > 0 && grew > 0; }, 60000));
    QVERIFY2(picker.statusText().startsWith("live"), qPrintable(picker.statusText()));
    QVERIFY(wait_until([&] { return ranks->item(0, kStateColumn)->text() == "live"; }, 10000));
    const size_t ops_seen = shown->ops.size();

    process.kill();
    QVERIFY(wait_until([&] { return ranks->item(0, kStateColumn)->text().startsWith("process exited"); }, 30000));
    QVERIFY(wait_until([&] { return picker.statusText().startsWith("process exited"); }, 10000));
    QVERIFY(wait_until([&] {
      const int i = find_entry(picker, "dialog-test rank 0 (attached)");
      return i >= 0 && picker.entryText(i).contains("process exited");
    }, 10000));
    QVERIFY(shown->ops.size() >= ops_seen);
    QVERIFY(!dialog.findChild<QPushButton*>("detachButton")->isEnabled());
    // The job stays listed, ended, after its manifest went.
    dialog.refresh();
    QVERIFY(wait_until([&] { return !dialog.listing(); }, 10000));
    QVERIFY(wait_until([&] { return dialog.jobCount() == 1; }, 10000));
    AttachedSessions::instance().clear();
  }

  void detach_button_keeps_the_sessions_and_shows_detached() {
    PrivateRuntimeDir dir;
    AttachableProcess process(dir, "detach-test", 0, 1);
    QVERIFY2(process.wait_ready(120000), process.log().c_str());
    SessionPicker picker;
    picker.show();
    AttachDialog dialog;
    dialog.show();
    QVERIFY(wait_until([&] { return dialog.jobCount() == 1 && !dialog.listing(); }, 30000));
    QVERIFY(dialog.selectJob("detach-test"));
    QVERIFY(dialog.attachSelected());
    QVERIFY(wait_until([&] { return dialog.rankTable()->item(0, kStateColumn)->text() == "live"; }, 30000));
    QTest::mouseClick(dialog.findChild<QPushButton*>("detachButton"), Qt::LeftButton);
    QVERIFY(wait_until([&] { return dialog.rankTable()->item(0, kStateColumn)->text() == "detached"; }, 30000));
    QVERIFY(wait_until([&] { return picker.statusText().startsWith("detached"); }, 10000));
    QVERIFY(process.running());
    // Attach is offered again.
    QVERIFY(wait_until([&] { return dialog.findChild<QPushButton*>("attachButton")->isEnabled(); }, 10000));
    AttachedSessions::instance().clear();
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  AttachDialogTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_attach_dialog.moc"
