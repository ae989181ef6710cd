// tests/studio/attach/attach_test_process.h — real attachable processes for the studio's attach tests:
// `rtorch run --attach attachable_training.py` in a private runtime folder (RT_RUNTIME_DIR, 0700), as one
// rank of a job whose id the test chooses.
//
//   PrivateRuntimeDir dir;                                  // sets RT_RUNTIME_DIR for this process and children
//   AttachableProcess p(dir, "studio-test-job", 0, 1);      // starts it; ~AttachableProcess kills it
//   REQUIRE(p.wait_ready(60000));                           // its profile records: attach now
//   p.kill();                                               // SIGKILL, reaped
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace rt::studio::test {

struct PrivateRuntimeDir {
  std::filesystem::path path;
  PrivateRuntimeDir();
  ~PrivateRuntimeDir();
  PrivateRuntimeDir(const PrivateRuntimeDir&) = delete;
  PrivateRuntimeDir& operator=(const PrivateRuntimeDir&) = delete;
};

class AttachableProcess {
 public:
  // steps = 0: trains until killed; pause_s: the rest after each step.
  AttachableProcess(const PrivateRuntimeDir& dir, const std::string& job, int rank, int world_size, int steps = 0,
                    double pause_s = 0.01);
  ~AttachableProcess();
  AttachableProcess(const AttachableProcess&) = delete;
  AttachableProcess& operator=(const AttachableProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Whether the script's profile records (it touched its ready file), waiting up to timeout_ms; false when the
  // process exited first (its stderr is in log()).
  bool wait_ready(int timeout_ms);
  bool running();
  void kill();
  std::string log() const;  // what it printed so far

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::filesystem::path ready_file_;
  std::filesystem::path log_file_;
};

}  // namespace rt::studio::test
