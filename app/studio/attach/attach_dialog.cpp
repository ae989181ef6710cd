#include "attach/attach_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "attach/attached_sessions.h"
#include "attach/rank_rows.h"

namespace rt::studio {
namespace {

constexpr std::chrono::milliseconds kStatusTimeout{1000};
QString qs(const std::string& s) { return QString::fromStdString(s); }

enum JobColumn { kJobName, kJobRanks, kJobState, kJobProgram };
enum RankColumn { kRank, kHost, kPid, kStep, kStepTime, kOps, kDropped, kState, kRankColumns };

}  // namespace

AttachDialog::AttachDialog(QWidget* parent) : QDialog(parent), hosts_(attach_hosts()) {
  setObjectName(QStringLiteral("attachDialog"));
  setWindowTitle(tr("Attach to a Running Job"));
  resize(980, 560);

  host_combo_ = new QComboBox(this);
  host_combo_->setObjectName(QStringLiteral("hostCombo"));
  for (const auto& h : hosts_) host_combo_->addItem(qs(h->name()));
  host_combo_->setToolTip(tr("Where the jobs run. Jobs become attachable with `rtorch run --attach`, "
                             "`rtorch launch --attach`, RT_ATTACH=1 or rt.remote.serve()."));
  refresh_ = new QPushButton(tr("&Refresh"), this);
  refresh_->setObjectName(QStringLiteral("refreshButton"));
  auto* host_row = new QHBoxLayout;
  host_row->addWidget(new QLabel(tr("Host:"), this));
  host_row->addWidget(host_combo_, 1);
  host_row->addWidget(refresh_);

  jobs_ = new QTreeWidget(this);
  jobs_->setObjectName(QStringLiteral("jobList"));
  jobs_->setRootIsDecorated(false);
  jobs_->setUniformRowHeights(true);
  jobs_->setHeaderLabels({tr("Job"), tr("Ranks"), tr("State"), tr("Program")});
  jobs_->header()->setSectionResizeMode(kJobName, QHeaderView::ResizeToContents);
  jobs_->header()->setSectionResizeMode(kJobRanks, QHeaderView::ResizeToContents);
  jobs_->header()->setSectionResizeMode(kJobState, QHeaderView::ResizeToContents);
  jobs_->header()->setStretchLastSection(true);

  ranks_ = new QTableWidget(0, kRankColumns, this);
  ranks_->setObjectName(QStringLiteral("rankTable"));
  ranks_->setHorizontalHeaderLabels(
      {tr("Rank"), tr("Host"), tr("PID"), tr("Step"), tr("Step time"), tr("Ops"), tr("Dropped"), tr("State")});
  ranks_->verticalHeader()->hide();
  ranks_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  ranks_->setSelectionMode(QAbstractItemView::NoSelection);
  ranks_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  ranks_->horizontalHeader()->setStretchLastSection(true);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(jobs_);
  split->addWidget(ranks_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("statusLabel"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  attach_ = new QPushButton(tr("&Attach"), this);
  attach_->setObjectName(QStringLiteral("attachButton"));
  attach_->setToolTip(tr("Show the job's ranks as live sessions in the timeline, memory and scalars panels"));
  detach_ = new QPushButton(tr("&Detach"), this);
  detach_->setObjectName(QStringLiteral("detachButton"));
  detach_->setToolTip(tr("Stop following the job; what was received stays in the panels"));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  buttons->addButton(attach_, QDialogButtonBox::ActionRole);
  buttons->addButton(detach_, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(host_row);
  layout->addWidget(split, 1);
  layout->addWidget(status_);
  layout->addWidget(buttons);

  connect(refresh_, &QPushButton::clicked, this, &AttachDialog::refresh);
  connect(host_combo_, &QComboBox::currentIndexChanged, this, [this] {
    listed_.clear();
    rebuild_jobs();
    refresh();
  });
  connect(jobs_, &QTreeWidget::currentItemChanged, this, [this] {
    if (rebuilding_) return;
    update_ranks();
    update_buttons();
  });
  connect(attach_, &QPushButton::clicked, this, &AttachDialog::attachSelected);
  connect(detach_, &QPushButton::clicked, this, &AttachDialog::detachSelected);
  connect(&watcher_, &QFutureWatcher<Listing>::finished, this, &AttachDialog::on_listed);
  relist_timer_.setInterval(kRelistMs);
  connect(&relist_timer_, &QTimer::timeout, this, &AttachDialog::refresh);
  ranks_timer_.setInterval(kRanksRefreshMs);
  connect(&ranks_timer_, &QTimer::timeout, this, [this] {
    update_ranks();
    update_buttons();
  });
  update_buttons();
  refresh();
}

AttachDialog::~AttachDialog() { watcher_.disconnect(this); }

std::shared_ptr<const AttachHost> AttachDialog::host() const {
  const int i = host_combo_->currentIndex();
  return i >= 0 && size_t(i) < hosts_.size() ? hosts_[size_t(i)] : nullptr;
}

bool AttachDialog::listing() const { return watcher_.isRunning(); }

void AttachDialog::refresh() {
  auto h = host();
  if (!h || watcher_.isRunning()) return;
  show_status(listed_.empty() ? tr("Listing the jobs on %1…").arg(qs(h->name())) : status_->text(), false);
  watcher_.setFuture(QtConcurrent::run([h] {
    Listing l;
    try {
      l.jobs = h->list_jobs(kStatusTimeout);
    } catch (const std::exception& e) {
      l.error = QString::fromStdString(e.what());
    }
    return l;
  }));
}

void AttachDialog::on_listed() {
  Listing l = watcher_.result();
  listed_ = std::move(l.jobs);
  if (!l.error.isEmpty()) {
    show_status(l.error, true);
  } else if (listed_.empty()) {
    show_status(tr("No attachable job runs on %1. Start one with `rtorch run --attach train.py` or "
                   "`rtorch launch --attach --nproc-per-node N train.py` (`rtorch ps` lists them).")
                    .arg(host() ? qs(host()->name()) : QString()),
                false);
  } else {
    show_status(tr("%n attachable job(s) on %1.", nullptr, int(listed_.size())).arg(qs(host()->name())), false);
  }
  rebuild_jobs();
  emit listed();
}

void AttachDialog::rebuild_jobs() {
  // Attached jobs of this host that the listing no longer has (their processes exited) stay listed.
  const auto h = host();
  std::vector<JobListing> shown = listed_;
  if (h) {
    for (const AttachedSessionInfo& s : AttachedSessions::instance().list()) {
      const bool known = std::any_of(shown.begin(), shown.end(), [&](const JobListing& j) { return j.job == s.job; });
      const auto job = AttachedSessions::instance().find(s.job);
      if (!known && job && job->host_name() == h->name()) shown.push_back({s.job, h->name(), {}});
    }
  }
  const QString keep = selectedJob();
  rebuilding_ = true;
  jobs_->clear();
  QTreeWidgetItem* select = nullptr;
  for (const JobListing& j : shown) {
    const auto job = AttachedSessions::instance().find(j.job);
    const bool attached = job && !job->finished();
    const size_t ranks = job && j.ranks.empty() ? job->rank_count() : j.ranks.size();
    auto* item = new QTreeWidgetItem(jobs_);
    item->setText(kJobName, qs(j.job));
    item->setText(kJobRanks, j.world_size() > 0 ? QStringLiteral("%1 of %2").arg(ranks).arg(j.world_size())
                                                : QString::number(ranks));
    item->setText(kJobState, attached      ? tr("attached")
                             : j.ranks.empty() ? tr("ended")
                             : job           ? tr("detached")
                                             : tr("running"));
    item->setText(kJobProgram, qs(j.program()));
    item->setToolTip(kJobProgram, qs(j.program()));
    if (attached) {
      QFont bold = item->font(kJobName);
      bold.setBold(true);
      item->setFont(kJobName, bold);
    }
    if (item->text(kJobName) == keep) select = item;
  }
  listed_ = std::move(shown);
  if (!select && jobs_->topLevelItemCount() > 0) select = jobs_->topLevelItem(0);
  if (select) jobs_->setCurrentItem(select);
  rebuilding_ = false;
  update_ranks();
  update_buttons();
}

const JobListing* AttachDialog::selected_listing() const {
  const QString job = selectedJob();
  for (const JobListing& j : listed_)
    if (qs(j.job) == job) return &j;
  return nullptr;
}

void AttachDialog::update_ranks() {
  const JobListing* j = selected_listing();
  const auto attached = j ? AttachedSessions::instance().find(j->job) : nullptr;
  const std::vector<RankRow> rows = j ? rank_rows(*j, attached.get()) : std::vector<RankRow>{};
  ranks_->setRowCount(int(rows.size()));
  for (int r = 0; r < int(rows.size()); ++r) {
    const RankRow& row = rows[size_t(r)];
    const std::string cells[kRankColumns] = {row.rank, row.host, row.pid, row.step, row.step_time,
                                             row.ops,  row.dropped, row.state};
    for (int c = 0; c < kRankColumns; ++c) {
      QTableWidgetItem* item = ranks_->item(r, c);
      if (!item) {
        item = new QTableWidgetItem;
        if (c != kHost && c != kState) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        ranks_->setItem(r, c, item);
      }
      item->setText(qs(cells[c]));
      if (c == kState) {
        item->setToolTip(qs(cells[c]));
        item->setForeground(row.problem ? QColor(0xc0, 0x39, 0x2b) : row.ended ? QColor(0x80, 0x80, 0x80) : QColor(0x1e, 0x84, 0x49));
      }
    }
  }
}

void AttachDialog::update_buttons() {
  const JobListing* j = selected_listing();
  const auto job = j ? AttachedSessions::instance().find(j->job) : nullptr;
  const bool attached = job && !job->finished();
  attach_->setEnabled(j && !j->ranks.empty() && !attached);
  detach_->setEnabled(attached && !job->detach_requested());
  if (attached) ranks_timer_.start();
}

int AttachDialog::jobCount() const { return jobs_->topLevelItemCount(); }

QString AttachDialog::jobName(int index) const {
  const QTreeWidgetItem* item = jobs_->topLevelItem(index);
  return item ? item->text(kJobName) : QString();
}

bool AttachDialog::selectJob(const QString& job) {
  for (int i = 0; i < jobs_->topLevelItemCount(); ++i)
    if (jobs_->topLevelItem(i)->text(kJobName) == job) {
      jobs_->setCurrentItem(jobs_->topLevelItem(i));
      return true;
    }
  return false;
}

QString AttachDialog::selectedJob() const {
  const QTreeWidgetItem* item = jobs_->currentItem();
  return item ? item->text(kJobName) : QString();
}

bool AttachDialog::attachSelected() {
  const JobListing* j = selected_listing();
  const auto h = host();
  if (!j || !h || j->ranks.empty()) return false;
  const JobListing job = *j;
  try {
    AttachedSessions::instance().attach(h, job);
  } catch (const std::exception& e) {
    show_status(QString::fromStdString(e.what()), true);
    return false;
  }
  show_status(tr("Attached to %1: its ranks are live sessions in the timeline, memory and scalars panels "
                 "(\"%1 rank N (attached)\").").arg(qs(job.job)),
              false);
  rebuild_jobs();
  ranks_timer_.start();
  emit attached(qs(job.job));
  return true;
}

bool AttachDialog::detachSelected() {
  const JobListing* j = selected_listing();
  if (!j || !AttachedSessions::instance().find(j->job)) return false;
  AttachedSessions::instance().detach(j->job);
  show_status(tr("Detached from %1; what it sent stays in the panels.").arg(qs(j->job)), false);
  update_buttons();
  return true;
}

QString AttachDialog::statusText() const { return status_->text(); }

void AttachDialog::show_status(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

void AttachDialog::showEvent(QShowEvent* event) {
  QDialog::showEvent(event);
  relist_timer_.start();
  ranks_timer_.start();
  refresh();
}

void AttachDialog::hideEvent(QHideEvent* event) {
  QDialog::hideEvent(event);
  relist_timer_.stop();
  ranks_timer_.stop();
}

}  // namespace rt::studio
