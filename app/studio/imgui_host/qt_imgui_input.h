// imgui_host/qt_imgui_input.h — how Qt's input vocabulary maps onto Dear ImGui 1.86's.
//
//   install_key_map(io);                                        // once per ImGui context
//   queue.key(imgui_key_index(event->key()), true, key_modifiers(event->modifiers(), event->key(), true));
//   widget->setCursor(qt_cursor(ImGui::GetMouseCursor()));
//
// 1.86 has no io.AddKeyEvent (that came with 1.87): keys are indices into io.KeysDown[512], and io.KeyMap tells
// ImGui which index is Tab, Enter, A (select all), ... Qt keys below 256 (Latin-1: letters, digits, punctuation)
// keep their code; Qt's special keys (0x01000000 + n, n < 256: Escape, Tab, arrows, F1..) use 256 + n.
#pragma once
#include <imgui.h>

#include <QPoint>
#include <Qt>

#include "imgui_host/imgui_input_queue.h"

namespace rt::studio {

// Index into io.KeysDown, or -1 for a key ImGui cannot use.
int imgui_key_index(int qt_key);
// Fills io.KeyMap for every ImGuiKey_ of 1.86.
void install_key_map(ImGuiIO& io);
// 0 left, 1 right, 2 middle, 3 back, 4 forward; -1 for other buttons.
int imgui_mouse_button(Qt::MouseButton button);
// The modifier state after a key event: X11 reports a modifier key's own press or release one event late, so the
// key itself (Control, Shift, Alt, Meta) overrides what `modifiers` says. qt_key 0 for non-key events.
KeyModifiers key_modifiers(Qt::KeyboardModifiers modifiers, int qt_key = 0, bool down = false);
// Wheel movement in notches (x horizontal, y vertical): angle delta / 120 when the device reports angles, else
// the pixel delta of a touchpad at kPixelsPerNotch. Positive y scrolls up, as in ImGui.
ImVec2 wheel_notches(QPoint angle_delta, QPoint pixel_delta);
inline constexpr float kPixelsPerNotch = 40.0f;
// The Qt cursor for ImGui's request; Qt::BlankCursor for ImGuiMouseCursor_None.
Qt::CursorShape qt_cursor(ImGuiMouseCursor cursor);

}  // namespace rt::studio
