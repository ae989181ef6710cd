#include "viz_panels/session_picker.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

#include <fmt/format.h>

#include <optional>

#include "rt/error.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/session_registry.h"
#include "rt/prof/store.h"

namespace rt::studio {

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
    if (is_live) {
      read_live_from_start(e.source.live_id);
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
  status_->setText(is_live && e.recording ? tr("recording…") : QString());
  status_->setToolTip(QString());
  if (is_live && e.recording) live_timer_.start();
  else live_timer_.stop();
  emit sessionLoaded(std::move(data), is_live);
  return true;
}

void SessionPicker::read_live_from_start(uint64_t id) {
  auto delta = prof::SessionRegistry::instance().read_since(id, prof::SnapshotCursor{});
  if (!delta)
    throw rt::ValueError(
        fmt::format("live session {} is no longer kept (only the last {} sessions of this process "
                    "are)",
                    id, prof::SessionRegistry::kCapacity));
  live_cursor_ = delta->cursor;
  live_data_ = std::make_shared<prof::SessionData>(std::move(delta->records));
}

void SessionPicker::refresh_current_live() {
  if (current_ < 0 || size_t(current_) >= live_.size() || !live_data_) {
    live_timer_.stop();
    return;
  }
  const uint64_t id = live_[size_t(current_)].source.live_id;
  // Ask first, read second: a session that stopped in between is then read complete.
  bool recording = false;
  for (const prof::RegisteredSession& s : prof::SessionRegistry::instance().list())
    if (s.id == id) recording = s.recording;
  std::optional<prof::SessionDelta> delta;
  try {
    delta = prof::SessionRegistry::instance().read_since(id, live_cursor_);
  } catch (const std::exception&) {  // the cursor does not fit the session: read it whole
    delta = prof::SessionRegistry::instance().read_since(id, prof::SnapshotCursor{});
  }
  if (!delta) {
    live_timer_.stop();
    return;
  }
  if (!recording) {
    live_timer_.stop();
    status_->setText(QString());
  }
  live_cursor_ = delta->cursor;
  if (!delta->reset) {
    try {
      const prof::SessionGrowth growth = prof::append_delta(*live_data_, std::move(*delta));
      if (growth.any()) emit sessionGrew(live_data_, growth);
      return;
    } catch (const std::exception&) {  // the data does not continue: read the session whole
      delta = prof::SessionRegistry::instance().read_since(id, prof::SnapshotCursor{});
      if (!delta) return;
      live_cursor_ = delta->cursor;
    }
  }
  live_data_ = std::make_shared<prof::SessionData>(std::move(delta->records));
  emit sessionLoaded(live_data_, true);
}

void SessionPicker::refreshLiveSessions() {
  const auto listed = prof::SessionRegistry::instance().list();
  std::vector<Entry> live;
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
  // Keep the current choice selected across the rebuild.
  int select = -1;
  if (current_ >= 0 && size_t(current_) < live_.size()) {
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i].source.live_id == live_[size_t(current_)].source.live_id) select = int(i);
  } else if (current_ >= 0) {
    select = int(live.size()) + current_ - int(live_.size());
  }
  const bool was_live_recording = current_ >= 0 && size_t(current_) < live_.size() && live_[size_t(current_)].recording;
  // Follow the training in the notebook: with nothing chosen, or a session of this process chosen, a session
  // that starts in this process is shown at once (the list is newest first). An opened store or trace stays.
  const bool following = current_ < 0 || size_t(current_) < live_.size();
  const bool new_session =
      !live.empty() && (live_.empty() || live.front().source.live_id != live_.front().source.live_id);
  live_ = std::move(live);
  current_ = select;
  rebuild_combo(select);
  if (following && new_session) {
    rebuild_combo(0);
    load(0);
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
