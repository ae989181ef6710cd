// app/studio/runner/cell_output_builder.h — turns a kernel's events for one cell into that cell's nbformat
// outputs, as Jupyter front ends do. CellOutputBuilder serves the headless NotebookRunner; the notebook view
// (which accumulates streams per request itself) uses the single-output functions at the end.
//
//   rt::studio::CellOutputBuilder outputs(cell.outputs);          // clears them: a new run starts empty
//   outputs.add_stream(rt::studio::Stream::out, "loss 0.3\r");    // StreamAccumulator: merge, '\r', cap
//   outputs.add_display(display_data);                              // display_data (matplotlib figures)
//   outputs.add_result(3, result);                                  // execute_result with execution_count 3
//   outputs.add_error(error);                                       // error with the traceback lines
//
// Contracts:
// - The builder writes into the vector it was given (which must outlive it) and owns no other state than the
//   stream accumulator's; it is not thread-safe (the runner calls it under its own lock).
// - Mime bundles from the kernel (text) become nbformat data: application/json and application/*+json are
//   parsed back into JSON values (kept as text if they do not parse); everything else stays a string.
//   Display metadata_json is parsed likewise ({} when empty or invalid).
// - Error tracebacks are stored as the kernel gives them (one entry per line, plain text).
#pragma once
#include "kernel/python_kernel.h"
#include "notebook/stream_accumulator.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace rt::studio {

class CellOutputBuilder {
 public:
  explicit CellOutputBuilder(std::vector<nlohmann::json>& outputs, StreamLimits limits = {});

  void add_stream(Stream stream, const std::string& text);
  void add_display(const DisplayData& display);
  void add_result(int execution_count, const DisplayData& result);
  void add_error(const ExecutionError& error);

  const StreamAccumulator& streams() const { return streams_; }

 private:
  std::vector<nlohmann::json>& outputs_;
  StreamAccumulator streams_;
};

// nbformat "data" for a kernel MimeBundle (see the contracts above).
nlohmann::json mime_bundle_to_json(const MimeBundle& bundle);

// One nbformat output dict each, built with notebook/outputs.h's make_* (valid nbformat 4.5):
//   doc.edit_outputs(i, [&](auto& outs) { outs.push_back(rt::studio::display_data_output(display)); });
nlohmann::json display_data_output(const DisplayData& display);
nlohmann::json execute_result_output(std::int64_t execution_count, const DisplayData& result);
nlohmann::json error_output(const ExecutionError& error);

}  // namespace rt::studio
