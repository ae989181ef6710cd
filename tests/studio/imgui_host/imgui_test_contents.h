// tests/studio/imgui_host/imgui_test_contents.h — ImGui contents with known output, for the host's tests.
//
//   auto shapes = std::make_unique<ShapesContent>(IM_COL32(230, 40, 20, 255));
//   QRect r = shapes->rect_device_pixels(1.0);   // where the filled rectangle is
//   auto* ui = new InteractiveContent;           // a button, an InputText; records what ImGui saw
//   QPointF p = ui->button_center();             // in device pixels, from the last frame
#pragma once
#include <QColor>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPointF>
#include <QRect>
#include <QString>
#include <QThread>

#include <functional>
#include <stdexcept>
#include <string>

#include "imgui_host/imgui_content.h"

#include "../qt_wait.h"  // wait_until

namespace rt::studio::test {

// A filled rectangle of `color` at (20,20)-(120,80) logical pixels, a white text line below it, and a green
// circle; records the frames it drew and the font it saw (size, and ImFont::GetDebugName: "DejaVuSans.ttf, 14px").
class ShapesContent final : public ImGuiContent {
 public:
  static constexpr const char* kText = "RustyTorch++ ImGui host";
  explicit ShapesContent(unsigned int color) : color_(color) {}
  void draw(ImGuiFrame& frame) override;
  static QRect rect_device_pixels(double scale);
  static QRect text_band_device_pixels(double scale);  // where the text line lies

  int frames = 0;
  float font_size = 0.0f;
  std::string font_name;
  float scale = 0.0f;
  ImVec2 size{};

 private:
  unsigned int color_;
};

// A button ("Click me"), an InputText and a wheel/keyboard recorder.
class InteractiveContent final : public ImGuiContent {
 public:
  void draw(ImGuiFrame& frame) override;
  bool wants_live_updates() const override { return live; }

  QPointF button_center() const { return button_.center(); }
  QPointF text_field_center() const { return text_field_.center(); }
  std::string text() const { return buffer_; }

  bool live = false;
  int animate_frames = 0;  // while > 0, each frame counts down and asks for another one
  int frames = 0;
  int clicks = 0;
  int double_clicks = 0;
  int right_clicks = 0;
  float wheel = 0.0f;
  float wheel_h = 0.0f;
  bool ctrl_seen = false;
  bool text_active = false;
  ImGuiContext* context_seen = nullptr;

 private:
  QRectF button_, text_field_;
  char buffer_[128] = {};
};

// Opens a child window and a style var, then throws from inside them while `fail` is true.
class ThrowingContent final : public ImGuiContent {
 public:
  void draw(ImGuiFrame& frame) override;
  bool fail = true;
  int frames = 0;
};

// The artifacts folder of the build tree (created on demand).
QString artifacts_dir();
// Processes events until `count()` has not changed for quiet_ms (at most timeout_ms); returns the final count.
template <typename Count>
auto settle_count(Count count, int quiet_ms = 300, int timeout_ms = 10000) {
  QElapsedTimer total, quiet;
  total.start();
  quiet.start();
  auto last = count();
  while (total.elapsed() < timeout_ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    QThread::msleep(2);
    const auto now = count();
    if (now != last) {
      last = now;
      quiet.restart();
    } else if (quiet.elapsed() >= quiet_ms) {
      break;
    }
  }
  return last;
}
// Pixels in `area` whose colour is within `tolerance` of `color` on every channel.
int count_color(const QImage& image, const QRect& area, QColor color, int tolerance = 2);
// Pixels in `area` brighter than `threshold` on every channel.
int count_bright(const QImage& image, const QRect& area, int threshold = 200);
// An ImGui colour (IM_COL32) as a QColor, and an ImGui [min, max) box as the QRect of its pixels.
inline QColor qcolor(ImU32 c) {
  return QColor(int(c >> IM_COL32_R_SHIFT & 0xFF), int(c >> IM_COL32_G_SHIFT & 0xFF), int(c >> IM_COL32_B_SHIFT & 0xFF));
}
inline QRect to_rect(ImVec2 min, ImVec2 max) {
  return QRect(QPoint(int(min.x), int(min.y)), QPoint(int(max.x) - 1, int(max.y) - 1));
}

}  // namespace rt::studio::test
