// app/studio/notebook_view/cell_command.h — the notebook editor's commands, one name per user action.
//
//   switch (command) {
//     case rt::studio::CellCommand::InsertBelow: ...
//   }
//   QString label = rt::studio::cell_command_title(CellCommand::RunAndSelectNext);  // "Run cell and select next"
//
// NotebookView::execute(CellCommand) carries each one out; CommandModeKeymap maps key presses to them; the shell
// may show cell_command_title() in menus. The names follow JupyterLab's command palette.
#pragma once
#include <QString>

namespace rt::studio {

enum class CellCommand {
  // Running
  RunAndSelectNext,   // Shift+Enter: run, select the next cell (append a code cell after the last)
  RunInPlace,         // Ctrl+Enter
  RunAndInsertBelow,  // Alt+Enter
  Interrupt,          // I, I
  Restart,            // 0, 0 (asks to confirm)
  // Modes
  EnterEditMode,     // Enter
  EnterCommandMode,  // Esc
  // Selection
  SelectPrevious,       // Up, K
  SelectNext,           // Down, J
  ExtendSelectionUp,    // Shift+Up, Shift+K
  ExtendSelectionDown,  // Shift+Down, Shift+J
  SelectAll,            // Ctrl+A (command mode)
  // Structure
  InsertAbove,      // A
  InsertBelow,      // B
  DeleteSelected,   // D, D
  ToCode,           // Y
  ToMarkdown,       // M
  ToRaw,            // R
  SplitAtCursor,    // Ctrl+Shift+- (edit mode)
  MergeSelected,    // Shift+M (selected cells, or the active cell with the one below)
  MoveUp,           // Ctrl+Shift+Up
  MoveDown,         // Ctrl+Shift+Down
  Copy,             // C
  Cut,              // X
  PasteBelow,       // V
  PasteAbove,       // Shift+V
  Undo,             // Z (structural edits: deletion, insertion, moves, type changes, merge/split)
  Redo,             // Shift+Z
  // Outputs
  ClearOutputs,       // clear the selected cells' outputs
  ToggleOutputs,      // O: collapse/expand the selected cells' outputs
};

// Human-readable title ("Delete selected cells") for menus, tooltips and the keyboard-shortcut help.
QString cell_command_title(CellCommand command);

}  // namespace rt::studio
