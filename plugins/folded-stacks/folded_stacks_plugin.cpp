// org.rustytorch.folded-stacks: the plugin's tables, its importer's detect and import_trace.
// folded_format.h describes the format, folded_layout.h how stacks become slices and back.
#include <new>
#include <string>

#include "folded_exporter.h"
#include "folded_format.h"
#include "folded_layout.h"
#include "rt/plugin/abi.h"

namespace {

int32_t detect(const uint8_t* head, size_t size) {
  try {
    return head ? folded::detect_folded({reinterpret_cast<const char*>(head), size}) : 0;
  } catch (...) {
    return 0;
  }
}

RtStatus fail_at(RtError* error, const folded::ParseError& e) {
  const std::string message = "line " + std::to_string(e.line) + ": " + e.message;
  return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT, message.c_str());
}

RtStatus import_folded(const uint8_t* data, size_t size, const RtTraceSink* sink, RtError* error) {
  try {
    if (!sink || !RT_ABI_HAS_FIELD(sink, add_slice) || !sink->add_slice || !sink->set_metadata)
      return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT, "folded-stacks import needs a sink with add_slice");
    const std::string_view text(reinterpret_cast<const char*>(data), data ? size : 0);
    folded::FoldedFile file;
    if (auto e = folded::parse_folded(text, file)) return fail_at(error, *e);
    if (file.lines.empty())
      return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT,
                          "the file holds no stack: a folded-stacks line is 'frame;frame;... COUNT'");
    folded::Layout layout;
    if (auto e = folded::lay_out(file, layout)) return fail_at(error, *e);

    const std::string period = std::to_string(file.sample_period_ns);
    RtStatus status = sink->set_metadata(sink->context, "sample_period_ns", period.c_str());
    std::string name;
    for (const folded::LaidThread& t : layout.threads) {
      for (const folded::LaidSlice& s : t.slices) {
        if (status != RT_STATUS_OK) break;
        name.assign(s.name);
        const RtTraceSlice slice = {.struct_size = sizeof(RtTraceSlice),
                                    .thread = t.id,
                                    .thread_name = t.name.c_str(),
                                    .name = name.c_str(),
                                    .category = "sample",
                                    .start_ns = s.start_ns,
                                    .end_ns = s.end_ns,
                                    .depth = s.depth};
        status = sink->add_slice(sink->context, &slice);
      }
    }
    if (status != RT_STATUS_OK) return rt_error_set(error, status, "the host refused the stacks, or asked to stop");
    return RT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return rt_error_set(error, RT_STATUS_OUT_OF_MEMORY, "out of memory while reading folded stacks");
  } catch (const std::exception& e) {
    return rt_error_set(error, RT_STATUS_ERROR, e.what());
  }
}

const char* const kExtensions[] = {".folded", ".collapsed", nullptr};

const RtTraceImporter kImporter = {.struct_size = sizeof(RtTraceImporter),
                                   .format = "folded-stacks",
                                   .extensions = kExtensions,
                                   .detect = detect,
                                   .import_trace = import_folded};

const RtTraceExporter kExporter = {.struct_size = sizeof(RtTraceExporter),
                                   .format = "folded-stacks",
                                   .extension = ".folded",
                                   .export_trace = folded::export_folded};

const RtPluginInfo kInfo = {.struct_size = sizeof(RtPluginInfo),
                            .abi_major = RT_PLUGIN_ABI_MAJOR,
                            .abi_minor = RT_PLUGIN_ABI_MINOR,
                            .id = "org.rustytorch.folded-stacks",
                            .version = "1.0.0",
                            .initialize = nullptr,
                            .extensions_initialized = nullptr,
                            .delayed_initialize = nullptr,
                            .shutdown = nullptr,
                            .self_test = nullptr,
                            .ops = nullptr,
                            .importer = &kImporter,
                            .exporter = &kExporter,
                            .panel = nullptr};

}  // namespace

extern "C" RT_PLUGIN_EXPORT const RtPluginInfo* rt_plugin_entry(void) { return &kInfo; }
