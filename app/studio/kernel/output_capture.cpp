#include "output_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rt::studio {

namespace {

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal or log: echo is best effort
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Bytes at the end of `text` that start a UTF-8 sequence the text does not finish.
size_t incomplete_utf8_tail(std::string_view text) {
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead byte
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("kernel output capture: ") + what + " failed (" + std::strerror(errno) +
                           "); the studio cannot show C-level output of cells");
}

}  // namespace

OutputCapture::OutputCapture(Options options, Sink sink) : options_(options), sink_(std::move(sink)) {
  if (!options_.redirect) return;
  std::fflush(stdout);
  std::fflush(stderr);
  for (int i = 0; i < 2; ++i) {
    const int fd = i + 1;
    original_[i] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (original_[i] < 0) fail("dup of the original output");
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) fail("pipe");
    ::fcntl(p[0], F_SETFL, O_NONBLOCK);
    ::fcntl(p[1], F_SETPIPE_SZ, 1 << 20);  // fewer stalls of a chatty cell; the default stays if refused
    if (::dup2(p[1], fd) < 0) fail("dup2 onto the output fd");
    ::close(p[1]);
    read_end_[i] = p[0];
  }
  if (::pipe2(wake_, O_CLOEXEC) != 0) fail("pipe");
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  // The output thread never takes SIGINT: Note [Kernel interrupt] sends it to the interpreter thread.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  reader_ = std::thread([this] { read_loop(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

OutputCapture::~OutputCapture() {
  if (!options_.redirect) return;
  flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ::dup2(original_[0], 1);
    ::dup2(original_[1], 2);
  }
  const char stop = 1;
  (void)!::write(wake_[1], &stop, 1);
  if (reader_.joinable()) reader_.join();
  std::lock_guard<std::mutex> lock(mu_);
  drain_locked(size_t(-1));
  for (int fd : {read_end_[0], read_end_[1], wake_[0], wake_[1], original_[0], original_[1]})
    if (fd > 2) ::close(fd);
}

void OutputCapture::flush() {
  std::fflush(stdout);  // outside the lock: a full pipe waits for the output thread, which needs it
  std::fflush(stderr);
  if (!options_.redirect) return;
  std::lock_guard<std::mutex> lock(mu_);
  drain_locked(4u << 20);
}

void OutputCapture::write_in_order(Stream stream, std::string_view text) {
  if (options_.redirect) {
    std::fflush(stdout);
    std::fflush(stderr);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.redirect) drain_locked(4u << 20);
  emit_locked(stream, text);
}

void OutputCapture::read_loop() {
  pollfd fds[3] = {{read_end_[0], POLLIN, 0}, {read_end_[1], POLLIN, 0}, {wake_[0], POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, 3, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (fds[2].revents & POLLIN)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!drain_locked(4u << 20)) return;
  }
}

bool OutputCapture::drain_locked(size_t limit) {
  bool open = false;
  char buffer[65536];
  for (int i = 0; i < 2; ++i) {
    if (read_end_[i] < 0) continue;
    std::string chunk;
    size_t total = 0;
    for (;;) {
      const ssize_t n = ::read(read_end_[i], buffer, sizeof buffer);
      if (n > 0) {
        chunk.append(buffer, static_cast<size_t>(n));
        total += static_cast<size_t>(n);
        if (total >= limit) {
          open = true;
          break;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) open = true;
      break;  // n == 0: every write end is closed
    }
    if (!chunk.empty()) emit_locked(i == 0 ? Stream::out : Stream::err, chunk);
  }
  return open;
}

void OutputCapture::emit_locked(Stream stream, std::string_view text) {
  // Hold back a UTF-8 sequence split across reads so every chunk the sink gets is whole characters.
  std::string& carry = stream == Stream::out ? carry_[0] : carry_[1];
  std::string joined;
  if (!carry.empty()) {
    joined.reserve(carry.size() + text.size());
    joined.append(carry.data(), carry.size());
    joined.append(text.data(), text.size());
    carry.clear();
    text = joined;
  }
  const size_t tail = incomplete_utf8_tail(text);
  if (tail) {
    carry.assign(text.substr(text.size() - tail));
    text.remove_suffix(tail);
  }
  if (text.empty()) return;
  if (options_.echo) write_all(original_fd(stream), text);
  if (sink_) sink_(stream, text);
}

}  // namespace rt::studio
