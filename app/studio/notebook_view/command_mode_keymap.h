// app/studio/notebook_view/command_mode_keymap.h — Jupyter's keyboard shortcuts as a table, with chords (D, D).
//
//   rt::studio::CommandModeKeymap keymap;
//   auto now = std::chrono::steady_clock::now();
//   keymap.press(EditorMode::Command, QKeyCombination(Qt::Key_D), now);        // {Pending}
//   keymap.press(EditorMode::Command, QKeyCombination(Qt::Key_D), now);        // {Matched, DeleteSelected}
//   keymap.press(EditorMode::Edit, QKeyCombination(Qt::Key_A), now);          // {NotHandled}: the editor types 'a'
//   keymap.press(EditorMode::Edit, QKeyCombination(Qt::ShiftModifier, Qt::Key_Return), now);
//                                                                             // {Matched, RunAndSelectNext}
//   keymap.shortcut_text(CellCommand::DeleteSelected);                         // "D, D"
//   keymap.shortcut_text(CellCommand::RunInPlace);                             // "Ctrl+Enter"
//
// Contracts:
// - Command mode (Esc; the cell's bar is blue) owns every key listed in bindings(); edit mode (Enter; green)
//   owns only the run keys, Esc and split, and everything else goes to the editor.
// - A chord's first key answers Pending; the second key, within kChordTimeout of the first, completes it.
//   Any other key (or a late one) cancels the chord and is then looked up on its own, as JupyterLab does.
// - Return and Enter (keypad) are the same key; the keypad modifier is ignored. Shift+letter matches the
//   Shift binding, letter alone the plain one ('Z' undoes, 'Shift+Z' redoes).
// - Plain class, no widgets: NotebookView feeds it key events and executes what it answers.
#pragma once
#include "cell_command.h"

#include <QKeyCombination>
#include <QString>

#include <chrono>
#include <optional>
#include <vector>

namespace rt::studio {

enum class EditorMode { Command, Edit };

struct KeyBinding {
  EditorMode mode;
  QKeyCombination first;
  std::optional<QKeyCombination> second;  // set for chords such as D, D
  CellCommand command;
};

class CommandModeKeymap {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kChordTimeout{1000};

  enum class Outcome { NotHandled, Pending, Matched };
  struct Result {
    Outcome outcome = Outcome::NotHandled;
    CellCommand command{};  // meaningful when outcome == Matched
  };

  CommandModeKeymap();  // Jupyter's default bindings

  Result press(EditorMode mode, QKeyCombination key, Clock::time_point now);
  // Whether press() would act on this key (complete or start a chord, or match), without changing state: the
  // answer to Qt's ShortcutOverride, so window shortcuts do not take keys the notebook owns.
  bool would_handle(EditorMode mode, QKeyCombination key, Clock::time_point now) const;
  // Forget a half-typed chord (on mode changes and focus loss).
  void reset();
  bool chord_pending() const { return pending_.has_value(); }

  const std::vector<KeyBinding>& bindings() const { return bindings_; }
  // The first binding of `command` as text ("Shift+Enter", "D, D"); empty when unbound.
  QString shortcut_text(CellCommand command) const;

 private:
  struct PendingChord {
    EditorMode mode;
    QKeyCombination first;
    Clock::time_point at;
  };
  Result lookup(EditorMode mode, QKeyCombination key, Clock::time_point now);

  std::vector<KeyBinding> bindings_;
  std::optional<PendingChord> pending_;
};

// Normalises a key press for lookup: Enter -> Return, keypad flag dropped, Shift+'_' -> Shift+'-'.
QKeyCombination normalized_key(QKeyCombination key);

}  // namespace rt::studio
