#include "studio_test_support.h"

#include <QApplication>
#include <QAbstractButton>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QThread>
#include <QtTest>

#include <vector>

namespace rt::studio::test {

IsolatedSettings::IsolatedSettings() {
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.filePath(QStringLiteral("config")));
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.filePath(QStringLiteral("config")));
  qputenv("RT_STUDIO_RECOVERY_DIR", recovery_dir().toLocal8Bit());
}

ModalAnswerer::ModalAnswerer(QString key, QString button) : key_(std::move(key)), button_(std::move(button)) {
  timer_.setInterval(10);
  connect(&timer_, &QTimer::timeout, this, &ModalAnswerer::poll);
  timer_.start();
}

void ModalAnswerer::poll() {
  auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
  if (!box || box->objectName() != key_ || !box->isVisible() || box->property("rt_answered").toBool()) return;
  const auto plain = [](QString s) { return s.remove('&').trimmed().toLower(); };
  for (QAbstractButton* b : box->buttons()) {
    if (plain(b->text()) == plain(button_)) {
      box->setProperty("rt_answered", true);
      texts_ << box->text() + '\n' + box->informativeText();
      b->click();
      return;
    }
  }
}

std::pair<int, QString> run_python(const QString& code, const QStringList& args) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(QStringLiteral("/usr/bin/python3"), QStringList{QStringLiteral("-c"), code} + args);
  if (!p.waitForFinished(60000)) return {-1, QStringLiteral("python3 did not finish: ") + p.errorString()};
  return {p.exitCode(), QString::fromUtf8(p.readAll())};
}

QString nbformat_validate(const QString& path) {
  const auto [code, output] = run_python(QStringLiteral(
                                             "import sys, nbformat\n"
                                             "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                                             "nbformat.validate(nb)\n"
                                             "assert nb.nbformat == 4 and nb.nbformat_minor == 5, nb.nbformat_minor\n"),
                                         {path});
  return code == 0 ? QString() : output;
}

QByteArray read_bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write_bytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(bytes);
}

int run_qtest(QObject& test, int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  static char no_crash_handler[] = "-nocrashhandler";
  args.push_back(no_crash_handler);
  return QTest::qExec(&test, static_cast<int>(args.size()), args.data());
}

QString source_dir() { return QStringLiteral(RT_SOURCE_DIR); }
QString build_dir() { return QStringLiteral(RT_BUILD_DIR); }

}  // namespace rt::studio::test
