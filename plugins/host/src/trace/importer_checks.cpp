// The checks `rtorch plugin check` runs on importer plugins (rt/plugin_host/importer_checks.h).
#include "rt/plugin_host/importer_checks.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <tuple>

namespace rt::plugin {
namespace {

namespace fs = std::filesystem;

// A folder for the check's files, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / fmt::format("rt-importer-check-{}-{}", getpid(), counter++);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw TracePluginError(fmt::format("cannot read the sample {}", p.string()));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw TracePluginError(fmt::format("cannot write {}", p.string()));
}

// "" when importing `file` succeeded or was refused with a message of the plugin's own; else what went wrong.
std::string import_problem(const Manifest& plugin, const fs::path& file, const TraceRunOptions& options) {
  try {
    import_with_plugin(plugin, file, options);
    return {};
  } catch (const TracePluginError& e) {
    const std::string what = e.what();
    if (e.failure() == TraceFailure::Refused) {
      if (what.find("and no message") != std::string::npos)
        return "refused without a message (" + what + "); say what is wrong and where";
      return {};
    }
    return what;
  }
}

using SliceKey = std::tuple<std::string, int64_t, int64_t, int32_t>;

std::map<uint64_t, std::vector<SliceKey>> slices_by_thread(const rt::prof::SessionData& s) {
  std::map<uint64_t, std::vector<SliceKey>> out;
  for (const rt::prof::OpRecord& op : s.ops)
    out[op.thread].emplace_back(s.strings.at(op.name), op.start_ns, op.end_ns, op.depth);
  for (auto& [thread, slices] : out) std::sort(slices.begin(), slices.end());
  return out;
}

std::string describe(const SliceKey& k) {
  return fmt::format("\"{}\" [{}, {}] ns at depth {}", std::get<0>(k), std::get<1>(k), std::get<2>(k),
                     std::get<3>(k));
}

}  // namespace

std::vector<fs::path> importer_samples(const Manifest& plugin) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path dir = plugin.folder() / "samples";
  if (!fs::is_directory(dir, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string compare_trace_sessions(const rt::prof::SessionData& expected, const rt::prof::SessionData& actual) {
  std::map<uint64_t, std::string> a, b;
  for (const rt::prof::ThreadRecord& t : expected.threads) a[t.thread] = expected.strings.at(t.name);
  for (const rt::prof::ThreadRecord& t : actual.threads) b[t.thread] = actual.strings.at(t.name);
  for (const auto& [id, name] : a) {
    auto it = b.find(id);
    if (it == b.end()) return fmt::format("thread {} (\"{}\") is missing", id, name);
    if (it->second != name) return fmt::format("thread {} is named \"{}\", expected \"{}\"", id, it->second, name);
  }
  for (const auto& [id, name] : b)
    if (!a.count(id)) return fmt::format("thread {} (\"{}\") is new", id, name);
  const auto sa = slices_by_thread(expected), sb = slices_by_thread(actual);
  for (const auto& [thread, slices] : sa) {
    auto it = sb.find(thread);
    const std::vector<SliceKey> none;
    const std::vector<SliceKey>& other = it == sb.end() ? none : it->second;
    for (size_t i = 0; i < std::max(slices.size(), other.size()); ++i) {
      if (i >= other.size()) return fmt::format("thread {}: slice {} is missing", thread, describe(slices[i]));
      if (i >= slices.size()) return fmt::format("thread {}: slice {} is new", thread, describe(other[i]));
      if (slices[i] != other[i])
        return fmt::format("thread {}: expected slice {}, got {}", thread, describe(slices[i]), describe(other[i]));
    }
  }
  for (const auto& [thread, slices] : sb)
    if (!sa.count(thread) && !slices.empty()) return fmt::format("thread {} has slices it should not", thread);
  return {};
}

std::vector<ImporterFinding> check_importer(const Manifest& plugin, const fs::path& sample,
                                            const ImporterCheckOptions& options) {
  std::vector<ImporterFinding> findings;
  const std::string bytes = read_all(sample);
  const std::string sample_name = sample.filename().string();
  ScratchDir scratch;

  TraceImport imported;
  try {
    imported = import_with_plugin(plugin, sample, options.run);
  } catch (const TracePluginError& e) {
    findings.push_back({"import", fmt::format("the sample {} does not import: {}", sample_name, e.what())});
    return findings;
  }
  if (imported.session.ops.empty()) {
    findings.push_back({"import", fmt::format("the sample {} imports into a session without slices", sample_name)});
    return findings;
  }

  if (plugin.has_kind(Kind::Exporter)) {
    const fs::path exported = scratch.path() / ("exported" + sample.extension().string());
    try {
      export_with_plugin(plugin, imported.session, exported, options.run);
      const TraceImport again = import_with_plugin(plugin, exported, options.run);
      if (std::string diff = compare_trace_sessions(imported.session, again.session); !diff.empty())
        findings.push_back({"round trip", fmt::format("importing the export of {} differs: {}", sample_name, diff)});
    } catch (const TracePluginError& e) {
      findings.push_back({"round trip", e.what()});
    }
  }

  const fs::path cut = scratch.path() / ("cut" + sample.extension().string());
  std::vector<size_t> lengths;
  const size_t stride = std::max<size_t>(1, bytes.size() / std::max<size_t>(1, options.prefixes));
  for (size_t n = 0; n < bytes.size(); n += stride) lengths.push_back(n);
  if (!bytes.empty()) lengths.push_back(bytes.size() - 1);
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (size_t n : lengths) {
    write_all(cut, std::string_view(bytes).substr(0, n));
    if (std::string problem = import_problem(plugin, cut, options.run); !problem.empty())
      findings.push_back({"truncated", fmt::format("{} cut to its first {} bytes: {}", sample_name, n, problem)});
  }

  std::mt19937 random(options.seed);
  const fs::path flipped = scratch.path() / ("flipped" + sample.extension().string());
  for (size_t i = 0; i < options.byte_flips && !bytes.empty(); ++i) {
    std::string mutated = bytes;
    const size_t at = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(random);
    const auto value = static_cast<unsigned char>(std::uniform_int_distribution<int>(0, 255)(random));
    mutated[at] = static_cast<char>(value);
    write_all(flipped, mutated);
    if (std::string problem = import_problem(plugin, flipped, options.run); !problem.empty())
      findings.push_back(
          {"byte flips", fmt::format("{} with byte {} set to 0x{:02x}: {}", sample_name, at, value, problem)});
  }
  return findings;
}

}  // namespace rt::plugin
