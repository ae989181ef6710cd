#include "rt/remote/tcp.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/token_auth.h"
#include "rt/error.h"

namespace rt::remote {

const char* scope_name(AccessScope scope) { return scope == AccessScope::Control ? "control" : "observe"; }

AccessScope parse_scope(const std::string& name) {
  if (name == "observe") return AccessScope::Observe;
  if (name == "control") return AccessScope::Control;
  throw rt::ValueError(fmt::format("unknown access scope '{}': use observe or control", name));
}

TcpToken ConnectionFile::token(AccessScope scope) const {
  const std::string& hex = scope == AccessScope::Control ? control_token : observe_token;
  if (hex.empty())
    throw rt::ValueError(fmt::format("the connection file of job '{}' rank {} holds no {} token", job, rank,
                                     scope_name(scope)));
  return {scope, hex};
}

std::filesystem::path connection_file_path(const AgentManifest& manifest) {
  return std::filesystem::path(manifest.socket).replace_extension(".connection");
}

ConnectionFile read_connection_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw rt::Error(fmt::format("remote attach: cannot read the connection file {}", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw rt::ValueError(fmt::format("{} is not a connection file (not a JSON object)", path.string()));
  ConnectionFile f;
  auto text_field = [&](const char* name, bool required) -> std::string {
    if (!j.contains(name)) {
      if (required) throw rt::ValueError(fmt::format("{}: missing field '{}'", path.string(), name));
      return "";
    }
    if (!j[name].is_string()) throw rt::ValueError(fmt::format("{}: field '{}' is not a string", path.string(), name));
    return j[name].get<std::string>();
  };
  f.job = text_field("job", true);
  f.host = text_field("host", false);
  f.listen = text_field("listen", true);
  f.rank = j.value("rank", 0);
  f.pid = j.value("pid", 0);
  f.observe_token = text_field("observe_token", false);
  f.control_token = text_field("control_token", false);
  for (const std::string* t : {&f.observe_token, &f.control_token}) {
    if (t->empty()) continue;
    const auto bytes = from_hex(*t);
    if (!bytes || bytes->size() != kTokenBytes)
      throw rt::ValueError(fmt::format("{}: a token must be {} hex digits", path.string(), 2 * kTokenBytes));
  }
  if (f.observe_token.empty() && f.control_token.empty())
    throw rt::ValueError(fmt::format("{}: holds neither an observe_token nor a control_token", path.string()));
  return f;
}

}  // namespace rt::remote
