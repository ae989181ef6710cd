#include "imgui_host/imgui_input_queue.h"

#include <bitset>
#include <utility>

namespace rt::studio {

// Note [Input trickling]
// ~~~~~~~~~~~~~~~~~~~~~~
// One frame takes events from the front of the queue until an event would undo or reorder what the frame already
// saw; the rest waits for the next frame, which the host schedules at once. The rules follow Dear ImGui 1.87's
// trickling of its own input queue:
// - a button or key that already changed in this frame ends the frame (press and release land in two frames);
// - a mouse move after a button change, wheel, key or text ends the frame (the click happens where it was made);
// - a wheel after a button change ends the frame;
// - text after a key change, or a key change after text, ends the frame (InputText reads characters before
//   keys, so "a", Backspace, "b" must not be reordered);
// - focus changes and modifier state apply immediately.

void ImGuiInputQueue::push(Event event) { events_.push_back(std::move(event)); }

void ImGuiInputQueue::mouse_position(ImVec2 position, KeyModifiers modifiers) {
  Event e;
  e.kind = Kind::mouse_position;
  e.modifiers = modifiers;
  e.vec = position;
  push(std::move(e));
}

void ImGuiInputQueue::mouse_button(int button, bool down, KeyModifiers modifiers) {
  if (button < 0 || button >= kMouseButtons) return;
  Event e;
  e.kind = Kind::mouse_button;
  e.modifiers = modifiers;
  e.index = button;
  e.down = down;
  push(std::move(e));
}

void ImGuiInputQueue::wheel(float horizontal, float vertical, KeyModifiers modifiers) {
  if (horizontal == 0.0f && vertical == 0.0f) return;
  Event e;
  e.kind = Kind::wheel;
  e.modifiers = modifiers;
  e.vec = ImVec2(horizontal, vertical);
  push(std::move(e));
}

void ImGuiInputQueue::key(int key_index, bool down, KeyModifiers modifiers) {
  if (key_index < 0 || key_index >= kKeys) return;
  Event e;
  e.kind = Kind::key;
  e.modifiers = modifiers;
  e.index = key_index;
  e.down = down;
  push(std::move(e));
}

void ImGuiInputQueue::text(std::string utf8) {
  if (utf8.empty()) return;
  Event e;
  e.kind = Kind::text;
  e.has_modifiers = false;
  e.text = std::move(utf8);
  push(std::move(e));
}

void ImGuiInputQueue::focus(bool focused) {
  Event e;
  e.kind = Kind::focus;
  e.has_modifiers = false;
  e.down = focused;
  push(std::move(e));
}

bool ImGuiInputQueue::apply(ImGuiIO& io) {
  std::bitset<kMouseButtons> buttons_changed;
  std::bitset<kKeys> keys_changed;
  bool wheeled = false, typed = false;
  while (!events_.empty()) {
    const Event& e = events_.front();
    switch (e.kind) {
      case Kind::mouse_position:
        if (buttons_changed.any() || wheeled || keys_changed.any() || typed) return true;
        io.MousePos = e.vec;
        break;
      case Kind::mouse_button:
        if (buttons_changed.test(e.index)) return true;
        io.MouseDown[e.index] = e.down;
        buttons_changed.set(e.index);
        break;
      case Kind::wheel:
        if (buttons_changed.any()) return true;
        io.MouseWheelH += e.vec.x;
        io.MouseWheel += e.vec.y;
        wheeled = true;
        break;
      case Kind::key:
        if (keys_changed.test(e.index) || typed || buttons_changed.any()) return true;
        io.KeysDown[e.index] = e.down;
        keys_changed.set(e.index);
        break;
      case Kind::text:
        if (keys_changed.any() || buttons_changed.any()) return true;
        io.AddInputCharactersUTF8(e.text.c_str());
        typed = true;
        break;
      case Kind::focus:
        io.AddFocusEvent(e.down);
        break;
    }
    if (e.has_modifiers) {
      io.KeyCtrl = e.modifiers.ctrl;
      io.KeyShift = e.modifiers.shift;
      io.KeyAlt = e.modifiers.alt;
      io.KeySuper = e.modifiers.super;
    }
    events_.pop_front();
  }
  return false;
}

}  // namespace rt::studio
