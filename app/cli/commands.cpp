#include "command.h"

namespace rt::cli {

std::unique_ptr<Command> make_trace_command();  // trace_command.cpp

std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_run_command());
  commands.push_back(make_trace_command());
  commands.push_back(make_bench_command());
  commands.push_back(make_info_command());
  return commands;
}

}  // namespace rt::cli
