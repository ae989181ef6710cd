#include "cell_command.h"

#include <QCoreApplication>

namespace rt::studio {

QString cell_command_title(CellCommand command) {
  auto tr = [](const char* text) { return QCoreApplication::translate("rt::studio::CellCommand", text); };
  switch (command) {
    case CellCommand::RunAndSelectNext: return tr("Run cell and select next");
    case CellCommand::RunInPlace: return tr("Run cell");
    case CellCommand::RunAndInsertBelow: return tr("Run cell and insert below");
    case CellCommand::Interrupt: return tr("Interrupt kernel");
    case CellCommand::Restart: return tr("Restart kernel");
    case CellCommand::EnterEditMode: return tr("Edit cell");
    case CellCommand::EnterCommandMode: return tr("Leave the editor (command mode)");
    case CellCommand::SelectPrevious: return tr("Select cell above");
    case CellCommand::SelectNext: return tr("Select cell below");
    case CellCommand::ExtendSelectionUp: return tr("Extend selection above");
    case CellCommand::ExtendSelectionDown: return tr("Extend selection below");
    case CellCommand::SelectAll: return tr("Select all cells");
    case CellCommand::InsertAbove: return tr("Insert cell above");
    case CellCommand::InsertBelow: return tr("Insert cell below");
    case CellCommand::DeleteSelected: return tr("Delete selected cells");
    case CellCommand::ToCode: return tr("Change to code");
    case CellCommand::ToMarkdown: return tr("Change to markdown");
    case CellCommand::ToRaw: return tr("Change to raw");
    case CellCommand::SplitAtCursor: return tr("Split cell at cursor");
    case CellCommand::MergeSelected: return tr("Merge selected cells");
    case CellCommand::MoveUp: return tr("Move cells up");
    case CellCommand::MoveDown: return tr("Move cells down");
    case CellCommand::Copy: return tr("Copy cells");
    case CellCommand::Cut: return tr("Cut cells");
    case CellCommand::PasteBelow: return tr("Paste cells below");
    case CellCommand::PasteAbove: return tr("Paste cells above");
    case CellCommand::Undo: return tr("Undo cell operation");
    case CellCommand::Redo: return tr("Redo cell operation");
    case CellCommand::ClearOutputs: return tr("Clear outputs");
    case CellCommand::ToggleOutputs: return tr("Collapse or expand outputs");
  }
  return {};
}

}  // namespace rt::studio
