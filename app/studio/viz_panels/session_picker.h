// viz_panels/session_picker.h — the toolbar of a visualizer panel that chooses its session: a list of
// the sessions recorded in this process (live training from the notebook, refreshed while it records), of the
// ranks of jobs attached with Remote > Attach… (refreshed while connected)
// and of the sessions of opened stores and traces, with "Open store…" and "Open trace…" buttons.
//
//   auto* picker = new SessionPicker(parent);
//   connect(picker, &SessionPicker::sessionLoaded, this, [host](auto data, bool live) { ... });   // build views
//   connect(picker, &SessionPicker::sessionGrew, this, [](auto data, auto growth) { ... });      // append to them
//   picker->openStore("runs.sqlite");     // what "Open store…" does after its file dialog
//
// Contracts
// - sessionLoaded is emitted on the GUI thread after the user (or openStore/openTrace/choose) picks a
//   session: the views are built from `data`.
// - While the chosen live session records, every kLiveRefreshMs the picker reads only what the session
//   recorded since its previous read (SessionRegistry::read_since, rt/prof/session_delta.h), appends it to
//   the data it emitted (the same SessionData object, which it owns and grows) and emits sessionGrew with
//   where it grew, unless nothing changed. When a read is a reset (the session stopped and sorted its
//   records, or the picker could not continue its data) it emits sessionLoaded(data, true) with new data
//   instead, as for the first load.
// - Errors (unreadable file, vanished session) are shown in the toolbar and emitted as failed(); the
//   previous session stays shown. Loading runs on the GUI thread.
// - Live entries come from rt::prof::SessionRegistry and, first, from the jobs the studio is attached to
//   (attach/attached_sessions.h: "JOB rank N (attached)", read the same way while the rank is connected; the
//   toolbar says "live", "process exited", "connection lost: …" or "detached"), polled every kListRefreshMs
//   while visible. A session that starts in this process, or a job just attached, is shown at once when the
//   picker shows nothing or a live session.
// - Attached jobs of two ranks or more also get "JOB: all N ranks (attached)" when setOffersJobs(true): the ranks'
//   sessions merged as for a stored job, rebuilt (sessionLoaded, live) at most every kMergedRefreshMs while any
//   rank receives.
// - Launched jobs (setOffersJobs(true): the timeline and scalars panels): when an opened store holds the
//   sessions of a job's ranks (rt::prof::launch_jobs: same job id, two ranks or more), the list also has
//   "job <id>: all N ranks" after the store's sessions; choosing it emits the ranks merged into one
//   SessionData (rt::prof::merge_rank_sessions: "rank N · " tracks side by side). Memory views do not offer it
//   (the ranks' allocations would add up on one device).
#pragma once
#include <QElapsedTimer>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "viz_panels/session_source.h"

class QComboBox;
class QLabel;
class QHBoxLayout;

namespace rt::studio {

class SessionPicker : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kListRefreshMs = 1000;
  static constexpr int kLiveRefreshMs = 500;
  static constexpr int kMergedRefreshMs = 2000;

  // Whether a live entry's session may still grow, and what the toolbar says of it.
  struct LiveState {
    bool growing = false;
    QString status;
  };

  explicit SessionPicker(QWidget* parent = nullptr);

  // Lists the store's sessions and shows the newest; false (and the reason shown) when it cannot be read.
  bool openStore(const QString& path);
  bool openTrace(const QString& path);
  // Shows entry `index` of the list (as if the user chose it).
  bool choose(int index);
  int count() const;
  int currentIndex() const { return current_; }  // the entry shown, -1 when none
  QString entryText(int index) const;
  QString errorText() const;
  QString statusText() const;  // what the toolbar says of the shown session ("recording…", "process exited", ...)
  // Whether stores' launched jobs get an "all ranks" entry (see the contracts); takes effect at the next openStore.
  void setOffersJobs(bool offers) { offers_jobs_ = offers; }
  bool offersJobs() const { return offers_jobs_; }
  // Extra widgets (e.g. the scalars panel's "Overlay" check box) go at the end of the toolbar.
  void addTrailingWidget(QWidget* widget);

 public slots:
  void refreshLiveSessions();

 signals:
  void sessionLoaded(std::shared_ptr<const rt::prof::SessionData> data, bool live);
  void sessionGrew(std::shared_ptr<const rt::prof::SessionData> data, rt::prof::SessionGrowth growth);
  void failed(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  struct Entry {
    SessionSource source;
    QString text;
    bool recording = false;
  };
  void rebuild_combo(int select);
  bool load(int index);
  void show_error(const QString& message);
  void refresh_current_live();
  void refresh_attached_job(const SessionSource& source, const LiveState& state);
  // Reads a live entry's session from the start (a reset) into live_data_; throws rt::ValueError when it left.
  void read_live_from_start(const SessionSource& source);

  QComboBox* combo_ = nullptr;
  QLabel* status_ = nullptr;
  QHBoxLayout* row_ = nullptr;
  std::vector<Entry> live_;     // from the registry, newest first
  std::vector<Entry> opened_;   // from stores and traces, in the order opened
  int current_ = -1;            // index into the combined list
  std::shared_ptr<prof::SessionData> live_data_;  // the shown live session as read so far, grown at each read
  prof::SnapshotCursor live_cursor_;              // where the reads of live_data_ stand
  uint64_t merged_generation_ = 0;                // an attached job's "all ranks" entry: the job's generation
  QElapsedTimer merged_clock_;                    // ... and when it was merged
  bool rebuilding_ = false;
  bool offers_jobs_ = false;
  QTimer list_timer_;
  QTimer live_timer_;
};

}  // namespace rt::studio
