#include "net/unix_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::remote {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

namespace {

sockaddr_un address_of(const std::filesystem::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string s = path.string();
  if (s.size() >= sizeof(a.sun_path))
    throw rt::Error(fmt::format("remote attach: the socket path {} is {} bytes, over the system's limit of {}; "
                                "set RT_RUNTIME_DIR to a shorter folder", s, s.size(), sizeof(a.sun_path) - 1));
  std::memcpy(a.sun_path, s.c_str(), s.size() + 1);
  return a;
}

}  // namespace

UniqueFd listen_unix(const std::filesystem::path& path) {
  const sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw rt::Error(fmt::format("remote attach: socket(): {}", std::strerror(errno)));
  ::unlink(path.c_str());
  // The folder is 0700 already (ensure_runtime_dir); the umask keeps the socket itself from ever being wider.
  const mode_t old = ::umask(0177);
  const int rc = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a));
  const int bind_errno = errno;
  ::umask(old);
  if (rc != 0)
    throw rt::Error(fmt::format("remote attach: cannot listen on {}: {}", path.string(), std::strerror(bind_errno)));
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), 16) != 0)
    throw rt::Error(fmt::format("remote attach: listen on {}: {}", path.string(), std::strerror(errno)));
  return fd;
}

UniqueFd connect_unix(const std::filesystem::path& path) {
  const sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw rt::Error(fmt::format("remote attach: socket(): {}", std::strerror(errno)));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0)
    throw rt::Error(fmt::format("remote attach: cannot connect to {}: {} (is the process still running? "
                                "`rtorch ps` lists the live ones)", path.string(), std::strerror(errno)));
  return fd;
}

long peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  return long(cred.uid);
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void send_all(int fd, std::string_view bytes, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(size_t(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      throw rt::Error(fmt::format("remote attach: send failed: {}", std::strerror(errno)));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw rt::Error("remote attach: the peer does not read (send timed out)");
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, int(left.count()));
  }
}

}  // namespace rt::remote
