// app/studio/notebook/outputs.h — building and reading nbformat 4 outputs (the json dicts in Cell::outputs).
//
//   using namespace rt::studio;
//   cell.outputs.push_back(make_stream_output("stdout", "epoch 1 loss 0.31\n"));
//   cell.outputs.push_back(make_execute_result(3, {{"text/plain", "tensor([1., 2.])"}}));
//   cell.outputs.push_back(make_display_data({{"image/png", base64_png}, {"text/plain", "<Figure 640x480>"}}));
//   cell.outputs.push_back(make_error_output("ZeroDivisionError", "division by zero", traceback_lines));
//
//   switch (output_kind(out)) {
//     case OutputKind::stream: draw_text(stream_text(out)); break;
//     case OutputKind::execute_result:
//     case OutputKind::display_data: if (auto png = mime_text(out, "image/png")) draw_png(*png); break;
//     case OutputKind::error: draw_traceback(out["traceback"]); break;
//     case OutputKind::unknown: draw_text(out.dump()); break;
//   }
//
// Contracts:
// - OutputData (nbformat "data") maps a MIME type to its value: a joined std::string for text/* and base64
//   images (as nbformat holds them in memory), or any json for application/json and application/*+json. (The
//   kernel's python_kernel.h has its own MimeBundle, type -> text; runner/cell_output_builder.h converts.)
// - make_* fill every key nbformat 4.5's schema requires ("metadata": {} included), so the result validates.
// - Traceback lines are kept as given (they may hold ANSI colour escapes, as IPython's do).
// - Readers never throw on a malformed output: they return std::nullopt / empty / OutputKind::unknown.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rt::studio {

using OutputData = nlohmann::json;  // a json object: {"text/plain": "...", "image/png": "iVBOR...", ...}

enum class OutputKind { stream, display_data, execute_result, error, unknown };

// `name` is "stdout" or "stderr".
nlohmann::json make_stream_output(std::string_view name, std::string text);
nlohmann::json make_display_data(OutputData data, nlohmann::json metadata = nlohmann::json::object());
nlohmann::json make_execute_result(std::int64_t execution_count, OutputData data,
                                   nlohmann::json metadata = nlohmann::json::object());
nlohmann::json make_error_output(std::string ename, std::string evalue, std::vector<std::string> traceback);

OutputKind output_kind(const nlohmann::json& output);
// "stdout"/"stderr" for a stream output, else empty.
std::string stream_name(const nlohmann::json& output);
// A stream output's text (joined), else empty.
std::string stream_text(const nlohmann::json& output);
// The value of `mime` in a display_data/execute_result's data as a string (lists of lines joined), if present.
std::optional<std::string> mime_text(const nlohmann::json& output, std::string_view mime);
// The traceback of an error output joined with '\n' (ANSI escapes kept), else empty.
std::string error_traceback_text(const nlohmann::json& output);

// Removes ANSI/VT100 escape sequences (colours, cursor moves) from `text`, for plain-text display and tests.
std::string strip_ansi_escapes(std::string_view text);

}  // namespace rt::studio
