// app/cli/command.h — the subcommands of `rtorch`, one class per file, listed in commands.cpp.
//
//   class InfoCommand final : public Command {
//    public:
//     std::string name() const override { return "info"; }
//     std::string summary() const override { return "Show versions, BLAS, threads and optional parts"; }
//     void configure(CLI::App& app) override { app.add_flag("--json", json_, "Print JSON"); }
//     int execute(const GlobalOptions& global) override { ...; return 0; }
//    private:
//     bool json_ = false;
//   };
//
// Contract: main.cpp creates every command once, calls configure() on its CLI11 subcommand before parsing,
// applies the global options (threads), then calls execute() on the one command the user named. execute()
// returns the process exit code; it reports its own errors on stderr ("rtorch <name>: what went wrong; fix").
// A command with nested actions (e.g. `trace export`) adds CLI11 subcommands to `app` in configure().
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rt::cli {

struct GlobalOptions {
  int threads = 0;  // 0: not given (library defaults / OMP_NUM_THREADS apply)
};

class Command {
 public:
  virtual ~Command() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual void configure(CLI::App& app) = 0;
  virtual int execute(const GlobalOptions& global) = 0;

  // Like python3's command line: after the first positional argument (a script) or after one of these
  // options and its value (`-c CODE`, `-m MODULE`), every further argument belongs to that target and is
  // handed to trailing_args() untouched, even `--help`. Empty: the command parses all its arguments.
  virtual bool takes_trailing_args() const { return false; }
  virtual std::vector<std::string> target_options() const { return {}; }
  virtual void set_trailing_args(std::vector<std::string> args) {}
};

// Every subcommand, in the order `rtorch --help` lists them.
std::vector<std::unique_ptr<Command>> make_commands();

std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_info_command();
std::unique_ptr<Command> make_bench_command();

}  // namespace rt::cli
