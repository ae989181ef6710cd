// Reading plugin.json: every field checked, every error naming the file and the field (docs/plugins.md).
#include "rt/plugin_host/manifest.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace rt::plugin {
namespace {

using nlohmann::json;

constexpr size_t kMaxManifestBytes = 1 << 20;  // a manifest is a few hundred bytes; refuse anything absurd

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw ManifestError(fmt::format("{}: {}", file.string(), what));
}

std::string type_name(const json& v) { return v.type_name(); }

const json* field(const json& doc, const char* name) {
  auto it = doc.find(name);
  return it == doc.end() ? nullptr : &*it;
}

std::string required_string(const json& doc, const char* name, const std::filesystem::path& file) {
  const json* v = field(doc, name);
  if (!v) fail(file, fmt::format("\"{}\" is missing; every plugin.json names it (docs/plugins.md)", name));
  if (!v->is_string()) fail(file, fmt::format("\"{}\" must be a string (got {})", name, type_name(*v)));
  std::string s = v->get<std::string>();
  if (s.empty()) fail(file, fmt::format("\"{}\" must not be empty", name));
  return s;
}

std::string optional_string(const json& doc, const char* name, const std::filesystem::path& file) {
  const json* v = field(doc, name);
  if (!v) return {};
  if (!v->is_string()) fail(file, fmt::format("\"{}\" must be a string (got {})", name, type_name(*v)));
  return v->get<std::string>();
}

bool valid_id(const std::string& id) {
  // Reverse-DNS: at least two dot-separated labels of lowercase letters, digits and '-', starting with a letter.
  static const std::regex re("^[a-z][a-z0-9-]*(\\.[a-z0-9][a-z0-9-]*)+$");
  return id.size() <= 128 && std::regex_match(id, re);
}

bool safe_library_name(const std::string& lib) {
  // A file in the plugin's own folder: no separators, no "..", no hidden files.
  return !lib.empty() && lib.size() <= 255 && lib.find('/') == std::string::npos &&
         lib.find('\\') == std::string::npos && lib[0] != '.';
}

Kind parse_kind(const std::string& s, const std::filesystem::path& file) {
  if (s == "ops") return Kind::Ops;
  if (s == "panel") return Kind::Panel;
  if (s == "importer") return Kind::Importer;
  if (s == "exporter") return Kind::Exporter;
  fail(file, fmt::format("\"kinds\" has \"{}\"; the kinds are ops, panel, importer and exporter", s));
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Ops: return "ops";
    case Kind::Panel: return "panel";
    case Kind::Importer: return "importer";
    case Kind::Exporter: return "exporter";
  }
  return "?";
}

std::optional<Version> Version::parse(std::string_view text) {
  Version v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    if (p == end || *p < '0' || *p > '9') return std::nullopt;
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc() || *parts[i] < 0) return std::nullopt;
    p = next;
    if (i < 2) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
  }
  if (p != end) return std::nullopt;
  return v;
}

std::string Version::str() const { return fmt::format("{}.{}.{}", major, minor, patch); }

bool Dependency::accepts(const Version& v) const {
  if (requirement.empty() || requirement == "*") return true;
  if (requirement.rfind(">=", 0) == 0) {
    auto min = Version::parse(requirement.substr(2));
    return min && v >= *min;
  }
  auto exact = Version::parse(requirement);
  return exact && v == *exact;
}

bool Manifest::has_kind(Kind k) const {
  for (Kind x : kinds)
    if (x == k) return true;
  return false;
}

