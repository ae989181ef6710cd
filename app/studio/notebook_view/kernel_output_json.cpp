#include "kernel_output_json.h"

#include "notebook/outputs.h"

namespace rt::studio {

namespace {

bool isJsonMime(const std::string& mime) {
  if (mime == "application/json") return true;
  return mime.rfind("application/", 0) == 0 && mime.size() > 5 && mime.compare(mime.size() - 5, 5, "+json") == 0;
}

nlohmann::json metadataFrom(const std::string& text) {
  nlohmann::json metadata = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return metadata.is_object() ? metadata : nlohmann::json::object();
}

}  // namespace

nlohmann::json mimeDataToJson(const KernelMimeData& data) {
  nlohmann::json bundle = nlohmann::json::object();
  for (const auto& [mime, value] : data) {
    if (isJsonMime(mime)) {
      nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
      bundle[mime] = parsed.is_discarded() ? nlohmann::json(value) : std::move(parsed);
    } else {
      bundle[mime] = value;
    }
  }
  return bundle;
}

nlohmann::json displayDataOutput(const KernelMimeData& data, const std::string& metadataJson) {
  return make_display_data(mimeDataToJson(data), metadataFrom(metadataJson));
}

nlohmann::json executeResultOutput(std::int64_t executionCount, const KernelMimeData& data,
                                   const std::string& metadataJson) {
  return make_execute_result(executionCount, mimeDataToJson(data), metadataFrom(metadataJson));
}

nlohmann::json errorOutput(const std::string& ename, const std::string& evalue,
                           const std::vector<std::string>& traceback) {
  return make_error_output(ename, evalue, traceback);
}

}  // namespace rt::studio
