#include "imgui_host/imgui_host_widget.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QStyleHints>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cfloat>
#include <cmath>

#include "imgui_host/gl_support.h"
#include "imgui_host/qt_imgui_input.h"

namespace rt::studio {

// Note [Redraw policy]
// ~~~~~~~~~~~~~~~~~~~~
// The host never loops. A frame follows (1) Qt's own paints (expose, resize), (2) input, which also asks for
// kSettleFrames more frames so hover and click effects and auto-sized layouts settle, (3) requestFrame(),
// (4) ImGuiFrame::request_another_frame(), delayed to kLiveIntervalMs, and (5) the live timer (kLiveIntervalMs)
// while setLive(true) or the content wants live updates and the widget is visible. Input that did not fit into
// one frame (see Note [Input trickling]) makes the next frame follow at once. update() coalesces all of these.

ImGuiHostWidget::ImGuiHostWidget(QWidget* parent) : QOpenGLWidget(parent) {
  setFormat(imgui_surface_format());
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  live_timer_.setInterval(kLiveIntervalMs);
  connect(&live_timer_, &QTimer::timeout, this, [this] { update(); });
  another_frame_timer_.setSingleShot(true);
  another_frame_timer_.setInterval(kLiveIntervalMs);
  connect(&another_frame_timer_, &QTimer::timeout, this, [this] { update(); });
  install_platform_hooks();
}

ImGuiHostWidget::~ImGuiHostWidget() {
  // QOpenGLWidget's destructor destroys the context after this part of the object is gone: no callback then.
  if (context()) disconnect(context(), nullptr, this, nullptr);
  release_gl();
}

void ImGuiHostWidget::install_platform_hooks() {
  ImGuiContextScope scope(canvas_.context());
  ImGuiIO& io = ImGui::GetIO();
  install_key_map(io);
  io.BackendPlatformName = "rt_imgui_host (Qt)";
  io.BackendFlags |= ImGuiBackendFlags_HasMouseCursors;
  io.MouseDoubleClickTime = static_cast<float>(QGuiApplication::styleHints()->mouseDoubleClickInterval()) / 1000.0f;
  io.ClipboardUserData = this;
  io.GetClipboardTextFn = [](void* user) -> const char* {
    auto* self = static_cast<ImGuiHostWidget*>(user);
    self->clipboard_text_ = QGuiApplication::clipboard()->text().toUtf8();
    return self->clipboard_text_.constData();
  };
  io.SetClipboardTextFn = [](void*, const char* text) {
    QGuiApplication::clipboard()->setText(QString::fromUtf8(text));
  };
}

void ImGuiHostWidget::setContent(std::unique_ptr<ImGuiContent> content) {
  content_ = std::move(content);
  last_content_error_.clear();
  settle();
  update_live_timer();
}

void ImGuiHostWidget::requestFrame() { update(); }

void ImGuiHostWidget::setLive(bool live) {
  live_ = live;
  update_live_timer();
  if (live) update();
}

void ImGuiHostWidget::update_live_timer() {
  const bool wanted = isVisible() && canvas_.attached() && (live_ || (content_ && content_->wants_live_updates()));
  if (wanted && !live_timer_.isActive())
    live_timer_.start();
  else if (!wanted && live_timer_.isActive())
    live_timer_.stop();
}

void ImGuiHostWidget::settle() {
  extra_frames_ = kSettleFrames;
  update();
}

void ImGuiHostWidget::schedule_follow_up() {
  QTimer::singleShot(0, this, [this] { update(); });
}

void ImGuiHostWidget::initializeGL() {
  connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &ImGuiHostWidget::release_gl);
  try {
    canvas_.attach_gl(gl_support(*context()));
  } catch (const ImGuiHostError& e) {
    show_problem(QString::fromUtf8(e.what()));
    return;
  }
  if (problem_label_) problem_label_->hide();
  gl_problem_.clear();
  frame_clock_.start();
  settle();
  update_live_timer();
}

void ImGuiHostWidget::release_gl() {
  if (!canvas_.attached()) return;
  makeCurrent();
  canvas_.detach_gl();
  doneCurrent();
}

void ImGuiHostWidget::show_problem(const QString& problem) {
  gl_problem_ = problem;
  qWarning("ImGuiHostWidget: %s", qPrintable(problem));
  if (!problem_label_) {
    problem_label_ = new QLabel(this);
    problem_label_->setObjectName(QStringLiteral("imgui_host_problem"));
    problem_label_->setWordWrap(true);
    problem_label_->setAlignment(Qt::AlignCenter);
    problem_label_->setAutoFillBackground(true);
    problem_label_->setMargin(12);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(problem_label_);
  }
  problem_label_->setText(problem);
  problem_label_->show();
  update_live_timer();
}

void ImGuiHostWidget::resizeGL(int, int) { settle(); }

void ImGuiHostWidget::resizeEvent(QResizeEvent* event) {
  QOpenGLWidget::resizeEvent(event);
  if (!isValid() && gl_problem_.isEmpty() && !size().isEmpty() && isVisible())
    show_problem(tr("The ImGui views could not create an OpenGL context on this display (OpenGL 3.0 or newer "
                    "is needed)."));
}

