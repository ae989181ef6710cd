#include "imgui_host/ui_font.h"

#include <stb_truetype.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rt::studio {

namespace {

constexpr ImWchar kGlyphRanges[] = {
    0x0020, 0x00FF,  // Basic Latin, Latin-1 supplement
    0x2010, 0x205E,  // general punctuation
    0x2190, 0x21FF,  // arrows
    0x2200, 0x22FF,  // mathematical operators
    0x25A0, 0x25FF,  // geometric shapes
    0,
};
constexpr long kMaxFontBytes = 64L << 20;

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | std::uint32_t(p[3]);
}
std::uint16_t be16(const unsigned char* p) { return std::uint16_t(p[0] << 8 | p[1]); }

// Empty when the whole file is in `data`, else what went wrong.
std::string read_file(const std::string& path, std::vector<unsigned char>& data) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::string("cannot be opened (") + std::strerror(errno) + ")";
  std::string problem;
  long size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = std::ftell(f);
  if (size < 0 || std::fseek(f, 0, SEEK_SET) != 0) problem = "cannot be read (not a regular file?)";
  else if (size > kMaxFontBytes) problem = "is larger than 64 MiB";
  else {
    data.resize(std::size_t(size));
    if (size > 0 && std::fread(data.data(), 1, data.size(), f) != data.size())
      problem = std::string("cannot be read (") + std::strerror(errno) + ")";
  }
  std::fclose(f);
  return problem;
}

// Empty when stb_truetype may safely read `data` as a single TrueType/OpenType font, else what is wrong.
// stb_truetype trusts every offset in the file, so the table directory is checked against the size first.
std::string check_font_data(const std::vector<unsigned char>& data) {
  if (data.size() < 12) return "is too short to be a font (" + std::to_string(data.size()) + " bytes)";
  const std::uint32_t version = be32(data.data());
  if (version != 0x00010000u && version != 0x74727565u /* true */ && version != 0x4F54544Fu /* OTTO */)
    return "is not a TrueType or OpenType font (no sfnt header)";
  const std::size_t tables = be16(data.data() + 4);
  if (tables == 0 || 12 + 16 * tables > data.size()) return "is truncated (its table directory runs past the end)";
  for (std::size_t i = 0; i < tables; ++i) {
    const unsigned char* record = data.data() + 12 + 16 * i;
    const std::size_t offset = be32(record + 8), length = be32(record + 12);
    if (offset > data.size() || length > data.size() - offset)
      return "is truncated (table '" + std::string(reinterpret_cast<const char*>(record), 4) + "' runs past the end)";
  }
  stbtt_fontinfo info;
  if (stbtt_GetFontOffsetForIndex(data.data(), 0) != 0 || !stbtt_InitFont(&info, data.data(), 0))
    return "lacks tables a font needs (cmap, head, hhea, hmtx, and glyf with loca or CFF)";
  return {};
}

}  // namespace

UiFont add_ui_font(ImFontAtlas& atlas, float scale, const std::string& path) {
  if (!(scale > 0.0f)) throw std::invalid_argument("add_ui_font: scale must be positive, got " + std::to_string(scale));
  UiFont result;
  result.path = path;
  if (!path.empty()) {
    std::vector<unsigned char> data;
    std::string problem = read_file(path, data);
    if (problem.empty()) problem = check_font_data(data);
    if (problem.empty()) {
      ImFontConfig config;
      config.SizePixels = kUiFontPixels * scale;
      config.FontDataOwnedByAtlas = true;
      const std::size_t slash = path.find_last_of('/');
      std::snprintf(config.Name, sizeof config.Name, "%s, %.0fpx",
                    path.c_str() + (slash == std::string::npos ? 0 : slash + 1), double(config.SizePixels));
      void* owned = IM_ALLOC(data.size());  // the atlas frees it
      std::memcpy(owned, data.data(), data.size());
      ImFont* font = atlas.AddFontFromMemoryTTF(owned, int(data.size()), config.SizePixels, &config, kGlyphRanges);
      if (font && atlas.Build()) {
        result.font = font;
        result.from_file = true;
        result.pixels = config.SizePixels;
        return result;
      }
      atlas.Clear();
      problem = "could not be rasterised";
    }
    result.problem = "The UI font " + path + " " + problem +
                     "; using Dear ImGui's built-in ProggyClean font instead (install fonts-dejavu-core: "
                     "scripts/setup.sh).";
  }
  ImFontConfig config;
  config.SizePixels = kFallbackFontPixels * scale;
  result.font = atlas.AddFontDefault(&config);
  atlas.Build();
  result.pixels = config.SizePixels;
  return result;
}

}  // namespace rt::studio
