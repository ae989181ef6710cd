#include "viz_panels/session_picker.h"

#include <QComboBox>
#include <QStringList>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "attach/attached_sessions.h"
#include "rt/error.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/session_registry.h"
#include "rt/prof/store.h"

namespace rt::studio {
namespace {

// A live entry's session read from `cursor`: one recorded in this process or a rank the studio is attached to.
std::optional<prof::SessionDelta> read_live(const SessionSource& s, const prof::SnapshotCursor& cursor) {
  if (s.kind == SessionSource::Kind::Attached) return AttachedSessions::instance().read_since(s.live_id, cursor);
  return prof::SessionRegistry::instance().read_since(s.live_id, cursor);
}

using LiveState = SessionPicker::LiveState;

LiveState live_state(const SessionSource& s) {
  LiveState state;
  if (s.kind == SessionSource::Kind::AttachedJob) {
    const auto job = AttachedSessions::instance().find(s.job_id);
    if (!job) return state;
    state.growing = !job->finished();
    QStringList ranks;
    for (size_t i = 0; i < job->rank_count(); ++i) {
      const RankState r = job->rank_state(i);
      ranks << QObject::tr("rank %1 %2").arg(r.manifest.rank).arg(QString::fromUtf8(phase_text(r.phase)));
    }
    state.status = ranks.join(QStringLiteral(", "));
    return state;
  }
  if (s.kind == SessionSource::Kind::Attached) {
    if (const auto info = AttachedSessions::instance().info(s.live_id)) {
      state.growing = !phase_ended(info->phase);
      state.status = QString::fromUtf8(phase_text(info->phase));
      if (!info->message.empty()) state.status += QStringLiteral(": ") + QString::fromStdString(info->message);
      if (info->dropped > 0) state.status += QObject::tr(" (%1 records dropped by the agent)").arg(info->dropped);
    }
    return state;
  }
  for (const prof::RegisteredSession& r : prof::SessionRegistry::instance().list())
    if (r.id == s.live_id) state.growing = r.recording;
  if (state.growing) state.status = QObject::tr("recording…");
  return state;
}

}  // namespace

SessionPicker::SessionPicker(QWidget* parent) : QWidget(parent) {
  row_ = new QHBoxLayout(this);
  row_->setContentsMargins(4, 2, 4, 2);
  row_->setSpacing(6);
  combo_ = new QComboBox(this);
  combo_->setObjectName(QStringLiteral("sessionCombo"));
  combo_->setMinimumContentsLength(32);
  combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo_->setPlaceholderText(tr("No session: open a store or a trace, or profile a cell"));
  auto* open_store = new QToolButton(this);
  open_store->setText(tr("Open store…"));
  open_store->setToolTip(tr("Open a SQLite profiling store (runs.sqlite) and list its sessions"));
  auto* open_trace = new QToolButton(this);
  open_trace->setText(tr("Open trace…"));
  open_trace->setToolTip(tr("Import a Chrome / Perfetto / PyTorch profiler trace (.json, .json.gz)"));
  status_ = new QLabel(this);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  row_->addWidget(combo_, 1);
  row_->addWidget(open_store);
  row_->addWidget(open_trace);
  row_->addWidget(status_, 2);

  connect(combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (!rebuilding_ && index >= 0) load(index);
  });
  connect(open_store, &QToolButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open profiling store"), QString(),
                                                      tr("SQLite stores (*.sqlite *.db);;All files (*)"));
    if (!path.isEmpty()) openStore(path);
  });
  connect(open_trace, &QToolButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open trace"), QString(),
                                                      tr("Chrome traces (*.json *.json.gz);;All files (*)"));
    if (!path.isEmpty()) openTrace(path);
  });
  list_timer_.setInterval(kListRefreshMs);
  connect(&list_timer_, &QTimer::timeout, this, &SessionPicker::refreshLiveSessions);
  live_timer_.setInterval(kLiveRefreshMs);
  connect(&live_timer_, &QTimer::timeout, this, &SessionPicker::refresh_current_live);
  refreshLiveSessions();
}

int SessionPicker::count() const { return int(live_.size() + opened_.size()); }

QString SessionPicker::entryText(int index) const { return combo_->itemText(index); }

