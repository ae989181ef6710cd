// tests/studio/ui/studio_test_support.h — what the shell's QtTest tests share.
//
//   IsolatedSettings settings;                 // QSettings and the recovery store in a scratch folder
//   ModalAnswerer answer("unsaved", "Cancel"); // clicks Cancel on the next "unsaved" prompt (shell/prompts.h)
//   window.new_notebook();
//   QCOMPARE(answer.answered(), 1);
//   QString problem = nbformat_validate(path); // empty when /usr/bin/python3's nbformat accepts the file
//   QVERIFY(wait_until([&] { return !view->is_busy(); }, 20000));
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>

#include <functional>

#include "../qt_wait.h"  // wait_until

namespace rt::studio::test {

// Points QSettings (user scope) and RT_STUDIO_RECOVERY_DIR at a fresh temporary folder for the test's lifetime.
class IsolatedSettings {
 public:
  IsolatedSettings();
  QString root() const { return dir_.path(); }
  QString recovery_dir() const { return dir_.filePath(QStringLiteral("recovery")); }
  QString path(const QString& name) const { return dir_.filePath(name); }

 private:
  QTemporaryDir dir_;
};

// Watches for a modal QMessageBox whose objectName is `key` and clicks the button whose text is `button`
// ('&' and case ignored). Records each box's text (text + informative text).
class ModalAnswerer : public QObject {
  Q_OBJECT

 public:
  ModalAnswerer(QString key, QString button);
  int answered() const { return texts_.size(); }
  const QStringList& texts() const { return texts_; }
  QString last_text() const { return texts_.isEmpty() ? QString() : texts_.last(); }

 private:
  void poll();
  QString key_, button_;
  QStringList texts_;
  QTimer timer_;
};


// Runs nbformat.read + nbformat.validate on the file; returns "" when valid, else Python's message.
QString nbformat_validate(const QString& path);
// Runs a Python snippet with /usr/bin/python3 (argv[1..] = args); returns {exit code, stdout + stderr}.
std::pair<int, QString> run_python(const QString& code, const QStringList& args = {});

QByteArray read_bytes(const QString& path);
void write_bytes(const QString& path, const QByteArray& bytes);

// QTest::qExec without QtTest's crash handler: it also catches SIGINT, which the kernel sends to its interpreter
// thread to interrupt a cell, and would end the test there (the studio itself has no such handler).
int run_qtest(QObject& test, int argc, char** argv);

// The source tree (for samples/notebooks) and the build tree (for test artifacts).
QString source_dir();
QString build_dir();

}  // namespace rt::studio::test
