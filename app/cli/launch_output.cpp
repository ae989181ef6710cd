#include "launch_output.h"

#include <unistd.h>

#include <cerrno>

namespace rt::cli {
namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader is gone (mpirun tore the job down): drop the output
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void LineTail::add(std::string line) {
  if (capacity_ == 0) return;
  if (lines_.size() == capacity_) lines_.pop_front();
  lines_.push_back(std::move(line));
}

void TaggedStream::feed(const char* data, size_t n) {
  pending_.append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    emit(pending_.substr(start, nl - start), true);
  pending_.erase(0, start);
}

void TaggedStream::finish() {
  if (!pending_.empty()) emit(pending_, false);
  pending_.clear();
}

void TaggedStream::emit(const std::string& line, bool newline) {
  write_all(fd_, prefix_ + line + (newline || !prefix_.empty() ? "\n" : ""));
  tail_.add(line);
}

}  // namespace rt::cli
