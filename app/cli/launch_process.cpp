#include "launch_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace rt::cli {
namespace {

volatile sig_atomic_t g_forward_target = 0;
volatile sig_atomic_t g_forwarded = 0;
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

void forward_signal(int sig) {
  g_forwarded = sig;
  if (g_forward_target > 0) kill(static_cast<pid_t>(g_forward_target), sig);
}

ExitStatus decode(int raw) {
  if (WIFSIGNALED(raw)) return {true, WTERMSIG(raw)};
  return {false, WEXITSTATUS(raw)};
}

}  // namespace

pid_t spawn_child(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::invalid_argument("spawn_child: empty argv");
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The child writes errno to this close-on-exec pipe when exec fails; EOF means exec succeeded.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(report[0]);
    close(report[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(report[0]);
    if (spec.parent_death_signal != 0) {
      prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
      if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    }
    for (int fd : spec.close_in_child) close(fd);
    if (spec.stdout_fd >= 0) dup2(spec.stdout_fd, STDOUT_FILENO);
    if (spec.stderr_fd >= 0) dup2(spec.stderr_fd, STDERR_FILENO);
    if (spec.stdout_fd > STDERR_FILENO) close(spec.stdout_fd);
    if (spec.stderr_fd > STDERR_FILENO && spec.stderr_fd != spec.stdout_fd) close(spec.stderr_fd);
    for (int sig : kForwardedSignals) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(argv[0], argv.data());
    const int err = errno;
    (void)!write(report[1], &err, sizeof err);
    _exit(127);
  }
  close(report[1]);
  int err = 0;
  ssize_t n;
  do {
    n = read(report[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot run " + spec.argv[0] + ": " + std::strerror(err));
  }
  return pid;
}

ExitStatus wait_child(pid_t pid) {
  int raw = 0;
  while (waitpid(pid, &raw, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  return decode(raw);
}

bool try_wait_child(pid_t pid, ExitStatus& status) {
  int raw = 0;
  pid_t r;
  do {
    r = waitpid(pid, &raw, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r < 0) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  if (r == 0) return false;
  status = decode(raw);
  return true;
}

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

SignalForwarding::SignalForwarding(pid_t target) {
  g_forward_target = target;
  g_forwarded = 0;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kForwardedSignals) sigaction(sig, &sa, nullptr);
}

SignalForwarding::~SignalForwarding() {
  for (int sig : kForwardedSignals) signal(sig, SIG_DFL);
  g_forward_target = 0;
}

int SignalForwarding::received() const { return g_forwarded; }

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view piece = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    const std::string dir = piece.empty() ? std::string(".") : std::string(piece);
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace rt::cli
