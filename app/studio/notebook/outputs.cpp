#include "notebook/outputs.h"

#include "notebook/utf8_text.h"

namespace rt::studio {
namespace {

// Text from the kernel may hold bytes that are not UTF-8 (C code printing raw bytes); the notebook must stay
// writable, so such bytes become U+FFFD here.
void repair_strings(nlohmann::json& value) {
  if (value.is_string()) {
    auto& s = value.get_ref<std::string&>();
    if (!is_valid_utf8(s)) s = to_valid_utf8(s);
  } else if (value.is_array() || value.is_object()) {
    for (auto& item : value) repair_strings(item);
  }
}

}  // namespace

nlohmann::json make_stream_output(std::string_view name, std::string text) {
  return {{"output_type", "stream"}, {"name", to_valid_utf8(name)}, {"text", to_valid_utf8(text)}};
}

nlohmann::json make_display_data(OutputData data, nlohmann::json metadata) {
  repair_strings(data);
  repair_strings(metadata);
  if (!data.is_object()) data = nlohmann::json::object();
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  return {{"output_type", "display_data"}, {"data", std::move(data)}, {"metadata", std::move(metadata)}};
}

nlohmann::json make_execute_result(std::int64_t execution_count, OutputData data, nlohmann::json metadata) {
  nlohmann::json out = make_display_data(std::move(data), std::move(metadata));
  out["output_type"] = "execute_result";
  out["execution_count"] = execution_count;
  return out;
}

nlohmann::json make_error_output(std::string ename, std::string evalue, std::vector<std::string> traceback) {
  nlohmann::json lines = nlohmann::json::array();
  for (auto& line : traceback) lines.push_back(to_valid_utf8(line));
  return {{"output_type", "error"},
          {"ename", to_valid_utf8(ename)},
          {"evalue", to_valid_utf8(evalue)},
          {"traceback", std::move(lines)}};
}

OutputKind output_kind(const nlohmann::json& output) {
  if (!output.is_object()) return OutputKind::unknown;
  const auto it = output.find("output_type");
  if (it == output.end() || !it->is_string()) return OutputKind::unknown;
  const auto& type = it->get_ref<const std::string&>();
  if (type == "stream") return OutputKind::stream;
  if (type == "display_data") return OutputKind::display_data;
  if (type == "execute_result") return OutputKind::execute_result;
  if (type == "error") return OutputKind::error;
  return OutputKind::unknown;
}

namespace {
std::string joined_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string text;
  if (value.is_array())
    for (const auto& line : value)
      if (line.is_string()) text += line.get_ref<const std::string&>();
  return text;
}
}  // namespace

std::string stream_name(const nlohmann::json& output) {
  if (output_kind(output) != OutputKind::stream) return {};
  const auto it = output.find("name");
  return it != output.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string stream_text(const nlohmann::json& output) {
  if (output_kind(output) != OutputKind::stream) return {};
  const auto it = output.find("text");
  return it != output.end() ? joined_text(*it) : std::string();
}

std::optional<std::string> mime_text(const nlohmann::json& output, std::string_view mime) {
  const OutputKind kind = output_kind(output);
  if (kind != OutputKind::display_data && kind != OutputKind::execute_result) return std::nullopt;
  const auto data = output.find("data");
  if (data == output.end() || !data->is_object()) return std::nullopt;
  const auto it = data->find(std::string(mime));
  if (it == data->end()) return std::nullopt;
  if (it->is_string() || it->is_array()) return joined_text(*it);
  return it->dump();
}

std::string error_traceback_text(const nlohmann::json& output) {
  if (output_kind(output) != OutputKind::error) return {};
  const auto it = output.find("traceback");
  if (it == output.end() || !it->is_array()) return {};
  std::string text;
  bool first = true;
  for (const auto& line : *it) {
    if (!line.is_string()) continue;
    if (!first) text += '\n';
    first = false;
    text += line.get_ref<const std::string&>();
  }
  return text;
}

std::string strip_ansi_escapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      out += text[i];
      continue;
    }
    if (i + 1 >= text.size()) break;
    const char kind = text[i + 1];
    if (kind == '[') {  // CSI: parameters and intermediates, then a final byte in @..~
      std::size_t j = i + 2;
      while (j < text.size() && !(text[j] >= '@' && text[j] <= '~')) ++j;
      i = j;
    } else if (kind == ']') {  // OSC: up to BEL or ESC backslash
      std::size_t j = i + 2;
      while (j < text.size() && text[j] != '\x07' && !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\'))
        ++j;
      i = (j < text.size() && text[j] == '\x1b') ? j + 1 : j;
    } else {
      i += 1;  // a two-byte escape
    }
  }
  return out;
}

}  // namespace rt::studio