void ImGuiHostWidget::paintGL() {
  if (!canvas_.attached()) return;
  const qreal ratio = devicePixelRatioF();
  canvas_.set_scale(static_cast<float>(ratio));
  bool input_left = false;
  {
    ImGuiContextScope scope(canvas_.context());
    input_left = input_.apply(ImGui::GetIO());
  }
  const double delta = frames_drawn_ == 0 ? 1.0 / 60.0 : static_cast<double>(frame_clock_.nsecsElapsed()) * 1e-9;
  frame_clock_.restart();
  const ImVec2 size(static_cast<float>(std::lround(width() * ratio)), static_cast<float>(std::lround(height() * ratio)));
  const FrameResult result = canvas_.render(content_.get(), size, delta, frames_drawn_);
  const std::uint64_t index = frames_drawn_++;
  {
    ImGuiContextScope scope(canvas_.context());
    wants_keyboard_ = ImGui::GetIO().WantCaptureKeyboard;
  }
  if (result.cursor != cursor_) {
    cursor_ = result.cursor;
    if (cursor_ == ImGuiMouseCursor_Arrow)
      unsetCursor();
    else
      setCursor(qt_cursor(cursor_));
  }
  if (result.content_error != last_content_error_) {
    last_content_error_ = result.content_error;
    if (!last_content_error_.empty()) {
      qWarning("ImGuiHostWidget: the content's draw() threw: %s", last_content_error_.c_str());
      emit contentFailed(QString::fromStdString(last_content_error_));
    }
  }
  if (input_left) {
    schedule_follow_up();
  } else if (extra_frames_ > 0) {
    --extra_frames_;
    schedule_follow_up();
  } else if (result.another_frame_requested && !another_frame_timer_.isActive()) {
    another_frame_timer_.start();
  }
  update_live_timer();
  emit frameDrawn(index);
}

ImVec2 ImGuiHostWidget::to_imgui(QPointF logical) const {
  const qreal ratio = devicePixelRatioF();
  return ImVec2(static_cast<float>(logical.x() * ratio), static_cast<float>(logical.y() * ratio));
}

bool ImGuiHostWidget::event(QEvent* event) {
  // While ImGui edits text, shortcuts (Ctrl+A, Ctrl+C, ...) belong to it, as they do to a QLineEdit.
  if (event->type() == QEvent::ShortcutOverride && wants_keyboard_) {
    event->accept();
    return true;
  }
  return QOpenGLWidget::event(event);
}

bool ImGuiHostWidget::focusNextPrevChild(bool next) {
  if (wants_keyboard_) return false;  // Tab reaches keyPressEvent and ImGui
  return QOpenGLWidget::focusNextPrevChild(next);
}

void ImGuiHostWidget::mouseMoveEvent(QMouseEvent* event) {
  input_.mouse_position(to_imgui(event->position()), key_modifiers(event->modifiers()));
  settle();
}

void ImGuiHostWidget::mouse_button_event(QMouseEvent* event, bool down) {
  const int button = imgui_mouse_button(event->button());
  if (button < 0) {
    event->ignore();
    return;
  }
  const KeyModifiers modifiers = key_modifiers(event->modifiers());
  input_.mouse_position(to_imgui(event->position()), modifiers);
  input_.mouse_button(button, down, modifiers);
  event->accept();
  settle();
}

void ImGuiHostWidget::mousePressEvent(QMouseEvent* event) { mouse_button_event(event, true); }
void ImGuiHostWidget::mouseReleaseEvent(QMouseEvent* event) { mouse_button_event(event, false); }
// Qt replaces the second press of a double click by this event; ImGui detects the double click itself from
// the two presses (io.MouseDoubleClickTime is Qt's interval).
void ImGuiHostWidget::mouseDoubleClickEvent(QMouseEvent* event) { mouse_button_event(event, true); }

void ImGuiHostWidget::wheelEvent(QWheelEvent* event) {
  const KeyModifiers modifiers = key_modifiers(event->modifiers());
  const ImVec2 notches = wheel_notches(event->angleDelta(), event->pixelDelta());
  input_.mouse_position(to_imgui(event->position()), modifiers);
  input_.wheel(notches.x, notches.y, modifiers);
  event->accept();
  settle();
}

void ImGuiHostWidget::key_event(QKeyEvent* event, bool down) {
  input_.key(imgui_key_index(event->key()), down, key_modifiers(event->modifiers(), event->key(), down));
  if (down) {
    QString text = event->text();
    text.removeIf([](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; });
    if (!text.isEmpty()) input_.text(text.toUtf8().toStdString());
  }
  event->accept();
  settle();
}

void ImGuiHostWidget::keyPressEvent(QKeyEvent* event) { key_event(event, true); }
void ImGuiHostWidget::keyReleaseEvent(QKeyEvent* event) { key_event(event, false); }

void ImGuiHostWidget::focusInEvent(QFocusEvent* event) {
  input_.focus(true);
  settle();
  QOpenGLWidget::focusInEvent(event);
}

void ImGuiHostWidget::focusOutEvent(QFocusEvent* event) {
  input_.focus(false);
  settle();
  QOpenGLWidget::focusOutEvent(event);
}

void ImGuiHostWidget::enterEvent(QEnterEvent* event) {
  input_.mouse_position(to_imgui(event->position()), key_modifiers(QGuiApplication::keyboardModifiers()));
  settle();
  QOpenGLWidget::enterEvent(event);
}

void ImGuiHostWidget::leaveEvent(QEvent* event) {
  input_.mouse_position(ImVec2(-FLT_MAX, -FLT_MAX), key_modifiers(QGuiApplication::keyboardModifiers()));
  settle();
  QOpenGLWidget::leaveEvent(event);
}

void ImGuiHostWidget::showEvent(QShowEvent* event) {
  QOpenGLWidget::showEvent(event);
  update_live_timer();
}

void ImGuiHostWidget::hideEvent(QHideEvent* event) {
  QOpenGLWidget::hideEvent(event);
  live_timer_.stop();
  another_frame_timer_.stop();
}

}  // namespace rt::studio
