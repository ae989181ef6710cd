// imgui_host/imgui_host_widget.h — a QOpenGLWidget that runs one Dear ImGui context and draws an ImGuiContent
// (a timeline, memory, graph, scalars or debugger view) into the whole widget.
//
//   QWidget* TimelinePanel::create_widget(const PanelContext& context, QWidget* parent) {
//     auto* host = new rt::studio::ImGuiHostWidget(parent);
//     host->setContent(std::make_unique<TimelineContent>(model));
//     QObject::connect(&model, &TimelineModel::changed, host, &rt::studio::ImGuiHostWidget::requestFrame);
//     return host;
//   }
//
// Contracts:
// - One ImGui context per widget; several hosts coexist in one window or across windows. The ImGui context is
//   current only while the host draws (event handlers only queue input, see imgui_input_queue.h), never in
//   between. Its state survives the widget moving to another window (a floated dock gets a new GL context).
// - OpenGL: asks for 3.3 core (gl_support.h). When the context is older than 3.0, is OpenGL ES, or cannot be
//   created, the widget shows glProblem() as a message instead of the content and never calls it.
// - Redraw on demand (see Note [Redraw policy] in the .cpp): a frame is drawn after input, resize, exposure,
//   requestFrame(), a content's ImGuiFrame::request_another_frame(), and at most 60 Hz while setLive(true) or the
//   content's wants_live_updates(). Nothing is drawn while idle; the live timer stops while hidden.
// - Input: mouse (move, buttons, double click, enter/leave), wheel (vertical and horizontal, high resolution),
//   keys with modifiers, text, focus. Tab and Backtab go to ImGui while it wants the keyboard, else move focus.
//   The mouse cursor follows ImGui::GetMouseCursor(). The clipboard is Qt's.
// - Fonts and style sizes scale with devicePixelRatioF(); ImGui coordinates are device pixels.
// - Must live on the GUI thread. Owns its content.
#pragma once
#include <QElapsedTimer>
#include <QOpenGLWidget>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <memory>

#include "imgui_host/imgui_canvas.h"
#include "imgui_host/imgui_content.h"
#include "imgui_host/imgui_input_queue.h"

class QLabel;

namespace rt::studio {

class ImGuiHostWidget : public QOpenGLWidget {
  Q_OBJECT

 public:
  static constexpr int kLiveIntervalMs = 16;    // <= 60 frames a second while live
  // Frames drawn after input, resize or a new content: hover, press and release effects and auto-sized
  // layouts settle within these.
  static constexpr int kSettleFrames = 3;

  explicit ImGuiHostWidget(QWidget* parent = nullptr);
  ~ImGuiHostWidget() override;

  // Replaces the content (null shows the empty background) and requests a frame.
  void setContent(std::unique_ptr<ImGuiContent> content);
  ImGuiContent* content() const { return content_.get(); }

  bool isLive() const { return live_; }
  // Frames drawn so far (each paintGL that ran ImGui).
  std::uint64_t framesDrawn() const { return frames_drawn_; }
  // Empty while ImGui can draw; else why not (also shown in the widget).
  QString glProblem() const { return gl_problem_; }
  // The ImGui context of this host; use it only inside an ImGuiContextScope, on the GUI thread.
  ImGuiContext* imguiContext() const { return canvas_.context(); }

  QSize sizeHint() const override { return {480, 320}; }

 public slots:
  // Draws a frame soon (coalesced with other requests); connect a model's change signal here.
  void requestFrame();
  // While live, frames are drawn at up to 60 Hz without requests (e.g. while a training reports data).
  void setLive(bool live);

 signals:
  void frameDrawn(quint64 index);
  // A content's draw() threw; the message is also shown in the view.
  void contentFailed(const QString& message);

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  void resizeEvent(QResizeEvent* event) override;

  bool event(QEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void keyReleaseEvent(QKeyEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;
  void enterEvent(QEnterEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;
  bool focusNextPrevChild(bool next) override;

 private:
  void release_gl();
  void show_problem(const QString& problem);
  void settle();  // draw kSettleFrames frames from now
  void schedule_follow_up();
  void key_event(QKeyEvent* event, bool down);
  void mouse_button_event(QMouseEvent* event, bool down);
  ImVec2 to_imgui(QPointF logical) const;
  void update_live_timer();
  void install_platform_hooks();

  ImGuiCanvas canvas_;
  ImGuiInputQueue input_;
  std::unique_ptr<ImGuiContent> content_;
  QTimer live_timer_;
  QTimer another_frame_timer_;
  QElapsedTimer frame_clock_;
  QLabel* problem_label_ = nullptr;
  QString gl_problem_;
  QByteArray clipboard_text_;
  std::uint64_t frames_drawn_ = 0;
  int extra_frames_ = 0;
  bool live_ = false;
  bool wants_keyboard_ = false;
  std::string last_content_error_;
  ImGuiMouseCursor cursor_ = ImGuiMouseCursor_Arrow;
};

}  // namespace rt::studio
