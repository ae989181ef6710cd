// app/studio/kernel/output_capture.h — fd 1 and fd 2 redirected into pipes, read by the kernel's output
// thread, so what C/C++ code writes reaches the kernel's listener. Internal to rt_kernel.
//
//   OutputCapture capture({.redirect = true, .echo = true}, [](Stream s, std::string_view text) { ... });
//   printf("hello\n");                       // -> sink(Stream::out, "hello\n") from the output thread
//   capture.write_in_order(Stream::err, t);  // Python's sys.stderr: C output written before it goes first
//   capture.flush();                         // everything written to fd 1/2 so far has reached the sink
//
// Contracts:
// - The sink is called with the capture's lock held, from the output thread or from the thread calling
//   flush()/write_in_order(); calls never overlap and keep the order in which text reached each pipe.
//   Order between the two pipes is the order in which the output thread found data in them.
// - C's stdout is made line-buffered (it would be fully buffered on a pipe); flush() also fflush()es both.
// - With echo, everything the sink gets is also written to the original fd 1/2 (write errors ignored).
// - Without redirect, nothing is redirected: write_in_order() still serialises and echoes.
// - The destructor delivers what is left, restores fd 1/2 and joins the output thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "python_kernel.h"

namespace rt::studio {

class OutputCapture {
 public:
  struct Options {
    bool redirect = true;
    bool echo = true;
  };
  using Sink = std::function<void(Stream, std::string_view)>;

  OutputCapture(Options options, Sink sink);  // throws std::runtime_error when pipes cannot be made
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  void flush();
  void write_in_order(Stream stream, std::string_view text);
  // The fd that reaches the terminal (or log) the process started with: the original fd 1/2.
  int original_fd(Stream stream) const { return stream == Stream::out ? original_[0] : original_[1]; }

 private:
  void read_loop();
  bool drain_locked(std::size_t limit);  // reads what the pipes hold now; false when both are closed
  void emit_locked(Stream stream, std::string_view text);

  Options options_;
  Sink sink_;
  std::mutex mu_;
  int original_[2] = {1, 2};  // dup()s of the original fd 1/2 when redirecting
  int read_end_[2] = {-1, -1};
  int wake_[2] = {-1, -1};  // self-pipe that ends read_loop
  std::string carry_[2];    // an unfinished UTF-8 sequence per stream, completed by the next read
  std::thread reader_;
};

}  // namespace rt::studio
