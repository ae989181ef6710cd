#include "rt/remote/manifest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rt/error.h"

namespace fs = std::filesystem;

namespace rt::remote {

fs::path runtime_dir() {
  if (const char* d = std::getenv("RT_RUNTIME_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return fs::path(x) / "rustytorch";
  return fs::path("/tmp") / fmt::format("rustytorch-{}", geteuid());
}

fs::path ensure_runtime_dir() {
  const fs::path dir = runtime_dir();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw rt::Error(fmt::format("remote attach: cannot create the runtime folder {}: {}; set RT_RUNTIME_DIR to a "
                                "folder of yours", dir.string(), std::strerror(errno)));
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw rt::Error(fmt::format("remote attach: {} is not a folder; remove it or set RT_RUNTIME_DIR", dir.string()));
  if (st.st_uid != geteuid())
    throw rt::Error(fmt::format("remote attach: the runtime folder {} belongs to uid {}, not to you (uid {}); "
                                "another user could read your sockets: remove it or set RT_RUNTIME_DIR",
                                dir.string(), st.st_uid, geteuid()));
  if (st.st_mode & 077)
    throw rt::Error(fmt::format("remote attach: the runtime folder {} has mode {:o}; it must be 0700 so that "
                                "only you reach the sockets in it: chmod 700 {}",
                                dir.string(), st.st_mode & 0777, dir.string()));
  return dir;
}

std::string manifest_json(const AgentManifest& m) {
  nlohmann::json j = {{"job", m.job},           {"rank", m.rank},
                      {"world_size", m.world_size}, {"host", m.host},
                      {"pid", m.pid},           {"start_time_ms", m.start_time_ms},
                      {"program", m.program},   {"rt_version", m.rt_version},
                      {"protocol", m.protocol}, {"socket", m.socket}};
  if (!m.listen.empty()) j["listen"] = m.listen;
  return j.dump();
}

AgentManifest parse_manifest(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw rt::ValueError("agent manifest: not a JSON object");
  auto field = [&](const char* name) -> const nlohmann::json& {
    auto it = j.find(name);
    if (it == j.end()) throw rt::ValueError(fmt::format("agent manifest: missing field '{}'", name));
    return *it;
  };
  AgentManifest m;
  try {
    m.job = field("job").get<std::string>();
    m.rank = field("rank").get<int>();
    m.world_size = field("world_size").get<int>();
    m.host = field("host").get<std::string>();
    m.pid = field("pid").get<int>();
    m.start_time_ms = field("start_time_ms").get<int64_t>();
    m.program = field("program").get<std::string>();
    m.rt_version = field("rt_version").get<std::string>();
    m.protocol = field("protocol").get<int>();
    m.socket = field("socket").get<std::string>();
    m.listen = j.value("listen", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw rt::ValueError(fmt::format("agent manifest: a field has the wrong type ({})", e.what()));
  }
  return m;
}

void write_manifest(const fs::path& path, const AgentManifest& m) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw rt::Error(fmt::format("remote attach: cannot write {}: {}", tmp.string(), std::strerror(errno)));
  const std::string text = manifest_json(m) + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw rt::Error(fmt::format("remote attach: cannot write the manifest {}: {}", path.string(), std::strerror(errno)));
  }
}

std::vector<AgentManifest> list_manifests(const fs::path& dir, bool prune) {
  std::vector<AgentManifest> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    AgentManifest m;
    try {
      m = parse_manifest(text.str());
    } catch (const rt::Error&) {
      continue;  // not a manifest (or one being replaced): not ours to judge
    }
    if (m.pid <= 0 || (::kill(m.pid, 0) != 0 && errno == ESRCH)) {
      if (prune) {
        fs::remove(entry.path(), ec);
        if (!m.socket.empty() && fs::path(m.socket).parent_path() == dir) {
          fs::remove(m.socket, ec);
          fs::remove(fs::path(m.socket).replace_extension(".connection"), ec);  // rt/remote/tcp.h
        }
      }
      continue;
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const AgentManifest& a, const AgentManifest& b) {
    return a.job != b.job ? a.job < b.job : a.rank != b.rank ? a.rank < b.rank : a.pid < b.pid;
  });
  return out;
}

}  // namespace rt::remote
