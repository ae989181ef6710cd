#include "rt/remote/ssh.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "net/child_process.h"
#include "net/unix_socket.h"
#include "rt/error.h"

namespace rt::remote {
namespace {

constexpr size_t kMaxListing = 4u << 20;
constexpr size_t kMaxStderr = 8u << 10;

// One word for a POSIX shell on the remote side.
std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./:=@%+-,", c) != nullptr;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> shell_words(const std::string& text, const char* what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) throw rt::ValueError(fmt::format("{}='{}' has an unclosed {} quote", what, text, quote));
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

}  // namespace

std::vector<std::string> ssh_program() {
  const char* v = std::getenv("RT_SSH");
  if (!v || !*v) return {"ssh"};
  std::vector<std::string> words = shell_words(v, "RT_SSH");
  if (words.empty()) return {"ssh"};
  return words;
}

std::vector<std::string> ssh_command(const std::string& host, const std::vector<std::string>& rtorch_args) {
  if (host.empty() || host.front() == '-')
    throw rt::ValueError(fmt::format("remote attach: '{}' is not a host name", host));
  std::vector<std::string> argv = ssh_program();
  argv.push_back(host);
  const char* remote = std::getenv("RT_REMOTE_RTORCH");
  argv.push_back(remote && *remote ? shell_quoted(remote) : "rtorch");
  for (const auto& a : rtorch_args) argv.push_back(shell_quoted(a));
  return argv;
}

std::vector<std::string> relay_command(const std::string& host, const std::string& job, int rank) {
  return ssh_command(host, {"relay", "--job", job, "--rank", std::to_string(rank)});
}

std::vector<AgentManifest> list_remote_manifests(const std::string& host, std::chrono::milliseconds timeout) {
  const std::vector<std::string> argv = ssh_command(host, {"relay", "--list"});
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw rt::Error(fmt::format("remote attach: pipe: {}", std::strerror(errno)));
  UniqueFd out_read(out[0]), out_write(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) throw rt::Error(fmt::format("remote attach: pipe: {}", std::strerror(errno)));
  UniqueFd err_read(err[0]), err_write(err[1]);
  UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ChildProcess child = ChildProcess::spawn(argv, null_in.get(), out_write.get(), err_write.get());
  out_write.reset();
  err_write.reset();
  set_nonblocking(out_read.get());
  set_nonblocking(err_read.get());
  std::string listing, said;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_read || err_read) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw rt::Error(fmt::format("remote attach: `{}` did not finish within {} ms{}", command_text(argv),
                                  timeout.count(), said.empty() ? "" : ": " + said));
    pollfd p[2] = {{out_read ? out_read.get() : -1, POLLIN, 0}, {err_read ? err_read.get() : -1, POLLIN, 0}};
    if (::poll(p, 2, int(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      UniqueFd& fd = i == 0 ? out_read : err_read;
      if (!fd || !p[i].revents) continue;
      char buf[16 << 10];
      const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
      if (n > 0) {
        std::string& into = i == 0 ? listing : said;
        into.append(buf, size_t(n));
        if (i == 0 && listing.size() > kMaxListing)
          throw rt::Error(fmt::format("remote attach: `{}` printed over {} bytes; that is not a job listing",
                                      command_text(argv), kMaxListing));
        if (i == 1 && said.size() > kMaxStderr) said.erase(0, said.size() - kMaxStderr);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fd.reset();
      }
    }
  }
  const std::optional<int> status = child.wait_for(std::chrono::seconds(5));
  while (!said.empty() && std::isspace(static_cast<unsigned char>(said.back()))) said.pop_back();
  if (!status || *status != 0) {
    const bool not_found = status && WIFEXITED(*status) && WEXITSTATUS(*status) == 127;
    throw rt::Error(fmt::format("remote attach: `{}` failed ({}){}{}", command_text(argv),
                                status ? describe_exit(*status) : "did not exit", said.empty() ? "" : ": " + said,
                                not_found ? " (set RT_REMOTE_RTORCH to rtorch's path on that host)" : ""));
  }
  std::vector<AgentManifest> manifests;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') continue;
    try {
      manifests.push_back(parse_manifest(line));
    } catch (const rt::ValueError& e) {
      throw rt::Error(fmt::format("remote attach: `{}` printed a line that is not a manifest ({}); is rtorch on "
                                  "{} of this version?", command_text(argv), e.what(), host));
    }
  }
  return manifests;
}

std::pair<std::string, std::string> split_host_job(const std::string& text) {
  size_t from = 0;
  if (const auto at = text.find('@'); at != std::string::npos && text.find(':') > at) from = at + 1;
  if (from < text.size() && text[from] == '[') {
    const auto close = text.find(']', from);
    if (close != std::string::npos && close + 1 < text.size() && text[close + 1] == ':')
      return {text.substr(0, from) + text.substr(from + 1, close - from - 1), text.substr(close + 2)};  // ssh wants ::1
  }
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {"", text};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace rt::remote
