// imgui_host/imgui_input_queue.h — input events waiting for the next ImGui frames, fed to ImGuiIO so that no
// press/release pair is lost between two frames.
//
//   ImGuiInputQueue queue;
//   queue.mouse_position({40, 12}, {});       // from Qt event handlers, between frames
//   queue.mouse_button(0, true, {});
//   queue.mouse_button(0, false, {});          // press and release before the next frame
//   ...
//   bool more = queue.apply(ImGui::GetIO());  // frame 1 sees the press, frame 2 the release
//   if (more) schedule_another_frame();
//
// Dear ImGui 1.86 reads input as state (io.MouseDown, io.KeysDown) once per NewFrame, so a click whose press and
// release arrive between two frames would vanish (1.87 added an input queue for this). See Note [Input trickling].
#pragma once
#include <imgui.h>

#include <cstddef>
#include <deque>
#include <string>

namespace rt::studio {

struct KeyModifiers {
  bool ctrl = false, shift = false, alt = false, super = false;
};

class ImGuiInputQueue {
 public:
  static constexpr int kMouseButtons = 5;
  static constexpr int kKeys = 512;  // the size of ImGuiIO::KeysDown in 1.86

  // Positions are in ImGui coordinates (device pixels). ImVec2(-FLT_MAX, -FLT_MAX) means "no mouse" (it left).
  void mouse_position(ImVec2 position, KeyModifiers modifiers);
  // Button 0 left, 1 right, 2 middle, 3-4 extra; others are ignored.
  void mouse_button(int button, bool down, KeyModifiers modifiers);
  // In wheel notches (one = 120 Qt angle-delta units); fractions from high-resolution wheels are kept.
  void wheel(float horizontal, float vertical, KeyModifiers modifiers);
  // key_index into io.KeysDown (see qt_imgui_input.h); out-of-range indices are ignored.
  void key(int key_index, bool down, KeyModifiers modifiers);
  void text(std::string utf8);
  void focus(bool focused);

  bool empty() const { return events_.empty(); }
  std::size_t size() const { return events_.size(); }
  void clear() { events_.clear(); }

  // Applies the queued events that fit into one frame to `io` (which must belong to the current ImGui
  // context) and returns true when events remain for later frames.
  bool apply(ImGuiIO& io);

 private:
  enum class Kind { mouse_position, mouse_button, wheel, key, text, focus };
  struct Event {
    Kind kind = Kind::mouse_position;
    KeyModifiers modifiers;
    bool has_modifiers = true;
    ImVec2 vec{};        // position, or wheel (horizontal, vertical)
    int index = 0;       // button or key index
    bool down = false;   // button/key state, or focus
    std::string text;
  };
  void push(Event event);

  std::deque<Event> events_;
};

}  // namespace rt::studio
