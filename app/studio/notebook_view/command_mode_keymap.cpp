#include "command_mode_keymap.h"

#include <QKeySequence>

namespace rt::studio {

namespace {

constexpr Qt::KeyboardModifiers kNone = Qt::NoModifier;

KeyBinding key(EditorMode mode, Qt::KeyboardModifiers modifiers, Qt::Key k, CellCommand command) {
  return {mode, QKeyCombination(modifiers, k), std::nullopt, command};
}

KeyBinding chord(Qt::Key first, Qt::Key second, CellCommand command) {
  return {EditorMode::Command, QKeyCombination(first), QKeyCombination(second), command};
}

// Jupyter's users know the key as "Enter" (Qt says "Return").
QString key_text(QKeyCombination key) {
  return QKeySequence(key).toString(QKeySequence::NativeText).replace(QStringLiteral("Return"), QStringLiteral("Enter"));
}

}  // namespace

QKeyCombination normalized_key(QKeyCombination key) {
  Qt::KeyboardModifiers modifiers = key.keyboardModifiers() & ~Qt::KeypadModifier;
  Qt::Key k = key.key();
  if (k == Qt::Key_Enter) k = Qt::Key_Return;
  if (k == Qt::Key_Underscore) {  // Shift+'-' arrives as '_' on most layouts
    k = Qt::Key_Minus;
    modifiers |= Qt::ShiftModifier;
  }
  if (k == Qt::Key_Backtab) {
    k = Qt::Key_Tab;
    modifiers |= Qt::ShiftModifier;
  }
  return QKeyCombination(modifiers, k);
}

CommandModeKeymap::CommandModeKeymap() {
  using C = CellCommand;
  constexpr auto Cmd = EditorMode::Command;
  constexpr auto Edit = EditorMode::Edit;
  const Qt::KeyboardModifiers shift = Qt::ShiftModifier, ctrl = Qt::ControlModifier, alt = Qt::AltModifier;
  const Qt::KeyboardModifiers ctrl_shift = Qt::ControlModifier | Qt::ShiftModifier;
  for (EditorMode mode : {Cmd, Edit}) {
    bindings_.push_back(key(mode, shift, Qt::Key_Return, C::RunAndSelectNext));
    bindings_.push_back(key(mode, ctrl, Qt::Key_Return, C::RunInPlace));
    bindings_.push_back(key(mode, alt, Qt::Key_Return, C::RunAndInsertBelow));
  }
  bindings_.push_back(key(Edit, kNone, Qt::Key_Escape, C::EnterCommandMode));
  bindings_.push_back(key(Edit, ctrl_shift, Qt::Key_Minus, C::SplitAtCursor));

  bindings_.push_back(key(Cmd, kNone, Qt::Key_Return, C::EnterEditMode));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_Escape, C::EnterCommandMode));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_Up, C::SelectPrevious));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_K, C::SelectPrevious));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_Down, C::SelectNext));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_J, C::SelectNext));
  bindings_.push_back(key(Cmd, shift, Qt::Key_Up, C::ExtendSelectionUp));
  bindings_.push_back(key(Cmd, shift, Qt::Key_K, C::ExtendSelectionUp));
  bindings_.push_back(key(Cmd, shift, Qt::Key_Down, C::ExtendSelectionDown));
  bindings_.push_back(key(Cmd, shift, Qt::Key_J, C::ExtendSelectionDown));
  bindings_.push_back(key(Cmd, ctrl, Qt::Key_A, C::SelectAll));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_A, C::InsertAbove));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_B, C::InsertBelow));
  bindings_.push_back(chord(Qt::Key_D, Qt::Key_D, C::DeleteSelected));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_Y, C::ToCode));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_M, C::ToMarkdown));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_R, C::ToRaw));
  bindings_.push_back(key(Cmd, ctrl_shift, Qt::Key_Minus, C::SplitAtCursor));
  bindings_.push_back(key(Cmd, shift, Qt::Key_M, C::MergeSelected));
  bindings_.push_back(key(Cmd, ctrl_shift, Qt::Key_Up, C::MoveUp));
  bindings_.push_back(key(Cmd, ctrl_shift, Qt::Key_Down, C::MoveDown));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_C, C::Copy));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_X, C::Cut));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_V, C::PasteBelow));
  bindings_.push_back(key(Cmd, shift, Qt::Key_V, C::PasteAbove));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_Z, C::Undo));
  bindings_.push_back(key(Cmd, shift, Qt::Key_Z, C::Redo));
  bindings_.push_back(key(Cmd, kNone, Qt::Key_O, C::ToggleOutputs));
  bindings_.push_back(chord(Qt::Key_I, Qt::Key_I, C::Interrupt));
  bindings_.push_back(chord(Qt::Key_0, Qt::Key_0, C::Restart));
}

void CommandModeKeymap::reset() { pending_.reset(); }

CommandModeKeymap::Result CommandModeKeymap::press(EditorMode mode, QKeyCombination key, Clock::time_point now) {
  key = normalized_key(key);
  if (pending_) {
    PendingChord chord_start = *pending_;
    pending_.reset();
    if (chord_start.mode == mode && now - chord_start.at <= kChordTimeout) {
      for (const KeyBinding& b : bindings_) {
        if (b.mode == mode && b.second && b.first == chord_start.first && *b.second == key) {
          return {Outcome::Matched, b.command};
        }
      }
    }
  }
  return lookup(mode, key, now);
}

CommandModeKeymap::Result CommandModeKeymap::lookup(EditorMode mode, QKeyCombination key, Clock::time_point now) {
  for (const KeyBinding& b : bindings_) {
    if (b.mode != mode || b.first != key) continue;
    if (b.second) {
      pending_ = PendingChord{mode, key, now};
      return {Outcome::Pending, {}};
    }
    return {Outcome::Matched, b.command};
  }
  return {};
}

bool CommandModeKeymap::would_handle(EditorMode mode, QKeyCombination key, Clock::time_point now) const {
  key = normalized_key(key);
  for (const KeyBinding& b : bindings_) {
    if (b.mode != mode) continue;
    if (b.first == key) return true;
    if (pending_ && b.second && pending_->mode == mode && b.first == pending_->first && *b.second == key &&
        now - pending_->at <= kChordTimeout) {
      return true;
    }
  }
  return false;
}

QString CommandModeKeymap::shortcut_text(CellCommand command) const {
  for (const KeyBinding& b : bindings_) {
    if (b.command != command) continue;
    QString text = key_text(b.first);
    if (b.second) text += QStringLiteral(", ") + key_text(*b.second);
    return text;
  }
  return {};
}

}  // namespace rt::studio
