#include "command.h"

namespace rt::cli {

std::unique_ptr<Command> make_trace_command();        // trace_command.cpp
std::unique_ptr<Command> make_launch_command();       // launch_command.cpp
std::unique_ptr<Command> make_launch_rank_command();  // launch_rank_command.cpp
std::unique_ptr<Command> make_ps_command();           // ps_command.cpp
std::unique_ptr<Command> make_attach_command();       // attach_command.cpp
std::unique_ptr<Command> make_relay_command();        // relay_command.cpp
std::unique_ptr<Command> make_plugin_command();       // plugin_command.cpp

std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_run_command());
  commands.push_back(make_trace_command());
  commands.push_back(make_launch_command());
  commands.push_back(make_launch_rank_command());  // internal, hidden from --help
  commands.push_back(make_ps_command());
  commands.push_back(make_attach_command());
  commands.push_back(make_relay_command());
  commands.push_back(make_plugin_command());
  commands.push_back(make_bench_command());
  commands.push_back(make_info_command());
  return commands;
}

}  // namespace rt::cli
