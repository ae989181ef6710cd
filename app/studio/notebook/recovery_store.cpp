#include "notebook/recovery_store.h"

#include "notebook/ipynb.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace rt::studio {
namespace {

constexpr std::string_view kFormat = "rustytorch-studio-recovery";
constexpr std::string_view kSuffix = ".rtrecovery.json";

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. Together with the pid it
// names one process, so a recycled pid is not mistaken for the studio that wrote an entry.
std::optional<std::uint64_t> process_start_ticks(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  const std::size_t paren = line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return std::nullopt;
}

bool process_alive(int pid, std::uint64_t start_ticks) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const auto ticks = process_start_ticks(pid);
  return !ticks || *ticks == start_ticks;
}

bool is_valid_key(std::string_view key) {
  if (key.empty() || key.size() > 100) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

std::string display_name_for(const std::filesystem::path& original) {
  return original.empty() ? std::string("Untitled") : original.filename().string();
}

}  // namespace

RecoveryStore::RecoveryStore(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::filesystem::path RecoveryStore::default_directory() {
  if (const char* dir = std::getenv("RT_STUDIO_RECOVERY_DIR"); dir && *dir) return dir;
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data)
    return std::filesystem::path(data) / "rustytorch" / "recovery";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".local" / "share" / "rustytorch" / "recovery";
}

std::string RecoveryStore::key_for_path(const std::filesystem::path& original_path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(original_path, ec);
  if (ec) absolute = original_path;
  absolute = absolute.lexically_normal();
  std::string stem = absolute.stem().string();
  for (char& c : stem)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      c = '_';
  if (stem.size() > 60) stem.resize(60);
  if (stem.empty()) stem = "notebook";
  return fmt::format("{}-{:016x}", stem, fnv1a_64(absolute.string()));
}

std::string RecoveryStore::key_for_untitled(int untitled_number) {
  return fmt::format("untitled-{}-{}", ::getpid(), untitled_number);
}

std::string RecoveryStore::key_for(const NotebookDocument& doc, int untitled_number) {
  return doc.is_untitled() ? key_for_untitled(untitled_number) : key_for_path(doc.path());
}

std::filesystem::path RecoveryStore::file_for(const std::string& key) const {
  if (!is_valid_key(key))
    throw std::invalid_argument(fmt::format("recovery key \"{}\" is not file-name safe ([A-Za-z0-9._-], 1-100 "
                                            "characters); make it with RecoveryStore::key_for",
                                            key));
  return directory_ / (key + std::string(kSuffix));
}

void RecoveryStore::save(const std::string& key, const NotebookDocument& doc) {
  save(key, doc.notebook(), doc.path(), doc.disk_stamp());
}

