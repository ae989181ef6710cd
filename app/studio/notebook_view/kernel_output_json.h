// app/studio/notebook_view/kernel_output_json.h — what the kernel sends, as the nbformat output dicts the
// notebook stores.
//
//   doc.edit_outputs(i, [&](auto& outs) {
//     outs.push_back(rt::studio::displayDataOutput(data.data, data.metadata_json));
//   });
//
// Contracts:
// - Mime bundles come from the kernel as type -> text (python_kernel.h); JSON types (application/json and
//   application/*+json) are parsed into JSON values, as nbformat holds them; text that fails to parse stays text.
// - Bad metadata JSON becomes {} rather than failing: an output is never lost over its metadata.
// - Built with notebook/outputs.h's make_* functions, so every dict validates against nbformat 4.5.
// (The parameters are plain std types on purpose: python_kernel.h and notebook/outputs.h both declare a
// `rt::studio::MimeBundle`, with different meanings, so no file here includes both.)
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rt::studio {

using KernelMimeData = std::map<std::string, std::string>;

nlohmann::json mimeDataToJson(const KernelMimeData& data);
nlohmann::json displayDataOutput(const KernelMimeData& data, const std::string& metadataJson);
nlohmann::json executeResultOutput(std::int64_t executionCount, const KernelMimeData& data,
                                   const std::string& metadataJson);
nlohmann::json errorOutput(const std::string& ename, const std::string& evalue,
                           const std::vector<std::string>& traceback);

}  // namespace rt::studio
