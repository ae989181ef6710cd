// rt/plugin/panel_sdk.h — a studio panel, drawn with Dear ImGui, as a plugin.
//
//   #include "rt/plugin/panel_sdk.h"
//
//   class NormPanel final : public rt::plugin::Panel {
//    public:
//     void draw(rt::plugin::PanelFrame& frame) override {
//       const rt::plugin::SessionView* s = frame.session;
//       if (!s) return (void)ImGui::TextDisabled("Choose a session above");
//       for (size_t i = 0; i < s->gradient_histogram_count(); ++i) {
//         rt::plugin::GradientHistogram h = s->gradient_histogram(i);
//         ImGui::Text("step %lld  %.*s  norm %.3g", (long long)h.step, int(h.name.size()), h.name.data(), h.norm);
//       }
//     }
//   };
//   RT_PANEL_PLUGIN("org.example.norms", "1.0.0", "norms", "Gradient norms", NormPanel)
//
// plugin.json: "kinds": ["panel"], "sdk": "<RT_PANEL_SDK_VERSION>" (docs/plugins.md, "Panels"). Link the
// studio's ImGui (CMake target rt_imgui, librt_imgui.so), never a copy of your own: the studio and its panels
// share one ImGui, so ImGui:: calls from the panel draw into the studio's current context.
//
// The rule is Qt Creator's for its C++ plugins: a panel is built against exactly this SDK. The studio refuses a
// panel whose RT_PANEL_SDK_VERSION, Dear ImGui version (IMGUI_VERSION_NUM) or layout (the sizes of ImGui's and
// this header's types) differs from its own, naming both, instead of crashing on a mismatched struct.
//
// Contracts
// - The studio creates one Panel per main window on the GUI thread and calls draw() between ImGui::NewFrame and
//   ImGui::Render, inside a window that fills the panel's area below its session picker. ImGui coordinates are
//   device pixels; multiply sizes you choose by frame.scale.
// - frame.session is what the user picked in the panel's toolbar (a live session of the notebook, a stored run,
//   a rank of an attached job), or nullptr; it and everything it returns are valid during draw() only. A live
//   session grows between frames; the panel is redrawn as it does (wants_live_updates() asks for 60 Hz).
// - An exception escaping draw() disables the panel: the studio shows its message in the panel's area and in
//   the Plugins dialog, and the rest of the studio goes on. A crash during the first draw is named on the next
//   start (crash markers).
#pragma once
#include <imgui.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rt/plugin/abi.h"

// Bumped with any change to this header; the studio and a panel must agree exactly.
#define RT_PANEL_SDK_VERSION "1.0"

namespace rt::plugin {

// One parameter's gradient at one step (the profiler's gradient histograms: docs/profiler.md).
struct GradientHistogram {
  int64_t step = -1;           // the step it was recorded in; -1 outside steps
  int64_t time_ns = 0;         // session clock
  std::string_view name;       // the parameter's qualified name: "encoder.0.weight"
  int64_t numel = 0;
  double norm = 0;             // L2 norm; NaN or inf when the gradient holds them
  double lo = 0, hi = 0;       // range of the finite values: bin i covers [lo + i*w, lo + (i+1)*w), w = (hi-lo)/bins
  int64_t nan_count = 0, inf_count = 0;
  const int64_t* counts = nullptr;
  size_t bins = 0;
};

// A read-only view of one profiler session, as the studio's visualizers see it.
class SessionView {
 public:
  virtual ~SessionView() = default;
  virtual std::string_view title() const = 0;  // what the picker shows: "runs.sqlite #3", "profile 2 (live)"
  virtual bool live() const = 0;               // still recording, so it grows between frames
  virtual size_t step_count() const = 0;       // optimizer steps recorded (rt.profiler's step())
  virtual size_t gradient_histogram_count() const = 0;
  virtual GradientHistogram gradient_histogram(size_t i) const = 0;  // in time order; i < gradient_histogram_count()
};

struct PanelFrame {
  const SessionView* session = nullptr;
  ImVec2 size;              // the drawable area, device pixels
  float scale = 1.0f;       // device pixels per logical pixel
  uint64_t index = 0;       // 0 for the panel's first frame
  bool another_frame = false;  // set to ask for one more frame soon (an animation)
};

class Panel {
 public:
  virtual ~Panel() = default;
  virtual void draw(PanelFrame& frame) = 0;
  virtual bool wants_live_updates() const { return false; }
};

// The layout the studio compares, field by field, with its own.
struct PanelLayout {
  uint32_t imgui_io = sizeof(ImGuiIO);
  uint32_t imgui_style = sizeof(ImGuiStyle);
  uint32_t draw_vert = sizeof(ImDrawVert);
  uint32_t draw_idx = sizeof(ImDrawIdx);
  uint32_t panel_frame = sizeof(PanelFrame);
  uint32_t gradient_histogram = sizeof(GradientHistogram);
};

}  // namespace rt::plugin

// What RtPluginInfo.panel points to (rt/plugin/abi.h). RT_PANEL_PLUGIN fills it in.
struct RtPanelPlugin {
  uint32_t struct_size;
  const char* sdk_version;  // RT_PANEL_SDK_VERSION as the panel was built
  int32_t imgui_version_num;
  rt::plugin::PanelLayout layout;
  const char* panel_id;     // stable: it keys the saved window layout; letters, digits, '_' and '-'
  const char* title;        // the dock's title
  rt::plugin::Panel* (*create)();  // a new panel, owned by the studio until it calls destroy
  void (*destroy)(rt::plugin::Panel*);
};

// Defines rt_plugin_entry for a plugin whose only kind is one panel of class PANEL_CLASS (default-constructible).
#define RT_PANEL_PLUGIN(ID, VERSION, PANEL_ID, TITLE, PANEL_CLASS)                                           \
  static rt::plugin::Panel* rt_panel_create_() { return new PANEL_CLASS(); }                                   \
  static void rt_panel_destroy_(rt::plugin::Panel* p) { delete p; }                                            \
  static const RtPanelPlugin rt_panel_plugin_ = {sizeof(RtPanelPlugin), RT_PANEL_SDK_VERSION, IMGUI_VERSION_NUM, \
                                                 rt::plugin::PanelLayout{}, PANEL_ID, TITLE, rt_panel_create_,   \
                                                 rt_panel_destroy_};                                           \
  static const RtPluginInfo rt_panel_plugin_info_ = [] {                                                       \
    RtPluginInfo info{};                                                                                       \
    info.struct_size = sizeof(RtPluginInfo);                                                                   \
    info.abi_major = RT_PLUGIN_ABI_MAJOR;                                                                      \
    info.abi_minor = RT_PLUGIN_ABI_MINOR;                                                                      \
    info.id = ID;                                                                                              \
    info.version = VERSION;                                                                                    \
    info.panel = &rt_panel_plugin_;                                                                            \
    return info;                                                                                               \
  }();                                                                                                         \
  extern "C" RT_PLUGIN_EXPORT const RtPluginInfo* rt_plugin_entry(void) { return &rt_panel_plugin_info_; }
