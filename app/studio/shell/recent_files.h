// app/studio/shell/recent_files.h — the File > Open Recent list, persisted in QSettings.
//
//   RecentFiles recent;                       // reads QSettings key "files/recent"
//   recent.add("/home/me/train.ipynb");       // moves it to the front, keeps at most kMaxEntries
//   QStringList gone = recent.prune_missing(); // drops files that no longer exist, returns them
//   for (const QString& path : recent.paths()) ...
//
// Contracts: paths are stored absolute and clean (QFileInfo::absoluteFilePath), newest first, without
// duplicates; every change is written to QSettings immediately, so a crash keeps the list. Uses the default
// QSettings of the application (organization/application names set in main, or a test's own location).
#pragma once
#include <QStringList>

namespace rt::studio {

class RecentFiles {
 public:
  static constexpr int kMaxEntries = 10;

  RecentFiles();
  const QStringList& paths() const { return paths_; }
  void add(const QString& path);
  void remove(const QString& path);
  void clear();
  // Removes entries whose file no longer exists and returns them (to tell the user which were dropped).
  QStringList prune_missing();

 private:
  void store() const;
  QStringList paths_;
};

}  // namespace rt::studio
