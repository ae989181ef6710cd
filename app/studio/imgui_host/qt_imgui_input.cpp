#include "imgui_host/qt_imgui_input.h"

namespace rt::studio {

namespace {

constexpr int kQtSpecialKeyBase = 0x01000000;
constexpr int kSpecialKeyOffset = 256;

}  // namespace

int imgui_key_index(int qt_key) {
  if (qt_key > 0 && qt_key < 256) return qt_key;
  const int special = qt_key - kQtSpecialKeyBase;
  if (special >= 0 && special < 256) return kSpecialKeyOffset + special;
  return -1;
}

void install_key_map(ImGuiIO& io) {
  io.KeyMap[ImGuiKey_Tab] = imgui_key_index(Qt::Key_Tab);
  io.KeyMap[ImGuiKey_LeftArrow] = imgui_key_index(Qt::Key_Left);
  io.KeyMap[ImGuiKey_RightArrow] = imgui_key_index(Qt::Key_Right);
  io.KeyMap[ImGuiKey_UpArrow] = imgui_key_index(Qt::Key_Up);
  io.KeyMap[ImGuiKey_DownArrow] = imgui_key_index(Qt::Key_Down);
  io.KeyMap[ImGuiKey_PageUp] = imgui_key_index(Qt::Key_PageUp);
  io.KeyMap[ImGuiKey_PageDown] = imgui_key_index(Qt::Key_PageDown);
  io.KeyMap[ImGuiKey_Home] = imgui_key_index(Qt::Key_Home);
  io.KeyMap[ImGuiKey_End] = imgui_key_index(Qt::Key_End);
  io.KeyMap[ImGuiKey_Insert] = imgui_key_index(Qt::Key_Insert);
  io.KeyMap[ImGuiKey_Delete] = imgui_key_index(Qt::Key_Delete);
  io.KeyMap[ImGuiKey_Backspace] = imgui_key_index(Qt::Key_Backspace);
  io.KeyMap[ImGuiKey_Space] = imgui_key_index(Qt::Key_Space);
  io.KeyMap[ImGuiKey_Enter] = imgui_key_index(Qt::Key_Return);
  io.KeyMap[ImGuiKey_Escape] = imgui_key_index(Qt::Key_Escape);
  io.KeyMap[ImGuiKey_KeyPadEnter] = imgui_key_index(Qt::Key_Enter);
  io.KeyMap[ImGuiKey_A] = imgui_key_index(Qt::Key_A);
  io.KeyMap[ImGuiKey_C] = imgui_key_index(Qt::Key_C);
  io.KeyMap[ImGuiKey_V] = imgui_key_index(Qt::Key_V);
  io.KeyMap[ImGuiKey_X] = imgui_key_index(Qt::Key_X);
  io.KeyMap[ImGuiKey_Y] = imgui_key_index(Qt::Key_Y);
  io.KeyMap[ImGuiKey_Z] = imgui_key_index(Qt::Key_Z);
}

int imgui_mouse_button(Qt::MouseButton button) {
  switch (button) {
    case Qt::LeftButton: return 0;
    case Qt::RightButton: return 1;
    case Qt::MiddleButton: return 2;
    case Qt::BackButton: return 3;
    case Qt::ForwardButton: return 4;
    default: return -1;
  }
}

KeyModifiers key_modifiers(Qt::KeyboardModifiers modifiers, int qt_key, bool down) {
  KeyModifiers m;
  m.ctrl = modifiers.testFlag(Qt::ControlModifier);
  m.shift = modifiers.testFlag(Qt::ShiftModifier);
  m.alt = modifiers.testFlag(Qt::AltModifier);
  m.super = modifiers.testFlag(Qt::MetaModifier);
  switch (qt_key) {
    case Qt::Key_Control: m.ctrl = down; break;
    case Qt::Key_Shift: m.shift = down; break;
    case Qt::Key_Alt: m.alt = down; break;
    case Qt::Key_Meta:
    case Qt::Key_Super_L:
    case Qt::Key_Super_R: m.super = down; break;
    default: break;
  }
  return m;
}

ImVec2 wheel_notches(QPoint angle_delta, QPoint pixel_delta) {
  if (!angle_delta.isNull()) return ImVec2(angle_delta.x() / 120.0f, angle_delta.y() / 120.0f);
  return ImVec2(pixel_delta.x() / kPixelsPerNotch, pixel_delta.y() / kPixelsPerNotch);
}

Qt::CursorShape qt_cursor(ImGuiMouseCursor cursor) {
  switch (cursor) {
    case ImGuiMouseCursor_None: return Qt::BlankCursor;
    case ImGuiMouseCursor_TextInput: return Qt::IBeamCursor;
    case ImGuiMouseCursor_ResizeAll: return Qt::SizeAllCursor;
    case ImGuiMouseCursor_ResizeNS: return Qt::SizeVerCursor;
    case ImGuiMouseCursor_ResizeEW: return Qt::SizeHorCursor;
    case ImGuiMouseCursor_ResizeNESW: return Qt::SizeBDiagCursor;
    case ImGuiMouseCursor_ResizeNWSE: return Qt::SizeFDiagCursor;
    case ImGuiMouseCursor_Hand: return Qt::PointingHandCursor;
    case ImGuiMouseCursor_NotAllowed: return Qt::ForbiddenCursor;
    default: return Qt::ArrowCursor;
  }
}

}  // namespace rt::studio
