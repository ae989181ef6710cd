// imgui_host/ui_font.h — the font the Dear ImGui views draw with: DejaVu Sans from the system (Debian's
// fonts-dejavu-core, installed by scripts/setup.sh) at the canvas's scaled size, or Dear ImGui's built-in
// ProggyClean bitmap font when that file is missing or is not a usable TrueType font.
//
//   ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
//   atlas.Clear();
//   const UiFont font = add_ui_font(atlas, 2.0f);             // DejaVu Sans at 2 * 14 px
//   if (!font.from_file) qWarning("%s", font.problem.c_str());  // ProggyClean at 2 * 13 px instead
//   // the backend builds the atlas into a texture (ImGui_ImplOpenGL3_CreateFontsTexture)
//
// Contracts:
// - Adds exactly one font to `atlas` (the caller clears it first) and returns it; the atlas is built once here
//   to prove the font rasterises, so a bad file falls back instead of failing in the backend.
// - The file is read and its TrueType table directory checked (sizes and offsets inside the file) before
//   stb_truetype sees it: a missing, empty, truncated or non-font file never crashes, it falls back, and
//   `problem` names the file, what is wrong and the fix.
// - An empty path asks for the built-in font (problem stays empty).
// - Glyphs: Basic Latin, Latin-1 (·, ×, µ, °), general punctuation (…, –, •), arrows, mathematical operators and
//   geometric shapes (▲, ●) — whatever of these the file has.
#pragma once
#include <imgui.h>

#include <string>

namespace rt::studio {

inline constexpr const char* kDefaultUiFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
inline constexpr float kUiFontPixels = 14.0f;        // the TrueType font at scale 1
inline constexpr float kFallbackFontPixels = 13.0f;  // ProggyClean at scale 1 (its design size)

struct UiFont {
  ImFont* font = nullptr;
  bool from_file = false;  // the TrueType file is in use; false: the built-in ProggyClean
  std::string path;        // the file asked for
  float pixels = 0;        // the font's size in device pixels
  std::string problem;     // why the file was not used (empty when it was, or when none was asked for)
};

// `scale` is device pixels per logical pixel (> 0).
UiFont add_ui_font(ImFontAtlas& atlas, float scale, const std::string& path = kDefaultUiFontPath);

}  // namespace rt::studio
