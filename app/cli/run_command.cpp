// `rtorch run SCRIPT.py [ARGS...]`, `rtorch run -c CODE [ARGS...]`, `rtorch run -m MODULE [ARGS...]`:
// python3's command line over the embedded interpreter (embedded_python.h).
// `--profile OUT.json` / `--store DB` (before the target) record the whole run (profiled_run.h).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/stat.h>

#include "command.h"
#include "embedded_python.h"
#include "profiled_run.h"
#include "rt/remote/agent.h"
#include "rt/remote/tcp.h"

namespace rt::cli {
namespace {

// python3 reports an unopenable script with exit status 2; so does rtorch, in its own words.
bool script_is_openable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;  // a directory with __main__.py
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    fmt::print(stderr, "rtorch run: cannot open '{}': {}\n", path, std::strerror(errno));
    return false;
  }
  std::fclose(f);
  return true;
}

bool attach_requested_by_environment() {
  const char* v = std::getenv("RT_ATTACH");
  return v && std::string(v) == "1";
}

class RunCommand final : public Command {
 public:
  std::string name() const override { return "run"; }
  std::string summary() const override {
    return "Run a Python script (or -c CODE, -m MODULE) with rustytorch importable, like python3";
  }

  void configure(CLI::App& app) override {
    code_option_ = app.add_option("-c", code_, "Program passed in as a string (as python3 -c)");
    module_option_ = app.add_option("-m", module_, "Run a library module as a script (as python3 -m)");
    script_option_ = app.add_option("script", script_, "Python script to run; arguments after it go to the script");
    app.add_option("--profile", profile_.trace_path,
                   "Profile the whole run and write a Chrome/Perfetto trace (.json or .json.gz)")
        ->type_name("OUT.json");
    app.add_option("--store", profile_.store_path, "Profile the whole run into this SQLite session store")
        ->type_name("DB.sqlite");
    app.add_flag("--record-shapes,!--no-record-shapes", profile_.record_shapes,
                 "Record input shapes when profiling (default: on)");
    app.add_flag("--profile-memory,!--no-profile-memory", profile_.profile_memory,
                 "Record allocations by category when profiling (default: on)");
    app.add_flag("--attach", attach_,
                 "Make the run attachable by the studio and `rtorch attach` (also: RT_ATTACH=1); see `rtorch ps`");
    app.add_option("--listen", listen_,
                   "With --attach (implied): also accept TCP connections there; off loopback clients need the token "
                   "in the connection file it writes (docs/remote-attach.md)")
        ->type_name("[ADDR:]PORT");
    app.add_option("--listen-auth", listen_auth_, "auto (tokens off loopback), token (always) or none (loopback only)")
        ->check(CLI::IsMember({"auto", "token", "none"}));
    app.footer(
        "Everything after SCRIPT (or after -c CODE / -m MODULE) is passed to the script as sys.argv[1:],\n"
        "including options such as --help or --threads: give rtorch's own options (--profile, --store...)\n"
        "before SCRIPT. Exit status: the script's, as with python3.");
  }

  bool takes_trailing_args() const override { return true; }
  std::vector<std::string> target_options() const override { return {"-c", "-m"}; }
  void set_trailing_args(std::vector<std::string> args) override { args_ = std::move(args); }

  int execute(const GlobalOptions&) override {
    PythonTarget target;
    if (code_option_->count() > 0) {
      target = {PythonTarget::Kind::command, code_, args_};
    } else if (module_option_->count() > 0) {
      target = {PythonTarget::Kind::module, module_, args_};
    } else if (script_option_->count() > 0) {
      if (!script_is_openable(script_)) return 2;
      target = {PythonTarget::Kind::script, script_, args_};
    } else {
      fmt::print(stderr,
                 "rtorch run: nothing to run; give a script (rtorch run train.py), -c CODE or -m MODULE "
                 "(see rtorch run --help)\n");
      return 2;
    }
    if (attach_ || !listen_.empty() || attach_requested_by_environment()) {
      try {
        rt::remote::AgentOptions options;
        options.listen = listen_;
        options.listen_auth = listen_auth_ == "token" ? rt::remote::TcpAuth::Token
                              : listen_auth_ == "none" ? rt::remote::TcpAuth::None
                                                       : rt::remote::TcpAuth::Auto;
        const rt::remote::AgentManifest m = rt::remote::serve(options);
        fmt::print(stderr, "rtorch run: attachable as job '{}' rank {} (rtorch attach {})\n", m.job, m.rank, m.job);
        if (!m.listen.empty()) {
          const auto file = rt::remote::connection_file_path(m);
          fmt::print(stderr, "rtorch run: listening on TCP {}{}\n", m.listen,
                     std::filesystem::exists(file) ? fmt::format(" (tokens in {})", file.string()) : " (no token: observe only)");
        }
        // This process serves; the processes it starts (DataLoader workers, subprocesses) do not.
        setenv("RT_ATTACH", fmt::format("served:{}", m.pid).c_str(), 1);
      } catch (const std::exception& e) {
        fmt::print(stderr, "rtorch run: cannot make the run attachable: {}\n", e.what());
        return 1;
      }
    }
    std::fflush(stdout);
    if (profile_.trace_path.empty() && profile_.store_path.empty()) return run_python_main(target);
    profile_.name = target.kind == PythonTarget::Kind::command ? "-c" : target.target;
    label_launched_rank(profile_);
    return run_profiled(profile_, [&] { return run_python_main(target); });
  }

 private:
  std::string code_, module_, script_;
  CLI::Option* code_option_ = nullptr;
  CLI::Option* module_option_ = nullptr;
  CLI::Option* script_option_ = nullptr;
  std::vector<std::string> args_;
  ProfileRequest profile_;
  bool attach_ = false;
  std::string listen_, listen_auth_ = "auto";
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace rt::cli
