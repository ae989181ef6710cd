// app/cli/launch_output.h — a rank's output as `rtorch launch` shows it: each line tagged with the rank
// (like mpirun --tag-output) and the last lines kept for the failure summary.
//
//   LineTail tail(20);
//   TaggedStream out("[rank 1]: ", STDOUT_FILENO, tail);
//   out.feed(buf, n);   // writes every complete line as "[rank 1]: <line>\n", adds it to the tail
//   out.finish();       // writes a last line that has no newline
//
// Lines are written with one write() each, so lines from different ranks do not interleave mid-line.
// An empty prefix writes the output unchanged (it is still split into lines for the tail).
#pragma once
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace rt::cli {

class LineTail {
 public:
  explicit LineTail(size_t capacity) : capacity_(capacity) {}
  void add(std::string line);
  std::vector<std::string> lines() const { return {lines_.begin(), lines_.end()}; }

 private:
  size_t capacity_;
  std::deque<std::string> lines_;
};

class TaggedStream {
 public:
  TaggedStream(std::string prefix, int fd, LineTail& tail) : prefix_(std::move(prefix)), fd_(fd), tail_(tail) {}
  void feed(const char* data, size_t n);
  void finish();

 private:
  void emit(const std::string& line, bool newline);
  std::string prefix_;
  int fd_;
  LineTail& tail_;
  std::string pending_;
};

}  // namespace rt::cli
