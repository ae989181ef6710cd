#include "runner/cell_output_builder.h"

#include "notebook/outputs.h"

namespace rt::studio {
namespace {

bool is_json_mime(const std::string& mime) {
  return mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"));
}

nlohmann::json parse_object_or_empty(const std::string& text) {
  if (text.empty()) return nlohmann::json::object();
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : nlohmann::json::object();
}

}  // namespace

nlohmann::json mime_bundle_to_json(const MimeBundle& bundle) {
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [mime, text] : bundle) {
    if (is_json_mime(mime)) {
      nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      data[mime] = value.is_discarded() ? nlohmann::json(text) : std::move(value);
    } else {
      data[mime] = text;
    }
  }
  return data;
}

CellOutputBuilder::CellOutputBuilder(std::vector<nlohmann::json>& outputs, StreamLimits limits)
    : outputs_(outputs), streams_(limits) {
  outputs_.clear();
}

void CellOutputBuilder::add_stream(Stream stream, const std::string& text) {
  streams_.append(outputs_, nbformat_name(stream), text);
}

nlohmann::json display_data_output(const DisplayData& display) {
  return make_display_data(mime_bundle_to_json(display.data), parse_object_or_empty(display.metadata_json));
}

nlohmann::json execute_result_output(std::int64_t execution_count, const DisplayData& result) {
  return make_execute_result(execution_count, mime_bundle_to_json(result.data),
                             parse_object_or_empty(result.metadata_json));
}

nlohmann::json error_output(const ExecutionError& error) {
  return make_error_output(error.ename, error.evalue, error.traceback);
}

void CellOutputBuilder::add_display(const DisplayData& display) { outputs_.push_back(display_data_output(display)); }

void CellOutputBuilder::add_result(int execution_count, const DisplayData& result) {
  outputs_.push_back(execute_result_output(execution_count, result));
}

void CellOutputBuilder::add_error(const ExecutionError& error) { outputs_.push_back(error_output(error)); }

}  // namespace rt::studio
