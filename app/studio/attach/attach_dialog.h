// app/studio/attach/attach_dialog.h — Remote > Attach…: the hosts, the attachable jobs on the chosen host and
// their ranks (rank, host, pid, step, step time, ops, dropped records, state), with Attach and Detach. An
// attached job's ranks become live sessions in every visualizer panel's session picker
// ("JOB rank N (attached)", attach/attached_sessions.h).
//
//   auto* dialog = new AttachDialog(main_window);   // non-modal; lists at once, then every kRelistMs
//   dialog->show();
//   dialog->selectJob("mnist-1f2e");  dialog->attachSelected();     // what the buttons do
//
// Contracts
// - Listing (AttachHost::list_jobs: a status request per rank) runs on a worker thread; the GUI thread never
//   waits on a socket. While one listing runs no other starts; its result replaces the list, keeping the
//   selected job selected when it is still there.
// - Jobs the studio is attached to stay in the list after their processes exited, marked so, with their
//   ranks' final states ("process exited", "connection lost: …"); their rows refresh every kRanksRefreshMs.
// - Attach and Detach act on the selected job (AttachedSessions::attach / detach); a refusal (the job is
//   attached already) is shown in the status line, never thrown.
#pragma once
#include <QDialog>
#include <QFutureWatcher>
#include <QTimer>

#include <memory>
#include <string>
#include <vector>

#include "attach/attach_host.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QTreeWidget;

namespace rt::studio {

class AttachDialog : public QDialog {
  Q_OBJECT

 public:
  static constexpr int kRelistMs = 3000;
  static constexpr int kRanksRefreshMs = 500;

  explicit AttachDialog(QWidget* parent = nullptr);
  ~AttachDialog() override;

  bool listing() const;             // a listing runs now
  int jobCount() const;
  QString jobName(int index) const;
  bool selectJob(const QString& job);
  QString selectedJob() const;
  bool attachSelected();
  bool detachSelected();
  QTableWidget* rankTable() const { return ranks_; }
  QString statusText() const;

 public slots:
  void refresh();                   // lists the chosen host's jobs again (off the GUI thread)

 signals:
  void listed();                    // a listing finished (the list shows it)
  void attached(const QString& job);

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  struct Listing {
    std::vector<JobListing> jobs;
    QString error;
  };
  void on_listed();
  void rebuild_jobs();
  void update_ranks();
  void update_buttons();
  const JobListing* selected_listing() const;
  std::shared_ptr<const AttachHost> host() const;
  void show_status(const QString& text, bool error);

  std::vector<std::shared_ptr<const AttachHost>> hosts_;
  QComboBox* host_combo_ = nullptr;
  QTreeWidget* jobs_ = nullptr;
  QTableWidget* ranks_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* refresh_ = nullptr;
  QPushButton* attach_ = nullptr;
  QPushButton* detach_ = nullptr;
  std::vector<JobListing> listed_;  // the last listing, plus attached jobs it no longer has
  QFutureWatcher<Listing> watcher_;
  QTimer relist_timer_;
  QTimer ranks_timer_;
  bool rebuilding_ = false;
};

}  // namespace rt::studio