QString SessionPicker::errorText() const { return status_->property("error").toBool() ? status_->text() : QString(); }

QString SessionPicker::statusText() const { return status_->text(); }

void SessionPicker::addTrailingWidget(QWidget* widget) { row_->addWidget(widget); }

void SessionPicker::show_error(const QString& message) {
  status_->setText(message);
  status_->setToolTip(message);
  status_->setProperty("error", true);
  status_->setStyleSheet(QStringLiteral("color: #e0655a;"));
  emit failed(message);
}

void SessionPicker::rebuild_combo(int select) {
  rebuilding_ = true;
  combo_->clear();
  for (const Entry& e : live_) combo_->addItem(e.text);
  for (const Entry& e : opened_) combo_->addItem(e.text);
  combo_->setCurrentIndex(select);
  rebuilding_ = false;
}

bool SessionPicker::openStore(const QString& path) {
  std::vector<prof::SessionInfo> sessions;
  try {
    if (!QFileInfo(path).isFile()) throw rt::ValueError(fmt::format("cannot open store '{}': no such file", path.toStdString()));
    sessions = prof::Store::open(path.toStdString()).list_sessions();
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
  if (sessions.empty()) {
    show_error(tr("%1 holds no sessions").arg(QFileInfo(path).fileName()));
    return false;
  }
  // Opening a store again lists its sessions afresh (a running capture may have added some).
  const std::string key = path.toStdString();
  std::erase_if(opened_, [&](const Entry& e) {
    return (e.source.kind == SessionSource::Kind::Store || e.source.kind == SessionSource::Kind::StoreJob) &&
           e.source.path == key;
  });
  if (current_ >= int(live_.size())) current_ = -1;  // indexes moved; load() below sets it again
  const size_t first = opened_.size();
  for (const prof::SessionInfo& info : sessions) {
    Entry e;
    e.source.kind = SessionSource::Kind::Store;
    e.source.path = path.toStdString();
    e.source.session_id = info.id;
    e.text = QStringLiteral("%1 #%2  %3  (%4 ops%5)")
                 .arg(QFileInfo(path).fileName())
                 .arg(info.id)
                 .arg(QString::fromStdString(info.name.empty() ? "unnamed" : info.name))
                 .arg(info.op_count)
                 .arg(info.complete ? QString() : tr(", incomplete"));
    opened_.push_back(std::move(e));
  }
  // Show the store's newest session.
  size_t newest = first;
  for (size_t i = first; i < opened_.size(); ++i)
    if (*opened_[i].source.session_id > *opened_[newest].source.session_id) newest = i;
  if (offers_jobs_) {
    for (const prof::LaunchJob& job : prof::launch_jobs(sessions)) {
      if (job.ranks.size() < 2) continue;  // one rank: its own entry shows it
      Entry e;
      e.source.kind = SessionSource::Kind::StoreJob;
      e.source.path = path.toStdString();
      e.source.job_id = job.job_id;
      e.source.restart_count = job.restart_count;
      e.text = QStringLiteral("%1  job %2: all %3 ranks%4")
                   .arg(QFileInfo(path).fileName(), QString::fromStdString(job.job_id))
                   .arg(job.ranks.size())
                   .arg(job.restart_count > 0 ? tr(" (restart %1)").arg(job.restart_count) : QString());
      opened_.push_back(std::move(e));
    }
  }
  const int index = int(live_.size() + newest);
  rebuild_combo(index);
  return load(index);
}

bool SessionPicker::openTrace(const QString& path) {
  Entry e;
  e.source.kind = SessionSource::Kind::Trace;
  e.source.path = path.toStdString();
  e.text = QFileInfo(path).fileName() + tr("  (trace)");
  opened_.push_back(e);
  const int index = int(live_.size() + opened_.size() - 1);
  rebuild_combo(index);
  if (load(index)) return true;
  opened_.pop_back();
  rebuild_combo(current_);
  return false;
}

bool SessionPicker::choose(int index) {
  if (index < 0 || index >= count()) return false;
  rebuild_combo(index);
  return load(index);
}

bool SessionPicker::load(int index) {
  const bool is_live = size_t(index) < live_.size();
  const Entry& e = is_live ? live_[size_t(index)] : opened_[size_t(index) - live_.size()];
  std::shared_ptr<const prof::SessionData> data;
  try {
    if (is_live && e.source.kind == SessionSource::Kind::AttachedJob) {
      const auto job = AttachedSessions::instance().find(e.source.job_id);
      merged_generation_ = job ? job->generation() : 0;
      merged_clock_.start();
      live_data_ = std::const_pointer_cast<prof::SessionData>(load_session(e.source));
      data = live_data_;
    } else if (is_live) {
      read_live_from_start(e.source);
      data = live_data_;
    } else {
      data = load_session(e.source);
      live_data_.reset();
    }
  } catch (const std::exception& ex) {
    show_error(QString::fromStdString(ex.what()));
    return false;
  }
  current_ = index;
  status_->setProperty("error", false);
  status_->setStyleSheet(QString());
  const LiveState state = is_live ? live_state(e.source) : LiveState{};
  status_->setText(state.status);
  status_->setToolTip(state.status);
  if (is_live && state.growing) live_timer_.start();
  else live_timer_.stop();
  emit sessionLoaded(std::move(data), is_live);
  return true;
}

void SessionPicker::read_live_from_start(const SessionSource& source) {
  auto delta = read_live(source, prof::SnapshotCursor{});
  if (!delta && source.kind == SessionSource::Kind::Attached)
    throw rt::ValueError(fmt::format("attached session {} is no longer listed (the studio keeps the last {} "
                                     "detached jobs)", source.live_id, AttachedSessions::kKeepEnded));
  if (!delta)
    throw rt::ValueError(
        fmt::format("live session {} is no longer kept (only the last {} sessions of this process "
                    "are)",
                    source.live_id, prof::SessionRegistry::kCapacity));
  live_cursor_ = delta->cursor;
  live_data_ = std::make_shared<prof::SessionData>(std::move(delta->records));
}

void SessionPicker::refresh_current_live() {
  if (current_ < 0 || size_t(current_) >= live_.size() || !live_data_) {
    live_timer_.stop();
    return;
  }
  const SessionSource source = live_[size_t(current_)].source;
  // Ask first, read second: a session that stopped in between is then read complete.
  const LiveState state = live_state(source);
  if (source.kind == SessionSource::Kind::AttachedJob) {
    refresh_attached_job(source, state);
    return;
  }
  std::optional<prof::SessionDelta> delta;
  try {
    delta = read_live(source, live_cursor_);
  } catch (const std::exception&) {  // the cursor does not fit the session: read it whole
    delta = read_live(source, prof::SnapshotCursor{});
  }
  if (!delta) {
    live_timer_.stop();
    return;
  }
  if (status_->text() != state.status && !status_->property("error").toBool()) {
    status_->setText(state.status);
    status_->setToolTip(state.status);
  }
  if (!state.growing) live_timer_.stop();
  live_cursor_ = delta->cursor;
  if (!delta->reset) {
    try {
      const prof::SessionGrowth growth = prof::append_delta(*live_data_, std::move(*delta));
      if (growth.any()) emit sessionGrew(live_data_, growth);
      return;
    } catch (const std::exception&) {  // the data does not continue: read the session whole
      delta = read_live(source, prof::SnapshotCursor{});
      if (!delta) return;
      live_cursor_ = delta->cursor;
    }
  }
  live_data_ = std::make_shared<prof::SessionData>(std::move(delta->records));
  emit sessionLoaded(live_data_, true);
}

// Merging the ranks costs the whole job's records, so a merged job is rebuilt at most every kMergedRefreshMs
// (and once more when its attachment ended), and only when a rank received something.
void SessionPicker::refresh_attached_job(const SessionSource& source, const LiveState& state) {
  status_->setText(state.status);
  status_->setToolTip(state.status);
  const auto job = AttachedSessions::instance().find(source.job_id);
  if (!job) {
    live_timer_.stop();
    return;
  }
  if (state.growing && merged_clock_.isValid() && !merged_clock_.hasExpired(kMergedRefreshMs)) return;
  if (!state.growing) live_timer_.stop();
  const uint64_t generation = job->generation();
  if (generation == merged_generation_) return;
  merged_generation_ = generation;
  merged_clock_.start();
  try {
    live_data_ = std::make_shared<prof::SessionData>(merge_attached_ranks(*job));
  } catch (const std::exception&) {
    return;  // no rank sent anything yet
  }
  emit sessionLoaded(live_data_, true);
}

void SessionPicker::refreshLiveSessions() {
  const auto listed = prof::SessionRegistry::instance().list();
  std::vector<Entry> live;
  // The ranks of attached jobs (Remote > Attach…), newest job first (with the timeline's "all ranks" entry first),
  // then this process's sessions.
  std::string previous_job;
  for (const AttachedSessionInfo& s : AttachedSessions::instance().list()) {
    if (offers_jobs_ && s.job != previous_job) {
      if (const auto job = AttachedSessions::instance().find(s.job); job && job->rank_count() >= 2) {
        Entry e;
        e.source.kind = SessionSource::Kind::AttachedJob;
        e.source.job_id = s.job;
        e.recording = !job->finished();
        e.text = QStringLiteral("%1 %2: all %3 ranks (attached%4)")
                     .arg(e.recording ? QStringLiteral("\u21C4") : QStringLiteral("\u00D7"),
                          QString::fromStdString(s.job))
                     .arg(job->rank_count())
                     .arg(e.recording ? QString() : tr(", ended"));
        live.push_back(std::move(e));
      }
    }
    previous_job = s.job;
    Entry e;
    e.source.kind = SessionSource::Kind::Attached;
    e.source.live_id = s.id;
    e.recording = !phase_ended(s.phase);
    e.text = QStringLiteral("%1 %2  (%3, %4 ops)")
                 .arg(e.recording ? QStringLiteral("\u21C4") : QStringLiteral("\u00D7"))
                 .arg(QString::fromStdString(s.name), QString::fromUtf8(phase_text(s.phase)))
                 .arg(s.ops);
    live.push_back(std::move(e));
  }
  for (const prof::RegisteredSession& s : listed) {
    Entry e;
    e.source.kind = SessionSource::Kind::Live;
    e.source.live_id = s.id;
    e.recording = s.recording;
    e.text = QStringLiteral("%1 %2  (%3)")
                 .arg(s.recording ? QStringLiteral("\u25CF") : QStringLiteral("\u25CB"))
                 .arg(QString::fromStdString(s.name))
                 .arg(s.recording ? tr("recording, %1 ops").arg(s.counts.ops) : tr("this process, %1 ops").arg(s.counts.ops));
    live.push_back(std::move(e));
  }
  bool same = live.size() == live_.size();
  for (size_t i = 0; same && i < live.size(); ++i) same = live[i].text == live_[i].text;
  if (same) return;
  auto same_source = [](const SessionSource& a, const SessionSource& b) {
    return a.kind == b.kind && a.live_id == b.live_id && a.job_id == b.job_id;
  };
  // Keep the current choice selected across the rebuild.
  int select = -1;
  if (current_ >= 0 && size_t(current_) < live_.size()) {
    for (size_t i = 0; i < live.size(); ++i)
      if (same_source(live[i].source, live_[size_t(current_)].source)) select = int(i);
  } else if (current_ >= 0) {
    select = int(live.size()) + current_ - int(live_.size());
  }
  const bool was_live_recording = current_ >= 0 && size_t(current_) < live_.size() && live_[size_t(current_)].recording;
  // Follow the training: with nothing chosen, or a live session chosen, a session that starts in this process or
  // a job just attached is shown at once (its first entry that was not listed before). An opened store or
  // trace stays.
  const bool following = current_ < 0 || size_t(current_) < live_.size();
  int new_session = -1;
  for (size_t i = 0; i < live.size() && new_session < 0; ++i) {
    const bool known = std::any_of(live_.begin(), live_.end(),
                                   [&](const Entry& old) { return same_source(old.source, live[i].source); });
    if (!known) new_session = int(i);
  }
  live_ = std::move(live);
  current_ = select;
  rebuild_combo(select);
  if (following && new_session >= 0) {
    rebuild_combo(new_session);
    load(new_session);
    return;
  }
  if (select >= 0 && size_t(select) < live_.size() && live_[size_t(select)].recording && !was_live_recording)
    live_timer_.start();
}

void SessionPicker::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshLiveSessions();
  list_timer_.start();
}

void SessionPicker::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  list_timer_.stop();
}

}  // namespace rt::studio
