#include "trailing_args.h"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace rt::cli {
namespace {

bool is_option(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

std::string option_name(const std::string& a) { return a.substr(0, a.find('=')); }

// True when `a` is an option of one of `apps` that consumes the next argument as its value.
bool consumes_next(const std::string& a, std::initializer_list<const CLI::App*> apps) {
  if (a.find('=') != std::string::npos) return false;
  for (const CLI::App* app : apps) {
    if (!app) continue;
    if (const CLI::Option* opt = app->get_option_no_throw(a)) return opt->get_items_expected_min() > 0;
  }
  return false;
}

}  // namespace

ArgumentSplit split_trailing_args(CLI::App& app, const std::vector<std::unique_ptr<Command>>& commands,
                                  const std::vector<std::string>& args) {
  ArgumentSplit split{args, {}, nullptr};
  size_t i = 0;
  Command* command = nullptr;
  const CLI::App* sub = nullptr;
  for (; i < args.size() && !command; ++i) {
    const std::string& a = args[i];
    if (a == "--") return split;
    if (is_option(a)) {
      if (consumes_next(a, {&app})) ++i;
      continue;
    }
    auto it = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c->name() == a; });
    if (it == commands.end() || !(*it)->takes_trailing_args()) return split;
    command = it->get();
    sub = app.get_subcommand(a);  // every command is registered as a subcommand
  }
  if (!command) return split;

  const std::vector<std::string> targets = command->target_options();
  size_t cut = args.size();
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      cut = std::min(i + 2, args.size());
      break;
    }
    if (!is_option(a)) {
      cut = i + 1;
      break;
    }
    const std::string name = option_name(a);
    const bool attached_short = a[1] != '-' && a.size() > 2;  // -cCODE
    if (std::find(targets.begin(), targets.end(), attached_short ? a.substr(0, 2) : name) != targets.end()) {
      cut = (attached_short || name != a) ? i + 1 : std::min(i + 2, args.size());
      break;
    }
    if (consumes_next(a, {sub, &app})) ++i;
  }
  split.parsed.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(cut));
  split.trailing.assign(args.begin() + static_cast<std::ptrdiff_t>(cut), args.end());
  split.command = command;
  return split;
}

}  // namespace rt::cli
