// app/studio/notebook/recovery_store.h — autosaved copies of unsaved notebooks, offered back after a crash.
//
//   rt::studio::RecoveryStore store;                                 // RecoveryStore::default_directory()
//   std::string key = rt::studio::RecoveryStore::key_for(doc);       // from the path, or untitled-<pid>-<n>
//   store.save(key, doc);                   // every 30 s and before each run, while doc.is_dirty()
//   store.discard(key);                     // after a successful save, or when the user closes without saving
//
//   // Next start:
//   for (const rt::studio::RecoveryEntry& e : store.list())
//     if (!e.owner_running && ask("Recover unsaved changes to " + e.display_name + "?")) {
//       rt::studio::NotebookDocument doc = store.restore(e);  // path = e.original_path, dirty
//       store.discard(e.key);                                  // only once the restored copy is open
//     }
//
// Contracts:
// - One file per key, `<dir>/<key>.rtrecovery.json`, written atomically (write_file_atomically): a crash while
//   autosaving leaves the previous copy intact. It holds the notebook (as nbformat json), the original path,
//   the original file's FileStamp when the document last read or wrote it, the save time and the writer's pid.
// - The directory is created on first save (0700). default_directory(): $RT_STUDIO_RECOVERY_DIR if set, else
//   $XDG_DATA_HOME/rustytorch/recovery, else ~/.local/share/rustytorch/recovery.
// - list() never throws for a bad entry: unreadable or corrupt recovery files are listed with `error` set (so
//   the UI can offer to delete them) and sorted after the good ones; good ones newest first.
// - owner_running is true when the pid that wrote the entry is alive and is not this process (another studio
//   has that notebook open: don't offer it). original_changed is true when the original file is no longer the
//   one the unsaved edits started from (edited elsewhere, or deleted).
// - save() throws NotebookFileError (ipynb.h) when the directory cannot be written; the caller reports it in
//   the status bar and keeps going. restore() throws NotebookFormatError for a corrupt entry.
// - Keys are file-name safe: [A-Za-z0-9._-], at most 100 characters.
#pragma once
#include "notebook/file_stamp.h"
#include "notebook/notebook.h"
#include "notebook/notebook_document.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rt::studio {

struct RecoveryEntry {
  std::string key;
  std::filesystem::path recovery_file;
  std::filesystem::path original_path;   // empty for an untitled notebook
  std::string display_name;              // "digits_mlp.ipynb" or "Untitled"
  std::chrono::system_clock::time_point saved_at;
  FileStamp original_stamp;              // the original as the edits started from it
  bool original_changed = false;
  int owner_pid = 0;
  bool owner_running = false;
  std::size_t cell_count = 0;
  std::string error;                     // non-empty: this entry cannot be restored (the reason)
};

class RecoveryStore {
 public:
  explicit RecoveryStore(std::filesystem::path directory = default_directory());
  static std::filesystem::path default_directory();

  const std::filesystem::path& directory() const { return directory_; }

  // `<stem>-<16 hex of the FNV-1a of the absolute path>` for a file, "untitled-<pid>-<n>" for untitled
  // document number `untitled_number`.
  static std::string key_for_path(const std::filesystem::path& original_path);
  static std::string key_for_untitled(int untitled_number);
  // key_for_path(doc.path()), or key_for_untitled(untitled_number) while untitled.
  static std::string key_for(const NotebookDocument& doc, int untitled_number = 1);

  void save(const std::string& key, const NotebookDocument& doc);
  void save(const std::string& key, const Notebook& nb, const std::filesystem::path& original_path,
            const FileStamp& original_stamp);
  std::vector<RecoveryEntry> list() const;
  std::optional<RecoveryEntry> find(const std::string& key) const;
  Notebook load(const RecoveryEntry& entry) const;
  // A dirty document with the recovered notebook, path = entry.original_path, disk stamp = the original's stamp
  // at autosave time (so changed_on_disk() tells if the file moved on).
  NotebookDocument restore(const RecoveryEntry& entry) const;
  // Removes the entry's file; no error when it does not exist.
  void discard(const std::string& key);

 private:
  std::filesystem::path file_for(const std::string& key) const;
  std::filesystem::path directory_;
};

}  // namespace rt::studio
