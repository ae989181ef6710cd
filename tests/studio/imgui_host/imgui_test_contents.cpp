#include "imgui_test_contents.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QThread>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace rt::studio::test {

void ShapesContent::draw(ImGuiFrame& frame) {
  ++frames;
  font_size = ImGui::GetFontSize();
  font_name = ImGui::GetFont()->GetDebugName();
  scale = frame.scale();
  size = frame.size();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float s = frame.scale();
  list->AddRectFilled(ImVec2(20 * s, 20 * s), ImVec2(120 * s, 80 * s), color_);
  list->AddCircleFilled(ImVec2(200 * s, 50 * s), 30 * s, IM_COL32(40, 200, 60, 255));
  ImGui::SetCursorPos(ImVec2(20 * s, 100 * s));
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, 1));
  ImGui::TextUnformatted(kText);
  ImGui::PopStyleColor();
}

QRect ShapesContent::rect_device_pixels(double scale) {
  return QRect(QPoint(int(20 * scale), int(20 * scale)), QPoint(int(120 * scale) - 1, int(80 * scale) - 1));
}

QRect ShapesContent::text_band_device_pixels(double scale) {
  return QRect(QPoint(int(20 * scale), int(100 * scale)), QPoint(int(260 * scale), int(117 * scale)));
}

void InteractiveContent::draw(ImGuiFrame& frame) {
  ++frames;
  if (animate_frames > 0) {
    --animate_frames;
    frame.request_another_frame();
  }
  context_seen = ImGui::GetCurrentContext();
  const float s = frame.scale();
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetCursorPos(ImVec2(10 * s, 10 * s));
  if (ImGui::Button("Click me", ImVec2(120 * s, 40 * s))) ++clicks;
  if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) ++double_clicks;
  if (ImGui::IsItemHovered() && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) ++right_clicks;
  button_ = QRectF(QPointF(ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y),
                   QPointF(ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y));
  ImGui::SetCursorPos(ImVec2(10 * s, 70 * s));
  ImGui::SetNextItemWidth(200 * s);
  ImGui::InputText("##text", buffer_, sizeof buffer_);
  text_active = ImGui::IsItemActive();
  text_field_ = QRectF(QPointF(ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y),
                       QPointF(ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y));
  wheel += io.MouseWheel;
  wheel_h += io.MouseWheelH;
  ctrl_seen = ctrl_seen || io.KeyCtrl;
  ImGui::SetCursorPos(ImVec2(10 * s, 110 * s));
  ImGui::Text("clicks %d  wheel %.2f / %.2f", clicks, wheel, wheel_h);
}

void ThrowingContent::draw(ImGuiFrame&) {
  ++frames;
  ImGui::Text("before the failure");
  ImGui::BeginChild("child", ImVec2(100, 50), true);
  ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 0.5f);
  ImGui::PushID("inner");
  if (fail) throw std::runtime_error("model snapshot is gone");
  ImGui::PopID();
  ImGui::PopStyleVar();
  ImGui::EndChild();
}

QString artifacts_dir() {
  const QString dir = QStringLiteral(RT_BUILD_DIR "/test-artifacts");
  QDir().mkpath(dir);
  return dir;
}

int count_color(const QImage& image, const QRect& area, QColor color, int tolerance) {
  int n = 0;
  const QRect r = area.intersected(image.rect());
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - color.red()) <= tolerance && std::abs(c.green() - color.green()) <= tolerance &&
          std::abs(c.blue() - color.blue()) <= tolerance)
        ++n;
    }
  return n;
}

int count_bright(const QImage& image, const QRect& area, int threshold) {
  int n = 0;
  const QRect r = area.intersected(image.rect());
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (c.red() > threshold && c.green() > threshold && c.blue() > threshold) ++n;
    }
  return n;
}

}  // namespace rt::studio::test
