// app/studio/shell/recovery_offer.h — at start, offers back the unsaved edits a crashed studio left behind.
//
//   if (auto recovered = offer_recovery(&window, store, requested_path)) {
//     window.adopt(std::move(recovered->document));   // dirty, path = the original file
//     store.discard(recovered->key);                  // only once the copy is open (the window autosaves anew)
//   }
//
// Which entries are offered: those RecoveryStore::list() returns without an error and whose writer is not
// running (owner_running == false: another studio still has that notebook open). With `requested_path` (a
// notebook given on the command line) only that file's entry is offered; otherwise the entries newest first,
// one prompt each ("Recover unsaved changes to X from 18:02?" Recover / Discard) until one is recovered — the
// window holds one notebook, so the rest stay in the store for the next start. Discard deletes that entry.
// An entry that cannot be restored is reported (report_problem) and kept on disk for the user to inspect.
#pragma once
#include <QString>

#include <optional>
#include <string>

#include "notebook/notebook_document.h"
#include "notebook/recovery_store.h"

class QWidget;

namespace rt::studio {

struct RecoveredNotebook {
  NotebookDocument document;
  std::string key;
  bool original_changed = false;  // the file on disk moved on since the edits started
};

std::optional<RecoveredNotebook> offer_recovery(QWidget* parent, RecoveryStore& store,
                                                const QString& requested_path = {});

}  // namespace rt::studio