void RecoveryStore::save(const std::string& key, const Notebook& nb, const std::filesystem::path& original_path,
                         const FileStamp& original_stamp) {
  const std::filesystem::path file = file_for(key);
  std::string ipynb;
  try {
    ipynb = to_ipynb(nb);
  } catch (const std::invalid_argument& e) {
    throw NotebookFileError(file, fmt::format("autosave of {} failed: {}", display_name_for(original_path), e.what()));
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_, ec)) {
    std::filesystem::create_directories(directory_, ec);
    if (ec)
      throw NotebookFileError(directory_, fmt::format("autosave of {} failed: cannot create the recovery folder {}: {}. "
                                                      "Set RT_STUDIO_RECOVERY_DIR to a folder you can write to.",
                                                      display_name_for(original_path), directory_.string(),
                                                      ec.message()));
    ::chmod(directory_.c_str(), 0700);
  }
  const int pid = static_cast<int>(::getpid());
  nlohmann::json doc = {
      {"format", kFormat},
      {"version", 1},
      {"key", key},
      {"original_path", original_path.string()},
      {"original_stamp", original_stamp.to_json()},
      {"saved_at_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count()},
      {"owner_pid", pid},
      {"owner_start_ticks", process_start_ticks(pid).value_or(0)},
      {"cell_count", nb.cells.size()},
      {"ipynb", std::move(ipynb)},
  };
  try {
    write_file_atomically(file, doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } catch (const NotebookFileError& e) {
    throw NotebookFileError(file, fmt::format("autosave of {} failed: {}", display_name_for(original_path), e.what()));
  }
}

std::vector<RecoveryEntry> RecoveryStore::list() const {
  std::vector<RecoveryEntry> entries;
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_, ec)) return entries;
  for (auto it = std::filesystem::directory_iterator(directory_, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix) || name.starts_with(".")) continue;
    RecoveryEntry entry;
    entry.key = name.substr(0, name.size() - kSuffix.size());
    entry.recovery_file = it->path();
    entry.display_name = entry.key;
    try {
      std::ifstream in(it->path(), std::ios::binary);
      if (!in) throw std::runtime_error(fmt::format("cannot read it: {}", std::strerror(errno)));
      std::ostringstream text;
      text << in.rdbuf();
      const nlohmann::json doc = nlohmann::json::parse(text.str());
      if (!doc.is_object() || doc.value("format", "") != kFormat)
        throw std::runtime_error("it is not a studio recovery file");
      if (doc.at("version").get<int>() != 1)
        throw std::runtime_error(fmt::format("recovery format version {} is not supported", doc.at("version").dump()));
      entry.original_path = doc.at("original_path").get<std::string>();
      entry.display_name = display_name_for(entry.original_path);
      entry.original_stamp = FileStamp::from_json(doc.at("original_stamp"));
      entry.saved_at = std::chrono::system_clock::time_point(
          std::chrono::milliseconds(doc.at("saved_at_ms").get<std::int64_t>()));
      entry.owner_pid = doc.at("owner_pid").get<int>();
      entry.owner_running = entry.owner_pid != static_cast<int>(::getpid()) &&
                            process_alive(entry.owner_pid, doc.at("owner_start_ticks").get<std::uint64_t>());
      entry.cell_count = doc.at("cell_count").get<std::size_t>();
      if (!doc.at("ipynb").is_string()) throw std::runtime_error("its notebook is missing");
      if (!entry.original_path.empty()) entry.original_changed = FileStamp::of(entry.original_path) != entry.original_stamp;
    } catch (const std::exception& e) {
      entry.error = fmt::format("{}: {}", it->path().string(), e.what());
    }
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(), [](const RecoveryEntry& a, const RecoveryEntry& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    if (a.saved_at != b.saved_at) return a.saved_at > b.saved_at;
    return a.key < b.key;
  });
  return entries;
}

std::optional<RecoveryEntry> RecoveryStore::find(const std::string& key) const {
  for (auto& entry : list())
    if (entry.key == key) return entry;
  return std::nullopt;
}

Notebook RecoveryStore::load(const RecoveryEntry& entry) const {
  const std::string source = entry.recovery_file.string();
  if (!entry.error.empty()) throw NotebookFormatError(source, entry.error, "the recovery file", "Discard this entry.");
  std::ifstream in(entry.recovery_file, std::ios::binary);
  if (!in)
    throw NotebookFileError(entry.recovery_file, fmt::format("{}: cannot read the recovery file: {}", source,
                                                             std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw NotebookFormatError(source, fmt::format("the recovery file is corrupt ({})", e.what()), "the recovery file",
                              "Discard this entry.");
  }
  if (!doc.is_object() || !doc.contains("ipynb") || !doc["ipynb"].is_string())
    throw NotebookFormatError(source, "the recovery file holds no notebook", "ipynb", "Discard this entry.");
  return parse_ipynb(doc["ipynb"].get_ref<const std::string&>(), source);
}

NotebookDocument RecoveryStore::restore(const RecoveryEntry& entry) const {
  return NotebookDocument(load(entry), entry.original_path, entry.original_stamp, /*dirty=*/true);
}

void RecoveryStore::discard(const std::string& key) {
  std::error_code ec;
  std::filesystem::remove(file_for(key), ec);
}

}  // namespace rt::studio
