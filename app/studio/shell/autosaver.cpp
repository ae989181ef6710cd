#include "autosaver.h"

#include <QString>

#include <exception>

#include "notebook/notebook_document.h"

namespace rt::studio {

Autosaver::Autosaver(RecoveryStore store, int interval_ms, QObject* parent)
    : QObject(parent), store_(std::move(store)) {
  timer_.setInterval(interval_ms);
  connect(&timer_, &QTimer::timeout, this, [this] { save_now(); });
  timer_.start();
}

void Autosaver::watch(NotebookDocument* document) {
  document_ = document;
  key_.clear();
  has_copy_ = false;
  saved_revision_ = 0;
}

bool Autosaver::save_now() {
  if (!document_ || !document_->is_dirty()) return true;
  const std::string key = RecoveryStore::key_for(*document_);
  if (has_copy_ && key == key_ && saved_revision_ == document_->revision()) return true;
  try {
    store_.save(key, *document_);
    if (has_copy_ && key != key_) store_.discard(key_);
  } catch (const std::exception& e) {
    emit failed(tr("Autosave failed: %1").arg(QString::fromStdString(e.what())));
    return false;
  }
  key_ = key;
  has_copy_ = true;
  saved_revision_ = document_->revision();
  const auto entry = store_.find(key);
  emit saved(entry ? QString::fromStdString(entry->recovery_file.string()) : QString::fromStdString(key));
  return true;
}

void Autosaver::forget() {
  try {
    if (has_copy_) store_.discard(key_);
    if (document_) store_.discard(RecoveryStore::key_for(*document_));
  } catch (const std::exception& e) {
    emit failed(tr("Could not remove the recovery copy: %1").arg(QString::fromStdString(e.what())));
  }
  has_copy_ = false;
  key_.clear();
}

}  // namespace rt::studio
