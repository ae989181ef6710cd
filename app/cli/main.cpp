// rtorch — the RustyTorch++ command line: `rtorch [--threads N] COMMAND [ARGS...]`.
// Commands are listed in commands.cpp; each lives in its own *_command.cpp.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>

#include "command.h"
#include "thread_settings.h"
#include "trailing_args.h"

namespace {

// CLI11 exits with 1xx codes; like argparse (and python3), a usage error exits with 2.
constexpr int kUsageError = 2;

std::string usage_failure(const CLI::App* app, const CLI::Error& e) {
  const std::vector<std::string> rest = app->remaining();
  if (app->get_subcommands().empty() && !rest.empty() && !rest.front().starts_with("-")) {
    std::string names;
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
      names.append(names.empty() ? "" : ", ").append(sub->get_name());
    return fmt::format("rtorch: unknown command '{}' (commands: {})\nRun 'rtorch --help' for usage.\n", rest.front(),
                       names);
  }
  std::string where = "rtorch";
  for (const CLI::App* sub : app->get_subcommands()) where.append(" ").append(sub->get_name());
  return fmt::format("{}: {}\nRun '{} --help' for usage.\n", where, e.what(), where);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rt::cli;
  CLI::App app{"rtorch — RustyTorch++ on the command line: run Python scripts, benchmark, inspect the build.",
               "rtorch"};
  app.set_version_flag("--version", std::string("rtorch ") + RT_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  app.failure_message(usage_failure);

  GlobalOptions global;
  app.add_option("--threads", global.threads,
                 "CPU threads for the engine, OpenMP and OpenBLAS (default: OMP_NUM_THREADS or all cores)")
      ->check(thread_count_validator())
      ->type_name("N");

  auto commands = make_commands();
  for (auto& command : commands) command->configure(*app.add_subcommand(command->name(), command->summary()));

  std::vector<std::string> args(argv + 1, argv + argc);
  ArgumentSplit split = split_trailing_args(app, commands, args);
  try {
    std::vector<std::string> reversed(split.parsed.rbegin(), split.parsed.rend());
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }
  if (split.command) split.command->set_trailing_args(std::move(split.trailing));

  if (global.threads > 0) apply_thread_count(global.threads);
  for (auto& command : commands) {
    if (app.got_subcommand(command->name())) {
      try {
        return command->execute(global);
      } catch (const std::exception& e) {
        fmt::print(stderr, "rtorch {}: {}\n", command->name(), e.what());
        return 1;
      }
    }
  }
  return kUsageError;
}
