#include "rt/remote/agent.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "agent/agent_server.h"
#include "rt/remote/frame.h"

namespace rt::remote {
namespace {

std::mutex g_mutex;
std::unique_ptr<AgentServer> g_server;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end && *end == '\0' ? int(n) : fallback;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& ch : text)
    if (ch == '\0') ch = ' ';
  return text;
}

std::string program_name(const std::string& cmdline) {
  const std::string first = cmdline.substr(0, cmdline.find(' '));
  const auto slash = first.rfind('/');
  return slash == std::string::npos ? first : first.substr(slash + 1);
}

// A job id becomes part of file names: keep it to a safe alphabet.
std::string file_safe(std::string s) {
  for (char& ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_')) ch = '_';
  return s.substr(0, 48);
}

void lock_for_fork() { g_mutex.lock(); }
void unlock_after_fork() { g_mutex.unlock(); }
void child_after_fork() {
  // Only the forking thread exists in the child: the agent's thread is gone, its descriptors are the parent's.
  if (g_server) g_server.release()->abandon_after_fork();  // leaked on purpose: its std::thread cannot be destroyed
  g_mutex.unlock();
}

void stop_at_exit() { stop_serving(); }

TcpAuth parse_tcp_auth(const std::string& text) {
  if (text.empty() || text == "auto") return TcpAuth::Auto;
  if (text == "token") return TcpAuth::Token;
  if (text == "none") return TcpAuth::None;
  throw rt::ValueError(fmt::format("remote attach: RT_ATTACH_LISTEN_AUTH='{}': use auto, token or none", text));
}

// The TCP side asked for by options.listen or $RT_ATTACH_LISTEN (rt/remote/tcp.h), bound before anything is
// written so that a refusal leaves no files behind.
std::optional<TcpAccess> open_tcp(AgentOptions options) {
  if (options.listen.empty()) {  // `rtorch launch --listen` reaches each rank through the environment
    options.listen = env_or("RT_ATTACH_LISTEN", "");
    if (options.listen.empty()) return std::nullopt;
    options.listen_auth = parse_tcp_auth(env_or("RT_ATTACH_LISTEN_AUTH", ""));
    TcpEndpoint e = parse_endpoint(options.listen, "remote attach: RT_ATTACH_LISTEN");
    if (e.port != 0) e.port = uint16_t(e.port + env_int("LOCAL_RANK", 0));  // one port per rank of a node
    options.listen = e.text();
  }
  TcpAccess tcp{TcpListener::bind(parse_endpoint(options.listen, "remote attach: listen address")), {}, {}};
  if (!tcp.listener.loopback() && options.listen_auth == TcpAuth::None)
    throw rt::ValueError(fmt::format(
        "remote attach: refusing to listen on {} without a token: every machine that reaches that address could "
        "watch this run. Listen on loopback (127.0.0.1:PORT) or use a token (the default off loopback: clients "
        "then need the connection file the agent writes); over a network SSH needs no port at all "
        "(rtorch attach HOST:JOB)", tcp.listener.bound().text()));
  if (!tcp.listener.loopback() || options.listen_auth == TcpAuth::Token) tcp.tokens = make_tokens();
  return tcp;
}

}  // namespace

AgentManifest serve(const AgentOptions& options) {
  static const bool registered = [] {
    ::pthread_atfork(lock_for_fork, unlock_after_fork, child_after_fork);
    std::atexit(stop_at_exit);
    return true;
  }();
  (void)registered;
  std::lock_guard lock(g_mutex);
  if (g_server) return g_server->manifest();

  AgentManifest m;
  m.pid = int(::getpid());
  m.program = command_line();
  m.job = !options.job.empty() ? options.job
                               : env_or("RT_LAUNCH_JOB_ID", env_or("TORCHELASTIC_RUN_ID", env_or("SLURM_JOB_ID", "")));
  if (m.job.empty()) m.job = fmt::format("{}-{}", program_name(m.program), m.pid);
  m.rank = options.rank >= 0 ? options.rank : env_int("RANK", 0);
  m.world_size = options.world_size > 0 ? options.world_size : env_int("WORLD_SIZE", 1);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  m.host = host;
  m.start_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  m.rt_version = RT_VERSION_STRING;
  m.protocol = kProtocolVersion;
  const std::filesystem::path dir = options.runtime_dir.empty() ? ensure_runtime_dir() : options.runtime_dir;
  const std::string stem = fmt::format("{}.r{}.{}", file_safe(m.job), m.rank, m.pid);
  m.socket = (dir / (stem + ".sock")).string();
  std::optional<TcpAccess> tcp = open_tcp(options);
  if (tcp) m.listen = tcp->listener.bound().text();
  UniqueFd listener = listen_unix(m.socket);
  const std::filesystem::path manifest_path = dir / (stem + ".json");
  if (tcp && tcp->tokens) {
    tcp->connection_file = connection_file_path(m);
    write_connection_file(tcp->connection_file, m, *tcp->tokens);
  }
  write_manifest(manifest_path, m);
  g_server = std::make_unique<AgentServer>(options, m, std::move(listener), manifest_path, std::move(tcp));
  return m;
}

void stop_serving(std::chrono::milliseconds flush_timeout) {
  std::unique_ptr<AgentServer> server;
  {
    std::lock_guard lock(g_mutex);
    server = std::move(g_server);
  }
  if (server) server->stop(flush_timeout);
}

std::optional<AgentManifest> serving() {
  std::lock_guard lock(g_mutex);
  if (!g_server) return std::nullopt;
  return g_server->manifest();
}

}  // namespace rt::remote
