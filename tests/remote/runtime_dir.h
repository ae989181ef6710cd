// A private runtime folder for one test (RT_RUNTIME_DIR, rt/remote/manifest.h): created 0700 by mkdtemp, the
// process's agent stopped and the folder removed at the end, so tests never see each other's agents.
//
//   TEST_CASE("...") { RuntimeDir dir; auto m = rt::remote::serve(); ... }   // m.socket is under dir.path
#pragma once
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "rt/remote/agent.h"

struct RuntimeDir {
  std::filesystem::path path;
  RuntimeDir() {
    std::string tmpl = "/tmp/rt-remote-test-XXXXXX";
    path = ::mkdtemp(tmpl.data());
    ::setenv("RT_RUNTIME_DIR", path.c_str(), 1);
  }
  ~RuntimeDir() {
    rt::remote::stop_serving(std::chrono::milliseconds(0));
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  RuntimeDir(const RuntimeDir&) = delete;
  RuntimeDir& operator=(const RuntimeDir&) = delete;
};
