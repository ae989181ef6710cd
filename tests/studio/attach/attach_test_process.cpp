#include "attach_test_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace rt::studio::test {
namespace fs = std::filesystem;

PrivateRuntimeDir::PrivateRuntimeDir() {
  char tmpl[] = "/tmp/rt-studio-attach-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
  ::chmod(path.c_str(), 0700);
  ::setenv("RT_RUNTIME_DIR", path.c_str(), 1);
}

PrivateRuntimeDir::~PrivateRuntimeDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

AttachableProcess::AttachableProcess(const PrivateRuntimeDir& dir, const std::string& job, int rank, int world_size,
                                     int steps, double pause_s) {
  ready_file_ = dir.path / ("ready." + std::to_string(rank));
  log_file_ = dir.path / ("log." + std::to_string(rank) + ".txt");
  const std::string script = std::string(RT_SOURCE_DIR) + "/tests/studio/attach/attachable_training.py";
  // Everything the child needs is built here: between fork and exec it only opens, dups and execs (the test
  // process has threads, so the child must not allocate).
  const std::vector<std::pair<std::string, std::string>> overrides = {
      {"RT_RUNTIME_DIR", dir.path.string()}, {"RT_LAUNCH_JOB_ID", job},
      {"RANK", std::to_string(rank)},        {"WORLD_SIZE", std::to_string(world_size)},
      {"RT_TEST_READY_FILE", ready_file_.string()}, {"RT_TEST_STEPS", std::to_string(steps)},
      {"RT_TEST_PAUSE_S", std::to_string(pause_s)}, {"OMP_NUM_THREADS", "1"}};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : overrides) replaced |= k == key;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = "rtorch", arg1 = "run", arg2 = "--attach", arg3 = script;
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), arg3.data(), nullptr};
  const int log = ::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
    }
    ::execve(RT_RTORCH_EXECUTABLE, argv, envp.data());
    ::_exit(127);
  }
  if (log >= 0) ::close(log);
}

AttachableProcess::~AttachableProcess() { kill(); }

bool AttachableProcess::running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

bool AttachableProcess::wait_ready(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(ready_file_)) return true;
    if (!running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fs::exists(ready_file_);
}

void AttachableProcess::kill() {
  if (reaped_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
}

std::string AttachableProcess::log() const {
  std::ifstream in(log_file_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rt::studio::test
