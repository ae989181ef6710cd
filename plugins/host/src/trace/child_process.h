// child_process.h — one run of a helper program, fed on stdin, read from a record channel, with a deadline.
//
//   ChildProcess child(runner, {"import", plugin_folder, file});
//   ChildExit exit = child.run(/*input=*/"", [&](std::string_view bytes) { reader.feed(bytes); return true; },
//                              std::chrono::steady_clock::now() + std::chrono::seconds(60));
//   if (!exit.clean()) throw Error(exit.describe());   // "crashed (SIGSEGV)", "ran past its 60 s timeout"
//
// The child is started with posix_spawn (a fork and exec: safe in a process with threads), in its own process
// group, with stdin a socket the parent writes `input` into (closed after it; a child that stops reading never
// raises SIGPIPE here), fd 3 (wire::kRecordFd) the write end of the record channel, and stdout and stderr one
// pipe whose last 4 KiB are kept as ChildExit::output. Every other descriptor of the parent is close-on-exec.
// run() returns when the child has exited and the channel is drained, when on_records returns false, or at the
// deadline; in the last two cases the child's process group is killed (SIGKILL) first. It is always reaped.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rt::plugin {

struct ChildExit {
  bool exited = false;       // exited by itself, with exit_code
  int exit_code = 0;
  int signal = 0;            // killed by this signal (0: none)
  bool timed_out = false;    // ran past the deadline; killed
  bool stopped = false;      // on_records asked to stop; killed
  std::string output;        // the last 4 KiB of its stdout and stderr
  bool clean() const { return exited && exit_code == 0 && !timed_out && !stopped; }
  // "crashed (SIGSEGV)", "exited with status 3", "was killed (SIGKILL)", "ran past its 10 s timeout".
  std::string describe(std::chrono::milliseconds timeout) const;
};

class ChildProcess {
 public:
  // Throws std::runtime_error when the program cannot be started.
  ChildProcess(const std::filesystem::path& program, const std::vector<std::string>& args);
  ~ChildProcess();  // kills and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  ChildExit run(std::string_view input, const std::function<bool(std::string_view)>& on_records,
                std::chrono::steady_clock::time_point deadline);
  pid_t pid() const { return pid_; }

 private:
  void kill_group();
  pid_t pid_ = -1;
  bool reaped_ = false;
  int input_fd_ = -1, records_fd_ = -1, output_fd_ = -1;
};

}  // namespace rt::plugin
