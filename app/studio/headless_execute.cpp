#include "headless_execute.h"

#include <ext/stdio_filebuf.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <ostream>

#include "runner/notebook_runner.h"

namespace rt::studio {

int execute_headless(const StudioOptions& options) {
  RunOptions run;
  run.allow_errors = options.allow_errors;
  run.timeout_seconds = options.timeout_seconds;
  const std::string output = options.execute_output.empty() ? options.execute_input : options.execute_output;
  // The kernel redirects fd 2 into its capture pipe while it runs, so progress goes to a duplicate of the
  // terminal's stderr taken before the kernel starts.
  const int log_fd = ::dup(STDERR_FILENO);
  __gnu_cxx::stdio_filebuf<char> log_buffer(log_fd >= 0 ? log_fd : STDERR_FILENO, std::ios::out, 1);
  std::ostream log(&log_buffer);
  log << std::unitbuf;
  try {
    return execute_notebook_file(options.execute_input, output, run, log);
  } catch (const std::exception& e) {
    log << "rtorch-studio --execute " << options.execute_input << ": " << e.what() << '\n';
    return kExecuteCellFailed;
  }
}

}  // namespace rt::studio
