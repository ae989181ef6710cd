// The ImGui host's Qt-free logic: input trickling into ImGuiIO (one ImGui context, no GL), Qt -> ImGui key,
// button, wheel and cursor mapping, and which OpenGL versions the host accepts.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <cfloat>

#include "imgui_host/gl_support.h"
#include "imgui_host/imgui_canvas.h"
#include "imgui_host/imgui_input_queue.h"
#include "imgui_host/qt_imgui_input.h"

using namespace rt::studio;

namespace {

// An ImGui context current for the test's scope; its io receives what the queue applies.
struct ImGuiContextFixture {
  ImGuiContext* context = ImGui::CreateContext();
  ImGuiContextFixture() { ImGui::SetCurrentContext(context); }
  ~ImGuiContextFixture() { ImGui::DestroyContext(context); }  // leaves no context current
  ImGuiIO& io() { return ImGui::GetIO(); }
};

std::string queued_text(ImGuiIO& io) {
  std::string s;
  for (ImWchar c : io.InputQueueCharacters) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST_CASE("a click between two frames reaches ImGui as press then release", "[imgui_host]") {
  ImGuiContextFixture f;
  ImGuiInputQueue queue;
  queue.mouse_position({40, 12}, {});
  queue.mouse_button(0, true, {});
  queue.mouse_button(0, false, {});
  queue.mouse_position({90, 90}, {});

  CHECK(queue.apply(f.io()));  // frame 1: move + press
  CHECK(f.io().MousePos.x == 40);
  CHECK(f.io().MouseDown[0]);
  CHECK(queue.apply(f.io()));  // frame 2: release, still where the click was
  CHECK_FALSE(f.io().MouseDown[0]);
  CHECK(f.io().MousePos.x == 40);
  CHECK_FALSE(queue.apply(f.io()));  // frame 3: the move after it
  CHECK(f.io().MousePos.x == 90);
  CHECK(queue.empty());
}

TEST_CASE("different buttons and keys share a frame, the same one does not", "[imgui_host]") {
  ImGuiContextFixture f;
  ImGuiInputQueue queue;
  const int a = imgui_key_index(Qt::Key_A);
  const int ctrl = imgui_key_index(Qt::Key_Control);
  const KeyModifiers with_ctrl = key_modifiers(Qt::NoModifier, Qt::Key_Control, true);
  queue.key(ctrl, true, with_ctrl);
  queue.key(a, true, with_ctrl);
  queue.key(a, false, with_ctrl);
  CHECK(queue.apply(f.io()));
  CHECK(f.io().KeysDown[ctrl]);
  CHECK(f.io().KeysDown[a]);
  CHECK(f.io().KeyCtrl);
  CHECK_FALSE(queue.apply(f.io()));
  CHECK_FALSE(f.io().KeysDown[a]);
  CHECK(f.io().KeyCtrl);
}

TEST_CASE("text and key changes are not reordered within a frame", "[imgui_host]") {
  ImGuiContextFixture f;
  ImGuiInputQueue queue;
  const int backspace = imgui_key_index(Qt::Key_Backspace);
  queue.text("a");
  queue.key(backspace, true, {});
  queue.key(backspace, false, {});
  queue.text("b");
  CHECK(queue.apply(f.io()));
  CHECK(queued_text(f.io()) == "a");
  CHECK_FALSE(f.io().KeysDown[backspace]);
  f.io().InputQueueCharacters.resize(0);  // what NewFrame/EndFrame would consume
  CHECK(queue.apply(f.io()));
  CHECK(f.io().KeysDown[backspace]);
  CHECK(queued_text(f.io()).empty());
  CHECK(queue.apply(f.io()));
  CHECK_FALSE(f.io().KeysDown[backspace]);
  CHECK_FALSE(queue.apply(f.io()));
  CHECK(queued_text(f.io()) == "b");
}

TEST_CASE("wheel notches accumulate, including fractions and the horizontal axis", "[imgui_host]") {
  ImGuiContextFixture f;
  ImGuiInputQueue queue;
  const ImVec2 notch = wheel_notches(QPoint(0, 120), QPoint());
  const ImVec2 fine = wheel_notches(QPoint(0, -30), QPoint(0, -10));
  const ImVec2 sideways = wheel_notches(QPoint(240, 0), QPoint());
  const ImVec2 touchpad = wheel_notches(QPoint(), QPoint(0, static_cast<int>(kPixelsPerNotch) / 2));
  CHECK(notch.y == 1.0f);
  CHECK(fine.y == -0.25f);
  CHECK(sideways.x == 2.0f);
  CHECK(touchpad.y == 0.5f);
  queue.wheel(notch.x, notch.y, {});
  queue.wheel(fine.x, fine.y, {});
  queue.wheel(sideways.x, sideways.y, {});
  CHECK_FALSE(queue.apply(f.io()));
  CHECK(f.io().MouseWheel == 0.75f);
  CHECK(f.io().MouseWheelH == 2.0f);
  queue.wheel(0.0f, 0.0f, {});
  CHECK(queue.empty());
}

TEST_CASE("leaving the widget takes the mouse away, focus loss reaches ImGui", "[imgui_host]") {
  ImGuiContextFixture f;
  ImGuiInputQueue queue;
  const int enter = imgui_key_index(Qt::Key_Return);
  queue.key(enter, true, {});
  queue.mouse_position({-FLT_MAX, -FLT_MAX}, {});  // a move after a key change waits for the next frame
  CHECK(queue.apply(f.io()));
  CHECK(f.io().KeysDown[enter]);
  CHECK_FALSE(queue.apply(f.io()));
  CHECK(f.io().MousePos.x == -FLT_MAX);
  queue.focus(false);
  CHECK_FALSE(queue.apply(f.io()));
  CHECK(f.io().AppFocusLost);  // 1.86's NewFrame then releases every key
}

TEST_CASE("events ImGui cannot use are dropped, not queued", "[imgui_host]") {
  ImGuiInputQueue queue;
  queue.mouse_button(7, true, {});
  queue.key(-1, true, {});
  queue.key(ImGuiInputQueue::kKeys, true, {});
  queue.text("");
  CHECK(queue.empty());
  CHECK(imgui_mouse_button(Qt::LeftButton) == 0);
  CHECK(imgui_mouse_button(Qt::RightButton) == 1);
  CHECK(imgui_mouse_button(Qt::MiddleButton) == 2);
  CHECK(imgui_mouse_button(Qt::TaskButton) == -1);
}

TEST_CASE("every ImGuiKey of 1.86 maps to a distinct index in KeysDown", "[imgui_host]") {
  ImGuiContextFixture f;
  install_key_map(f.io());
  std::vector<int> seen;
  for (int k = 0; k < ImGuiKey_COUNT; ++k) {
    const int index = f.io().KeyMap[k];
    INFO("ImGuiKey " << k);
    CHECK(index >= 0);
    CHECK(index < ImGuiInputQueue::kKeys);
    CHECK(std::find(seen.begin(), seen.end(), index) == seen.end());
    seen.push_back(index);
  }
  CHECK(f.io().KeyMap[ImGuiKey_A] == imgui_key_index(Qt::Key_A));
  CHECK(f.io().KeyMap[ImGuiKey_Enter] != f.io().KeyMap[ImGuiKey_KeyPadEnter]);
  CHECK(imgui_key_index(Qt::Key_F12) >= 256);
  CHECK(imgui_key_index(Qt::Key_unknown) == -1);
  CHECK(imgui_key_index(Qt::Key_Camera) == -1);
}

TEST_CASE("a modifier key's own event sets its modifier", "[imgui_host]") {
  CHECK(key_modifiers(Qt::NoModifier, Qt::Key_Shift, true).shift);
  CHECK_FALSE(key_modifiers(Qt::ShiftModifier, Qt::Key_Shift, false).shift);
  const KeyModifiers m = key_modifiers(Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier);
  CHECK(m.ctrl);
  CHECK(m.alt);
  CHECK(m.super);
  CHECK_FALSE(m.shift);
}

TEST_CASE("ImGui cursors become Qt cursors", "[imgui_host]") {
  CHECK(qt_cursor(ImGuiMouseCursor_Arrow) == Qt::ArrowCursor);
  CHECK(qt_cursor(ImGuiMouseCursor_TextInput) == Qt::IBeamCursor);
  CHECK(qt_cursor(ImGuiMouseCursor_ResizeEW) == Qt::SizeHorCursor);
  CHECK(qt_cursor(ImGuiMouseCursor_Hand) == Qt::PointingHandCursor);
  CHECK(qt_cursor(ImGuiMouseCursor_None) == Qt::BlankCursor);
}

TEST_CASE("OpenGL 3.0 and newer desktop contexts are used with a matching GLSL version", "[imgui_host]") {
  CHECK(gl_support(3, 0, false, false, "OpenGL 3.0").glsl_version == "#version 130");
  CHECK(gl_support(3, 2, false, true, "OpenGL 3.2").glsl_version == "#version 150");
  CHECK(gl_support(3, 3, false, true, "OpenGL 3.3").glsl_version == "#version 330 core");
  CHECK(gl_support(4, 5, false, false, "OpenGL 4.5").glsl_version == "#version 330");
  CHECK(gl_support(4, 6, false, true, "x").usable());

  const GlSupport old = gl_support(2, 1, false, false, "OpenGL 2.1 (renderer llvmpipe)");
  CHECK_FALSE(old.usable());
  CHECK(old.glsl_version.empty());
  CHECK_THAT(old.problem, Catch::Contains("OpenGL 3.0 or newer") && Catch::Contains("OpenGL 2.1 (renderer llvmpipe)"));
  const GlSupport es = gl_support(3, 2, true, false, "OpenGL ES 3.2");
  CHECK_FALSE(es.usable());
  CHECK_THAT(es.problem, Catch::Contains("OpenGL ES"));

  const QSurfaceFormat format = imgui_surface_format();
  CHECK(format.majorVersion() == 3);
  CHECK(format.minorVersion() == 3);
  CHECK(format.profile() == QSurfaceFormat::CoreProfile);
}

TEST_CASE("a canvas refuses an unusable context and a bad scale before touching OpenGL", "[imgui_host]") {
  ImGuiCanvas canvas;
  CHECK_THROWS_WITH(canvas.attach_gl(gl_support(2, 1, false, false, "OpenGL 2.1")),
                    Catch::Contains("OpenGL 3.0 or newer"));
  CHECK_FALSE(canvas.attached());
  CHECK_THROWS_AS(canvas.set_scale(0.0f), ImGuiHostError);
  CHECK_THROWS_WITH(canvas.render(nullptr, ImVec2(10, 10), 0.01, 0), Catch::Contains("no OpenGL context"));
  CHECK(ImGui::GetCurrentContext() == nullptr);  // the canvas left no context current
}
