// app/studio/shell/autosaver.h — keeps a recovery copy of the open notebook's unsaved edits.
//
//   Autosaver autosaver(RecoveryStore{}, 30000);  // period in ms
//   autosaver.watch(&document);                   // the window's open NotebookDocument
//   autosaver.save_now();                         // before each run (the timer does the rest)
//   autosaver.forget();                           // after Save, or Close/Discard: the recovery copy goes
//
// Contracts:
// - Writes only while the document is dirty and only when its revision changed since the last copy, so an idle
//   studio does not touch the disk. A copy is written atomically by RecoveryStore (a crash mid-write keeps the
//   previous copy).
// - The key follows the document (RecoveryStore::key_for): after Save As, the copy under the old key is removed.
// - A failing write never throws out of the timer: failed(message) is emitted (the shell shows it in the status
//   bar) and the next period tries again. save_now() returns false on failure.
// - watch(nullptr) stops watching without deleting anything.
#pragma once
#include <QObject>
#include <QTimer>

#include <cstdint>
#include <string>

#include "notebook/recovery_store.h"

namespace rt::studio {

class NotebookDocument;

class Autosaver : public QObject {
  Q_OBJECT

 public:
  Autosaver(RecoveryStore store, int interval_ms, QObject* parent = nullptr);

  void watch(NotebookDocument* document);
  bool save_now();
  void forget();

  RecoveryStore& store() { return store_; }
  int interval_ms() const { return timer_.interval(); }
  // The key the current copy is stored under (empty when none was written).
  const std::string& current_key() const { return key_; }

 signals:
  void saved(const QString& recovery_file);
  void failed(const QString& message);

 private:
  RecoveryStore store_;
  QTimer timer_;
  NotebookDocument* document_ = nullptr;
  std::string key_;
  std::uint64_t saved_revision_ = 0;
  bool has_copy_ = false;
};

}  // namespace rt::studio
