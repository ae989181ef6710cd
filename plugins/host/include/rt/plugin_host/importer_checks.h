// rt/plugin_host/importer_checks.h — what `rtorch plugin check` runs on an importer plugin: a round trip
// through its exporter and truncated-file and byte-flip fuzzing, every run out of process.
//
//   const rt::plugin::Manifest m = rt::plugin::read_manifest("build/plugins/folded-stacks/plugin.json");
//   for (const std::filesystem::path& sample : rt::plugin::importer_samples(m))
//     for (const rt::plugin::ImporterFinding& f : rt::plugin::check_importer(m, sample))
//       std::printf("%s: %s\n", f.check.c_str(), f.message.c_str());   // no output: all checks passed
//
// Checks, in order (a failing "import" ends the list: the others need a session):
//  - "import": the sample imports (import_with_plugin) into a session with at least one slice;
//  - "round trip" (when the manifest lists "exporter"): exporting that session and importing the output gives
//    the same threads (ids and names) and, per thread, the same slices (name, start, end, depth);
//  - "truncated": every prefix of the sample at a stride (size / prefixes, at least 1 byte; the empty file and
//    the sample less its last byte included) either imports or is refused cleanly;
//  - "byte flips": `byte_flips` copies of the sample with one random byte replaced (seeded, reproducible)
//    either import or are refused cleanly.
// "Refused cleanly" means TraceFailure::Refused with a message of the plugin's own. A crash, a hang past the
// timeout, garbage on the channel, slices that do not nest, or a refusal without a message is a finding naming
// the input ("prefix of 120 bytes", "byte 37 set to 0x00").
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rt/plugin_host/manifest.h"
#include "rt/plugin_host/trace_plugins.h"

namespace rt::plugin {

struct ImporterFinding {
  std::string check;    // "import", "round trip", "truncated", "byte flips"
  std::string message;  // what went wrong, with the input that did it
};

struct ImporterCheckOptions {
  size_t prefixes = 48;     // truncated copies to try
  size_t byte_flips = 32;   // one-byte mutations to try
  uint32_t seed = 1;
  TraceRunOptions run{.timeout = std::chrono::seconds(20), .limits = {}, .runner = {}};
};

// The sample files a plugin ships for these checks: the regular files in <plugin folder>/samples/, sorted.
std::vector<std::filesystem::path> importer_samples(const Manifest& plugin);

std::vector<ImporterFinding> check_importer(const Manifest& plugin, const std::filesystem::path& sample,
                                            const ImporterCheckOptions& options = {});

// The first difference between two sessions' threads and slices, "" when they agree (what "round trip" uses).
std::string compare_trace_sessions(const rt::prof::SessionData& expected, const rt::prof::SessionData& actual);

}  // namespace rt::plugin
