// app/studio/notebook_view/cell_widget.h — one notebook cell on screen: prompt, editor or rendered markdown,
// run time and outputs. NotebookView creates one per cell and keeps it in step with the document.
//
//   auto* w = new rt::studio::CellWidget(doc.cell(i), parent);
//   w->set_highlight(CellWidget::Highlight::ActiveCommand);   // blue bar (command mode)
//   w->set_run_state(ExecutionQueue::State::Running);         // "[*]:"
//   w->show_cell(doc.cell(i));                                // after the model changed
//   w->show_outputs(doc.cell(i));
//   w->enter_editor();                                        // markdown: rendered -> source editor
//
// Contracts:
// - A widget shows one cell id for its whole life; a type change makes NotebookView replace the widget.
// - show_cell() replaces the editor's text only when it differs from the model, so typing (which reaches the
//   model through sourceEdited) never moves the caret.
// - Code cells: "[N]:" (or "[ ]:" never run, "[*]:" queued or running), the QScintilla editor, the run time
//   of the last run ("1.2 s"; also "0.3 s, failed", "interrupted after 2.0 s", "not run (cancelled)") below it,
//   then the outputs.
//   Markdown cells: rendered until edited (double-click, Enter), rendered again by leave_editor().
//   Raw cells: a plain editor.
// - Outputs collapse when the cell's metadata says so (nbformat's "collapsed" or
//   metadata.jupyter.outputs_hidden), as JupyterLab writes it.
// - The widget never edits the document: it reports what the user did through its signals.
#pragma once
#include "execution_queue.h"
#include "notebook/notebook.h"

#include <QFrame>

#include <optional>
#include <string>

class QLabel;
class QVBoxLayout;

namespace rt::studio {

class CodeEditor;
class MarkdownView;
class OutputArea;

class CellWidget : public QFrame {
  Q_OBJECT

 public:
  enum class Highlight { None, Selected, ActiveCommand, ActiveEdit };

  explicit CellWidget(const Cell& cell, QWidget* parent = nullptr);
  ~CellWidget() override;

  const std::string& cell_id() const { return cell_id_; }
  CellType cell_type() const { return type_; }

  void show_cell(const Cell& cell);     // source, prompt, collapsed state
  void show_outputs(const Cell& cell);  // outputs (code cells)
  void show_execution_count(std::optional<std::int64_t> count);
  // Key events of the editor (now and when created later) go through `filter` first (NotebookView's keymap).
  void set_editor_event_filter(QObject* filter);
  void set_highlight(Highlight highlight);
  Highlight highlight() const { return highlight_; }
  void set_run_state(std::optional<ExecutionQueue::State> state);
  // Text under the editor after a run ("1.2 s"); empty hides it.
  void set_run_time_text(const QString& text);
  QString run_time_text() const;
  QString prompt_text() const;

  // Shows the editor (markdown: instead of the rendered text) and, when `focus`, focuses it.
  void enter_editor(bool focus = true);
  // Markdown: shows the rendered text again. Code/raw: nothing to do (the editor stays).
  void leave_editor();
  bool is_rendered() const;  // markdown shown rendered

  CodeEditor* editor() const { return editor_; }      // nullptr for a rendered markdown cell never edited
  MarkdownView* markdown_view() const { return markdown_; }  // markdown cells only
  OutputArea* output_area() const { return outputs_; }       // code cells only
  // The editor text as UTF-8 (the model's source), or the last shown source when no editor exists.
  std::string editor_source() const;

  // Width of the "[N]:" column, shared with the output prompts.
  static int prompt_column_width();

 signals:
  void sourceEdited(const std::string& cell_id);
  void pressed(const std::string& cell_id, Qt::KeyboardModifiers modifiers);
  void editorFocused(const std::string& cell_id);
  // The editor's caret moved; `caret` is its rectangle in this widget's coordinates.
  void caretMoved(const std::string& cell_id, const QRect& caret);
  void editRequested(const std::string& cell_id);
  void collapseToggleRequested(const std::string& cell_id);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void ensure_editor();
  void update_prompt();

  std::string cell_id_;
  CellType type_;
  std::string source_;  // last source shown
  std::optional<std::int64_t> execution_count_;
  std::optional<ExecutionQueue::State> run_state_;
  Highlight highlight_ = Highlight::None;
  bool setting_text_ = false;
  QObject* editor_filter_ = nullptr;

  QLabel* prompt_ = nullptr;
  QVBoxLayout* body_ = nullptr;
  CodeEditor* editor_ = nullptr;
  MarkdownView* markdown_ = nullptr;
  QLabel* run_time_ = nullptr;
  OutputArea* outputs_ = nullptr;
};

// True if the cell's metadata asks for its outputs to be hidden ("collapsed": true or
// "jupyter": {"outputs_hidden": true}).
bool outputs_hidden(const nlohmann::json& metadata);
// The metadata with the collapsed state set both ways JupyterLab writes it (and removed when shown).
nlohmann::json with_outputs_hidden(nlohmann::json metadata, bool hidden);

}  // namespace rt::studio
