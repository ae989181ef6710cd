#include "recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace rt::studio {
namespace {

const char* const kKey = "files/recent";

QString normalized(const QString& path) { return QFileInfo(path).absoluteFilePath(); }

}  // namespace

RecentFiles::RecentFiles() {
  const QStringList stored = QSettings().value(kKey).toStringList();
  for (const QString& path : stored) {
    const QString clean = normalized(path);
    if (!path.isEmpty() && !paths_.contains(clean) && paths_.size() < kMaxEntries) paths_.append(clean);
  }
}

void RecentFiles::add(const QString& path) {
  const QString clean = normalized(path);
  paths_.removeAll(clean);
  paths_.prepend(clean);
  while (paths_.size() > kMaxEntries) paths_.removeLast();
  store();
}

void RecentFiles::remove(const QString& path) {
  if (paths_.removeAll(normalized(path)) > 0) store();
}

void RecentFiles::clear() {
  paths_.clear();
  store();
}

QStringList RecentFiles::prune_missing() {
  QStringList gone;
  for (const QString& path : paths_)
    if (!QFileInfo::exists(path)) gone.append(path);
  for (const QString& path : gone) paths_.removeAll(path);
  if (!gone.isEmpty()) store();
  return gone;
}

void RecentFiles::store() const { QSettings().setValue(kKey, paths_); }

}  // namespace rt::studio
