// app/studio/notebook_view/output_area.h — a code cell's outputs, drawn from its nbformat output dicts.
//
//   auto* outputs = new rt::studio::OutputArea(/*prompt_width=*/72, parent);
//   outputs->set_outputs(cell.outputs);     // again after every change: unchanged outputs are kept as they are
//   outputs->set_collapsed(true);           // "3 outputs hidden" (click the prompt column to show them)
//
// What each output becomes (JupyterLab's choices, for what a QWidget can show faithfully):
// - stream: monospace text (OutputTextView) updated in place, so a progress bar rewritten by '\r' is a cheap
//   tail edit; stderr on a pale red background; ANSI colour codes removed.
// - error: the traceback (ANSI colours rendered, as IPython writes them) on a pale red background; the
//   ename/evalue line alone when there is no traceback.
// - execute_result / display_data: image/png or image/jpeg as an image scaled down to the width (never up);
//   else text/html when it is simple enough for Qt's rich text (no scripts, styles, frames or SVG, under
//   256 KB); else text/markdown rendered; else text/plain (ANSI colours removed). execute_result shows its
//   "[N]:" prompt.
// - anything else: its text/plain, or a grey note naming the output type.
// At most kMaxShownOutputs outputs get widgets; a note counts the rest (they stay in the notebook).
#pragma once
#include <nlohmann/json.hpp>

#include <QWidget>

#include <vector>

class QLabel;
class QVBoxLayout;

namespace rt::studio {

class OutputArea : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMaxShownOutputs = 500;

  explicit OutputArea(int prompt_width, QWidget* parent = nullptr);
  ~OutputArea() override;

  void set_outputs(const std::vector<nlohmann::json>& outputs);
  int output_count() const { return output_count_; }

  void set_collapsed(bool collapsed);
  bool is_collapsed() const { return collapsed_; }

  // The text a reader sees, outputs separated by '\n' (images as "[image WxH]"), for tests and copying.
  QString visible_text() const;

 signals:
  // The user clicked the prompt column or the "hidden" note: the cell should flip its collapsed state.
  void collapseToggleRequested();

 protected:
  void mousePressEvent(QMouseEvent* event) override;

 private:
  struct Row;
  void replace_row(std::size_t index, const nlohmann::json& output);
  void update_visibility();

  int prompt_width_;
  bool collapsed_ = false;
  int output_count_ = 0;
  std::vector<Row> rows_;
  QVBoxLayout* rows_layout_ = nullptr;
  QLabel* hidden_note_ = nullptr;
  QLabel* overflow_note_ = nullptr;
};

}  // namespace rt::studio
