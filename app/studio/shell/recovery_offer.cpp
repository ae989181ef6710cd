#include "recovery_offer.h"

#include <QDateTime>
#include <QFileInfo>
#include <QObject>

#include <chrono>
#include <exception>

#include "shell/prompts.h"

namespace rt::studio {
namespace {

QDateTime to_qt(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  return QDateTime::fromMSecsSinceEpoch(ms);
}

bool same_file(const std::filesystem::path& a, const QString& b) {
  return !a.empty() && QFileInfo(QString::fromStdString(a.string())).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}

}  // namespace

std::optional<RecoveredNotebook> offer_recovery(QWidget* parent, RecoveryStore& store, const QString& requested_path) {
  std::vector<RecoveryEntry> entries;
  try {
    entries = store.list();
  } catch (const std::exception& e) {
    report_problem(parent, QObject::tr("Cannot read recovery copies"),
                   QObject::tr("The recovery folder %1 could not be read: %2")
                       .arg(QString::fromStdString(store.directory().string()), QString::fromStdString(e.what())),
                   QObject::tr("Unsaved edits from an earlier session, if any, are still in that folder."));
    return std::nullopt;
  }
  for (const RecoveryEntry& entry : entries) {
    if (!entry.error.empty() || entry.owner_running) continue;
    if (!requested_path.isEmpty() && !same_file(entry.original_path, requested_path)) continue;
    const QString name = QString::fromStdString(entry.display_name);
    if (ask_recover(parent, name, to_qt(entry.saved_at)) == RecoveryChoice::discard) {
      try {
        store.discard(entry.key);
      } catch (const std::exception& e) {
        report_problem(parent, QObject::tr("Cannot delete the recovery copy"), QString::fromStdString(e.what()),
                       QObject::tr("It will be offered again at the next start; delete it by hand to stop that."));
      }
      continue;
    }
    try {
      return RecoveredNotebook{store.restore(entry), entry.key, entry.original_changed};
    } catch (const std::exception& e) {
      report_problem(parent, QObject::tr("Cannot recover %1").arg(name),
                     QObject::tr("The recovery copy %1 could not be read: %2")
                         .arg(QString::fromStdString(entry.recovery_file.string()), QString::fromStdString(e.what())),
                     QObject::tr("The copy was left in place so nothing is lost; it is a JSON file you can open "
                                 "in an editor."));
    }
  }
  return std::nullopt;
}

}  // namespace rt::studio