Manifest parse_manifest(std::string_view text, const std::filesystem::path& file) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(file, fmt::format("not valid JSON ({}); check the file with `python3 -m json.tool`", e.what()));
  }
  if (!doc.is_object()) fail(file, fmt::format("must hold a JSON object (got {})", type_name(doc)));

  Manifest m;
  m.file = file;
  m.id = required_string(doc, "id", file);
  if (!valid_id(m.id))
    fail(file, fmt::format("\"id\" must be reverse-DNS, lowercase, like \"org.example.my-plugin\" (got \"{}\")", m.id));
  m.name = required_string(doc, "name", file);
  std::string version = required_string(doc, "version", file);
  auto v = Version::parse(version);
  if (!v) fail(file, fmt::format("\"version\" must be MAJOR.MINOR.PATCH (got \"{}\")", version));
  m.version = *v;

  const json* kinds = field(doc, "kinds");
  if (!kinds || !kinds->is_array() || kinds->empty())
    fail(file, "\"kinds\" must be a non-empty list of ops, panel, importer, exporter");
  for (const json& k : *kinds) {
    if (!k.is_string()) fail(file, fmt::format("\"kinds\" holds a {}; list names like \"ops\"", type_name(k)));
    Kind kind = parse_kind(k.get<std::string>(), file);
    if (m.has_kind(kind)) fail(file, fmt::format("\"kinds\" lists \"{}\" twice", kind_name(kind)));
    m.kinds.push_back(kind);
  }

  bool needs_abi = m.has_kind(Kind::Ops) || m.has_kind(Kind::Importer) || m.has_kind(Kind::Exporter);
  std::string abi = optional_string(doc, "abi", file);
  if (needs_abi && abi.empty())
    fail(file, "\"abi\" is missing: ops, importer and exporter plugins name the plugin ABI they were built for, "
               "like \"1.0\"");
  if (!abi.empty()) {
    static const std::regex re("^([0-9]{1,4})\\.([0-9]{1,4})$");
    std::smatch match;
    if (!std::regex_match(abi, match, re)) fail(file, fmt::format("\"abi\" must be MAJOR.MINOR (got \"{}\")", abi));
    m.abi_major = std::stoi(match[1]);
    m.abi_minor = std::stoi(match[2]);
  }
  m.sdk_version = optional_string(doc, "sdk", file);
  if (m.has_kind(Kind::Panel) && m.sdk_version.empty())
    fail(file, "\"sdk\" is missing: a panel names the studio SDK version it was built against");

  m.library = required_string(doc, "library", file);
  if (!safe_library_name(m.library))
    fail(file, fmt::format("\"library\" must be a file name in the plugin's folder (got \"{}\")", m.library));

  if (const json* deps = field(doc, "dependencies")) {
    if (!deps->is_array()) fail(file, "\"dependencies\" must be a list of {\"id\": ..., \"version\": ...}");
    for (const json& d : *deps) {
      if (!d.is_object()) fail(file, "each of \"dependencies\" must be an object with \"id\" and \"version\"");
      Dependency dep;
      dep.id = required_string(d, "id", file);
      std::string requirement = optional_string(d, "version", file);
      dep.requirement = requirement.empty() ? std::string("*") : std::move(requirement);
      std::string_view req = dep.requirement;
      if (req.rfind(">=", 0) == 0) req.remove_prefix(2);
      if (dep.requirement != "*" && !Version::parse(req))
        fail(file, fmt::format("dependency \"{}\": \"version\" must be \"*\", \"X.Y.Z\" or \">=X.Y.Z\" (got \"{}\")",
                               dep.id, dep.requirement));
      if (dep.id == m.id) fail(file, fmt::format("\"{}\" depends on itself", m.id));
      m.dependencies.push_back(std::move(dep));
    }
  }

  if (const json* cuda = field(doc, "cuda")) {
    if (!cuda->is_object()) fail(file, "\"cuda\" must be an object: {\"major\": 12, \"architectures\": [90]}");
    const json* major = field(*cuda, "major");
    if (!major || !major->is_number_integer()) fail(file, "\"cuda\".\"major\" must be an integer like 12");
    m.cuda_major = major->get<int>();
    if (const json* archs = field(*cuda, "architectures")) {
      if (!archs->is_array()) fail(file, "\"cuda\".\"architectures\" must be a list of integers like [80, 90]");
      for (const json& a : *archs) {
        if (!a.is_number_integer()) fail(file, "\"cuda\".\"architectures\" must be a list of integers like [80, 90]");
        m.cuda_architectures.push_back(a.get<int>());
      }
    }
  }

  if (const json* formats = field(doc, "formats")) {
    if (!formats->is_array()) fail(file, "\"formats\" must be a list of {\"name\": ..., \"extensions\": [...]}");
    for (const json& f : *formats) {
      if (!f.is_object()) fail(file, "each of \"formats\" must be an object with \"name\" and \"extensions\"");
      FileFormat ff;
      ff.name = required_string(f, "name", file);
      if (const json* exts = field(f, "extensions")) {
        if (!exts->is_array()) fail(file, fmt::format("format \"{}\": \"extensions\" must be a list", ff.name));
        for (const json& e : *exts) {
          if (!e.is_string() || e.get<std::string>().empty() || e.get<std::string>()[0] != '.')
            fail(file, fmt::format("format \"{}\": extensions look like \".folded\"", ff.name));
          ff.extensions.push_back(e.get<std::string>());
        }
      }
      m.formats.push_back(std::move(ff));
    }
  }
  if ((m.has_kind(Kind::Importer) || m.has_kind(Kind::Exporter)) && m.formats.empty())
    fail(file, "\"formats\" is missing: an importer or exporter names the file formats it reads or writes");

  if (const json* e = field(doc, "enabled_by_default")) {
    if (!e->is_boolean()) fail(file, "\"enabled_by_default\" must be true or false");
    m.enabled_by_default = e->get<bool>();
  }
  m.description = optional_string(doc, "description", file);
  m.license = optional_string(doc, "license", file);
  return m;
}

Manifest read_manifest(const std::filesystem::path& plugin_json) {
  std::ifstream in(plugin_json, std::ios::binary);
  if (!in) fail(plugin_json, "cannot be read (does the file exist, and may this user read it?)");
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > kMaxManifestBytes) fail(plugin_json, "is larger than 1 MiB; a manifest is a few hundred bytes");
  }
  return parse_manifest(text, plugin_json);
}

}  // namespace rt::plugin
