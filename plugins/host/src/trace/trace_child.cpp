// The child side of out-of-process trace plugins (trace_child.h).
#include "trace/trace_child.h"

#include "rt/plugin_host/crash_marker.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "rt/plugin_host/plugin_manager.h"
#include "trace/trace_wire.h"

namespace rt::plugin {
namespace {

// Buffered writes to the record channel.
class Channel {
 public:
  std::string buffer;
  bool flush() {
    size_t done = 0;
    while (done < buffer.size()) {
      const ssize_t n = write(wire::kRecordFd, buffer.data() + done, buffer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += size_t(n);
    }
    buffer.clear();
    return true;
  }
  bool maybe_flush() { return buffer.size() < (size_t(256) << 10) || flush(); }
};

std::optional<TraceLimits> parse_limits(const std::string& text) {
  TraceLimits l;
  unsigned long long a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%llu:%llu:%llu:%llu%c", &a, &b, &c, &d, &tail) != 4) return std::nullopt;
  l.max_slices = a;
  l.max_bytes = b;
  l.max_string_bytes = c;
  l.max_metadata = d;
  return l;
}

std::optional<std::string> read_file(const std::string& path, size_t limit, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("cannot open {}: {}", path, strerror(errno));
    return std::nullopt;
  }
  std::string data;
  if (limit == SIZE_MAX) {
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    data.resize(limit);
    in.read(data.data(), std::streamsize(limit));
    data.resize(size_t(in.gcount()));
  }
  if (in.bad()) {
    error = fmt::format("cannot read {}", path);
    return std::nullopt;
  }
  return data;
}

std::string message_of(const RtError& e, RtStatus status) {
  std::string m(e.message, strnlen(e.message, sizeof e.message));
  return m.empty() ? fmt::format("failed with status {} and no message", int(status)) : m;
}

// Forwards an importer's calls: checked by a TraceSessionBuilder, then streamed to the parent.
struct ForwardingSink {
  TraceSessionBuilder builder;
  Channel* channel;
  RtTraceSink table;
  explicit ForwardingSink(const TraceLimits& limits, Channel* c)
      : builder(limits), channel(c),
        table{.struct_size = sizeof(RtTraceSink), .context = this, .set_metadata = set_metadata,
              .add_slice = add_slice} {}

