// app/studio/shell/prompts.h — the questions and error reports the shell puts in front of the user.
//
//   switch (ask_unsaved_changes(this, "train.ipynb")) {
//     case UnsavedChoice::save: ...; case UnsavedChoice::discard: ...; case UnsavedChoice::cancel: return;
//   }
//   report_problem(this, "Cannot open notebook", "/tmp/x.ipynb is not a notebook: ...", "Pick an .ipynb file.");
//   if (ask_recover(this, "train.ipynb", saved_at) == RecoveryChoice::recover) ...
//
// Every prompt is a modal QMessageBox whose objectName is its key ("unsaved", "problem", "recover", "restart"), so tests
// can find the active one. Scripted answers for tests of a real studio process (no one to click): the
// environment variable RT_STUDIO_AUTO_ANSWER="recover=Recover,unsaved=Discard,problem=OK" makes the named
// prompt click its button (matched by its text, case-insensitive, '&' ignored) as soon as it is shown; the
// prompt still runs through QMessageBox::exec, and its text is written to stderr as
// "rtorch-studio: prompt <key>: <text> -> <button>". Prompts without a scripted answer wait for the user.
#pragma once
#include <QDateTime>
#include <QString>

class QMessageBox;
class QWidget;

namespace rt::studio {

enum class UnsavedChoice { save, discard, cancel };
enum class RecoveryChoice { recover, discard };

// "Save changes to <name> before closing?" Save / Discard / Cancel (Escape cancels).
UnsavedChoice ask_unsaved_changes(QWidget* parent, const QString& document_name, const QString& action);

// "Recover unsaved changes to <name> from <time>?" Recover / Discard.
RecoveryChoice ask_recover(QWidget* parent, const QString& document_name, const QDateTime& saved_at);

// "Restart the kernel? ..." Restart / Cancel; true to restart.
bool confirm_restart(QWidget* parent);

// A warning box: `what` says what failed and where (file, cell), `fix` what the user can do.
void report_problem(QWidget* parent, const QString& title, const QString& what, const QString& fix);

// Runs `box` modally (objectName = key), applying a scripted answer from RT_STUDIO_AUTO_ANSWER for `key` when
// there is one; read the answer from box.clickedButton() afterwards.
void exec_prompt(QMessageBox& box, const QString& key);

}  // namespace rt::studio
