// app/cli/trailing_args.h — separates the arguments a run target owns from those rtorch parses.
//
//   // rtorch --threads 2 run -m pytest -x --help
//   auto split = split_trailing_args(app, commands, {"--threads", "2", "run", "-m", "pytest", "-x", "--help"});
//   // split.parsed   == {"--threads", "2", "run", "-m", "pytest"}   (given to CLI11)
//   // split.trailing == {"-x", "--help"}                            (given to the run command)
//   // split.command  == the run Command
//
// Only a command whose takes_trailing_args() is true has trailing arguments; the cut is made after its
// first positional argument, after `-- TARGET`, or after one of its target_options() with its value.
// Options are recognised through CLI11 (an option of `app` or of the subcommand that takes a value skips
// that value); unknown options stay in `parsed` so that CLI11 reports them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "command.h"

namespace rt::cli {

struct ArgumentSplit {
  std::vector<std::string> parsed;
  std::vector<std::string> trailing;
  Command* command = nullptr;  // the command that owns `trailing`; null when none does
};

ArgumentSplit split_trailing_args(CLI::App& app, const std::vector<std::unique_ptr<Command>>& commands,
                                  const std::vector<std::string>& args);

}  // namespace rt::cli