  static RtStatus set_metadata(void* context, const char* key, const char* value) {
    auto* self = static_cast<ForwardingSink*>(context);
    try {
      const RtStatus s = self->builder.set_metadata(key, value);
      if (s != RT_STATUS_OK) return s;
      wire::put_metadata(self->channel->buffer, key, value);
      return self->channel->maybe_flush() ? RT_STATUS_OK : RT_STATUS_ERROR;
    } catch (...) {
      return RT_STATUS_OUT_OF_MEMORY;
    }
  }
  static RtStatus add_slice(void* context, const RtTraceSlice* slice) {
    auto* self = static_cast<ForwardingSink*>(context);
    try {
      const RtStatus s = self->builder.add_slice(slice);
      if (s != RT_STATUS_OK) return s;
      wire::put_slice(self->channel->buffer, *slice);
      return self->channel->maybe_flush() ? RT_STATUS_OK : RT_STATUS_ERROR;
    } catch (...) {
      return RT_STATUS_OUT_OF_MEMORY;
    }
  }
};

struct ExportWriter {
  Channel* channel;
  static RtStatus write(void* context, const void* data, size_t size) {
    auto* self = static_cast<ExportWriter*>(context);
    if (size > 0 && !data) return RT_STATUS_INVALID_ARGUMENT;
    try {
      const auto* p = static_cast<const char*>(data);
      while (size > 0) {
        const size_t n = std::min<size_t>(size, wire::kMaxBytesChunk);
        wire::put_bytes(self->channel->buffer, std::string_view(p, n));
        if (!self->channel->maybe_flush()) return RT_STATUS_ERROR;
        p += n;
        size -= n;
      }
      return RT_STATUS_OK;
    } catch (...) {
      return RT_STATUS_OUT_OF_MEMORY;
    }
  }
};

// Reads the session the parent sends on stdin.
std::optional<rt::prof::SessionData> read_session(const TraceLimits& limits, std::string& error) {
  wire::RecordReader reader(limits.max_string_bytes);
  TraceSessionBuilder builder(limits);
  char buffer[64 << 10];
  bool ended = false;
  try {
    while (!ended) {
      const ssize_t n = read(0, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      reader.feed(std::string_view(buffer, size_t(n)));
      while (std::optional<wire::Record> r = reader.next()) {
        if (r->type == wire::RecordType::End) {
          ended = true;
          break;
        }
        if (r->type == wire::RecordType::Metadata) {
          builder.set_metadata(r->text[0].c_str(), r->text[1].c_str());
        } else if (r->type == wire::RecordType::Slice) {
          const RtTraceSlice s = r->slice();
          builder.add_slice(&s);
        } else {
          error = fmt::format("the host sent a {} record", wire::record_name(r->type));
          return std::nullopt;
        }
      }
    }
    if (!ended) {
      error = "the host's session ended early";
      return std::nullopt;
    }
    return builder.finish();
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

int finish(Channel& channel, RtStatus status, const std::string& message) {
  wire::put_result(channel.buffer, int32_t(status), message.substr(0, 4000));
  return channel.flush() ? 0 : 3;
}

}  // namespace

std::string format_limits(const TraceLimits& l) {
  return fmt::format("{}:{}:{}:{}", l.max_slices, l.max_bytes, l.max_string_bytes, l.max_metadata);
}

int trace_plugin_child_main(int argc, char** argv) {
  restore_default_crash_signals();  // a crashing plugin must end this process by its signal (crash_marker.h)
  if (fcntl(wire::kRecordFd, F_GETFD) == -1 || argc != 5) {
    std::fprintf(stderr,
                 "%s runs a trace importer or exporter plugin in a child process for rtorch and the studio; it is "
                 "not meant to be run by hand. Use `rtorch trace import --plugin ID FILE` or `rtorch trace "
                 "export --format FORMAT ...`.\n",
                 kTraceRunnerName);
    return 2;
  }
  const std::string mode = argv[1], folder = argv[2], file = argv[3];
  Channel channel;
  const std::optional<TraceLimits> limits = parse_limits(argv[4]);
  if (!limits) return finish(channel, RT_STATUS_INVALID_ARGUMENT, fmt::format("bad limits \"{}\"", argv[4]));
  const bool exporting = mode == "export";
  if (mode != "detect" && mode != "import" && !exporting)
    return finish(channel, RT_STATUS_INVALID_ARGUMENT, fmt::format("unknown mode \"{}\"", mode));

  std::string id;
  std::unique_ptr<PluginManager> manager;  // lives as long as the plugin's code runs
  try {
    // The parent chose this plugin: load it even if it is off by default.
    ManagerOptions options;
    options.app = kTraceChildApp;
    options.enabled.insert(read_manifest(std::filesystem::path(folder) / "plugin.json").id);
    manager = std::make_unique<PluginManager>(options);
    PluginRecord& added = manager->add(folder);
    id = added.manifest.id;
    if (added.state == PluginState::Invalid) return finish(channel, RT_STATUS_ERROR, added.error);
    manager->load_and_initialize({exporting ? Kind::Exporter : Kind::Importer});
  } catch (const std::exception& e) {
    return finish(channel, RT_STATUS_ERROR, e.what());
  }
  const PluginRecord* record = manager->find(id);
  if (!record || record->state != PluginState::Initialized || !record->info)
    return finish(channel, RT_STATUS_ERROR,
                  record && !record->error.empty()
                      ? record->error
                      : fmt::format("{} was not loaded (state {})", id, record ? state_name(record->state) : "?"));
  const RtPluginInfo* info = record->info;
  const RtTraceImporter* importer = RT_ABI_HAS_FIELD(info, importer) ? info->importer : nullptr;
  const RtTraceExporter* exporter = RT_ABI_HAS_FIELD(info, exporter) ? info->exporter : nullptr;

  try {
    if (exporting) {
      if (!exporter || !RT_ABI_HAS_FIELD(exporter, export_trace) || !exporter->export_trace)
        return finish(channel, RT_STATUS_UNSUPPORTED, fmt::format("{} has no exporter", id));
      wire::put_hello(channel.buffer, id, exporter->format ? exporter->format : "");
      std::string error;
      const std::optional<rt::prof::SessionData> session = read_session(*limits, error);
      if (!session) return finish(channel, RT_STATUS_ERROR, error);
      const TraceSessionSource source(*session);
      ExportWriter writer{&channel};
      RtError e{};
      const RtStatus s = exporter->export_trace(source.source(), ExportWriter::write, &writer, &e);
      return finish(channel, s, s == RT_STATUS_OK ? std::string() : message_of(e, s));
    }
    if (!importer || !RT_ABI_HAS_FIELD(importer, import_trace) || !importer->import_trace || !importer->detect)
      return finish(channel, RT_STATUS_UNSUPPORTED, fmt::format("{} has no importer with detect and import_trace", id));
    wire::put_hello(channel.buffer, id, importer->format ? importer->format : "");
    std::string error;
    const std::optional<std::string> data = read_file(file, mode == "detect" ? kDetectWindow : SIZE_MAX, error);
    if (!data) return finish(channel, RT_STATUS_INVALID_ARGUMENT, error);
    const auto* bytes = reinterpret_cast<const uint8_t*>(data->data());
    if (mode == "detect") {
      const int32_t confidence = importer->detect(bytes, data->size());
      wire::put_detect(channel.buffer, std::clamp(confidence, 0, 100));
      return finish(channel, RT_STATUS_OK, "");
    }
    ForwardingSink sink(*limits, &channel);
    RtError e{};
    const RtStatus s = importer->import_trace(bytes, data->size(), &sink.table, &e);
    if (s != RT_STATUS_OK) {
      std::string message = message_of(e, s);
      if (sink.builder.failed()) message += " (the host refused: " + sink.builder.error() + ")";
      return finish(channel, s, message);
    }
    if (sink.builder.failed())
      return finish(channel, RT_STATUS_INVALID_ARGUMENT,
                    "the importer returned success after the host refused a value: " + sink.builder.error());
    return finish(channel, RT_STATUS_OK, "");
  } catch (const std::exception& e) {
    return finish(channel, RT_STATUS_ERROR,
                  fmt::format("{} threw a C++ exception across the C boundary ({})", id, e.what()));
  } catch (...) {
    return finish(channel, RT_STATUS_ERROR, fmt::format("{} threw across the C boundary", id));
  }
}

}  // namespace rt::plugin
