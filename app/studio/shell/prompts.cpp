#include "prompts.h"

#include <QAbstractButton>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QTimer>

#include <cstdio>

namespace rt::studio {
namespace {

QString plain(QString text) { return text.remove('&').trimmed().toLower(); }

// The scripted answer for `key` in RT_STUDIO_AUTO_ANSWER, or an empty string.
QString scripted_answer(const QString& key) {
  const QString spec = qEnvironmentVariable("RT_STUDIO_AUTO_ANSWER");
  for (const QString& item : spec.split(',', Qt::SkipEmptyParts)) {
    const qsizetype eq = item.indexOf('=');
    if (eq > 0 && item.left(eq).trimmed() == key) return item.mid(eq + 1).trimmed();
  }
  return {};
}

}  // namespace

void exec_prompt(QMessageBox& box, const QString& key) {
  box.setObjectName(key);
  const QString answer = scripted_answer(key);
  if (!answer.isEmpty()) {
    QAbstractButton* target = nullptr;
    for (QAbstractButton* button : box.buttons())
      if (plain(button->text()) == plain(answer)) target = button;
    if (target) {
      std::fprintf(stderr, "rtorch-studio: prompt %s: %s -> %s\n", qPrintable(key),
                   qPrintable(QString(box.text()).replace('\n', ' ')), qPrintable(plain(answer)));
      QTimer::singleShot(0, target, &QAbstractButton::click);
    } else {
      std::fprintf(stderr, "rtorch-studio: RT_STUDIO_AUTO_ANSWER names no button '%s' on prompt %s; waiting for the user\n",
                   qPrintable(answer), qPrintable(key));
    }
  }
  box.exec();
}

UnsavedChoice ask_unsaved_changes(QWidget* parent, const QString& document_name, const QString& action) {
  QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved changes"),
                  QObject::tr("Save changes to %1 before %2?").arg(document_name, action), QMessageBox::NoButton,
                  parent);
  box.setInformativeText(QObject::tr("Your changes are lost if you discard them."));
  QPushButton* save = box.addButton(QMessageBox::Save);
  QPushButton* discard = box.addButton(QMessageBox::Discard);
  QPushButton* cancel = box.addButton(QMessageBox::Cancel);
  box.setDefaultButton(save);
  box.setEscapeButton(cancel);
  exec_prompt(box, QStringLiteral("unsaved"));
  if (box.clickedButton() == save) return UnsavedChoice::save;
  if (box.clickedButton() == discard) return UnsavedChoice::discard;
  return UnsavedChoice::cancel;
}

RecoveryChoice ask_recover(QWidget* parent, const QString& document_name, const QDateTime& saved_at) {
  const QString when = saved_at.date() == QDate::currentDate()
                           ? QLocale().toString(saved_at.time(), QStringLiteral("HH:mm"))
                           : QLocale().toString(saved_at, QStringLiteral("yyyy-MM-dd HH:mm"));
  QMessageBox box(QMessageBox::Question, QObject::tr("Recover unsaved changes"),
                  QObject::tr("Recover unsaved changes to %1 from %2?").arg(document_name, when),
                  QMessageBox::NoButton, parent);
  box.setInformativeText(
      QObject::tr("The studio stopped before these edits were saved. Recover opens them as an unsaved notebook; "
                  "Discard deletes the recovered copy."));
  QPushButton* recover = box.addButton(QObject::tr("Recover"), QMessageBox::AcceptRole);
  QPushButton* discard = box.addButton(QMessageBox::Discard);
  box.setDefaultButton(recover);
  box.setEscapeButton(recover);  // closing the box must never delete the user's edits
  exec_prompt(box, QStringLiteral("recover"));
  return box.clickedButton() == discard ? RecoveryChoice::discard : RecoveryChoice::recover;
}

bool confirm_restart(QWidget* parent) {
  QMessageBox box(QMessageBox::Question, QObject::tr("Restart kernel"),
                  QObject::tr("Restart the kernel? Every variable is lost; the notebook and its outputs stay."),
                  QMessageBox::NoButton, parent);
  QPushButton* restart = box.addButton(QObject::tr("Restart"), QMessageBox::DestructiveRole);
  QPushButton* cancel = box.addButton(QMessageBox::Cancel);
  box.setDefaultButton(restart);
  box.setEscapeButton(cancel);
  exec_prompt(box, QStringLiteral("restart"));
  return box.clickedButton() == restart;
}

void report_problem(QWidget* parent, const QString& title, const QString& what, const QString& fix) {
  QMessageBox box(QMessageBox::Warning, title, what, QMessageBox::Ok, parent);
  box.setInformativeText(fix);
  exec_prompt(box, QStringLiteral("problem"));
}

}  // namespace rt::studio
