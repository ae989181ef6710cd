// add_ui_font without OpenGL: DejaVu Sans when the file is there (proportional, with the punctuation the views
// use), the built-in ProggyClean with a problem naming the file and the fix when it is missing, empty, truncated
// or not a font — never a crash.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "imgui_host/ui_font.h"

using namespace rt::studio;

namespace {

std::string temp_file(const std::string& name, const std::vector<char>& bytes) {
  const auto path = std::filesystem::temp_directory_path() / ("rt-ui-font-" + name);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return path.string();
}

std::vector<char> head_of_dejavu(std::size_t bytes) {
  std::ifstream in(kDefaultUiFontPath, std::ios::binary);
  std::vector<char> data(bytes);
  in.read(data.data(), std::streamsize(bytes));
  data.resize(std::size_t(in.gcount()));
  return data;
}

void require_fallback(const UiFont& font, ImFontAtlas& atlas, const std::string& path, const std::string& why) {
  REQUIRE_FALSE(font.from_file);
  REQUIRE(font.font != nullptr);
  CHECK(std::string(font.font->GetDebugName()) == "ProggyClean.ttf, 13px");
  CHECK(font.pixels == kFallbackFontPixels);
  CHECK(atlas.Fonts.Size == 1);
  CHECK(atlas.IsBuilt());
  INFO(font.problem);
  CHECK(font.problem.find(path) != std::string::npos);
  CHECK(font.problem.find(why) != std::string::npos);
  CHECK(font.problem.find("fonts-dejavu-core") != std::string::npos);
}

}  // namespace

TEST_CASE("the UI font is DejaVu Sans when the file is installed") {
  INFO("install fonts-dejavu-core (scripts/setup.sh)");
  REQUIRE(std::filesystem::exists(kDefaultUiFontPath));
  for (float scale : {1.0f, 2.0f}) {
    ImFontAtlas atlas;
    const UiFont font = add_ui_font(atlas, scale);
    REQUIRE(font.from_file);
    CHECK(font.problem.empty());
    CHECK(font.path == kDefaultUiFontPath);
    CHECK(font.pixels == kUiFontPixels * scale);
    REQUIRE(atlas.Fonts.Size == 1);
    REQUIRE(atlas.Fonts[0] == font.font);
    CHECK(std::string(font.font->GetDebugName()) ==
          "DejaVuSans.ttf, " + std::to_string(int(kUiFontPixels * scale)) + "px");
    CHECK(font.font->FontSize == kUiFontPixels * scale);
    CHECK(atlas.IsBuilt());
    // Proportional, unlike the monospaced ProggyClean: "W" is much wider than "i".
    const ImFontGlyph* w = font.font->FindGlyphNoFallback('W');
    const ImFontGlyph* i = font.font->FindGlyphNoFallback('i');
    REQUIRE((w && i));
    CHECK(w->AdvanceX > 2 * i->AdvanceX);
    // The middle dot and the multiplication sign the views draw, and the ellipsis, are real glyphs.
    for (ImWchar c : {ImWchar(0x00B7), ImWchar(0x00D7), ImWchar(0x2026), ImWchar(0x2192)})
      CHECK(font.font->FindGlyphNoFallback(c) != nullptr);
  }
}

TEST_CASE("the built-in font stands in for a missing or broken file") {
  SECTION("missing") {
    ImFontAtlas atlas;
    const std::string path = "/nonexistent/fonts/DejaVuSans.ttf";
    require_fallback(add_ui_font(atlas, 1.0f, path), atlas, path, "cannot be opened");
  }
  SECTION("a directory") {
    ImFontAtlas atlas;
    const std::string path = std::filesystem::temp_directory_path().string();
    const UiFont font = add_ui_font(atlas, 1.0f, path);
    REQUIRE_FALSE(font.from_file);
    CHECK(font.problem.find(path) != std::string::npos);
  }
  SECTION("empty") {
    ImFontAtlas atlas;
    const std::string path = temp_file("empty.ttf", {});
    require_fallback(add_ui_font(atlas, 1.0f, path), atlas, path, "too short");
  }
  SECTION("not a font") {
    ImFontAtlas atlas;
    const std::string path = temp_file("text.ttf", std::vector<char>(4096, 'x'));
    require_fallback(add_ui_font(atlas, 1.0f, path), atlas, path, "not a TrueType");
  }
  SECTION("truncated: the table directory is there, the tables are not") {
    REQUIRE(std::filesystem::exists(kDefaultUiFontPath));
    ImFontAtlas atlas;
    const std::string path = temp_file("truncated.ttf", head_of_dejavu(2000));
    require_fallback(add_ui_font(atlas, 1.0f, path), atlas, path, "truncated");
  }
  SECTION("a header claiming more tables than the file holds") {
    std::vector<char> bytes = {0, 1, 0, 0, 0x7f, 0x7f};
    bytes.resize(64, 0);
    ImFontAtlas atlas;
    const std::string path = temp_file("directory.ttf", bytes);
    require_fallback(add_ui_font(atlas, 1.0f, path), atlas, path, "table directory");
  }
  SECTION("an empty path asks for the built-in font, without a problem") {
    ImFontAtlas atlas;
    const UiFont font = add_ui_font(atlas, 2.0f, "");
    REQUIRE_FALSE(font.from_file);
    CHECK(font.problem.empty());
    CHECK(font.pixels == 2 * kFallbackFontPixels);
    CHECK(std::string(font.font->GetDebugName()) == "ProggyClean.ttf, 26px");
  }
  SECTION("a scale that is not positive is refused") {
    ImFontAtlas atlas;
    CHECK_THROWS_AS(add_ui_font(atlas, 0.0f), std::invalid_argument);
  }
}
