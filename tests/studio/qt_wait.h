// tests/studio/qt_wait.h — waiting in Qt tests without blocking the event loop.
//
//   QVERIFY(rt::studio::test::wait_until([&] { return !view->is_busy(); }, 20000));
#pragma once
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include <functional>

namespace rt::studio::test {

// Processes events until `done()` or `timeout_ms`; returns done().
inline bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer clock;
  clock.start();
  while (!done() && clock.elapsed() < timeout_ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return done();
}

}  // namespace rt::studio::test
