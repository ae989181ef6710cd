// rt/plugin_host/manifest.h — a plugin's plugin.json, read and checked without loading any code.
//
//   rt::plugin::Manifest m = rt::plugin::read_manifest("plugins/folded-stacks/plugin.json");
//   m.id;              // "org.rustytorch.folded-stacks"
//   m.library_path();  // ".../plugins/folded-stacks/libfolded_stacks.so"
//   m.has_kind(rt::plugin::Kind::Importer);
//
// Every problem is an rt::plugin::ManifestError that names the file and the field, with what was expected:
//   "plugins/x/plugin.json: "version" must be MAJOR.MINOR.PATCH (got "1.x")"
// The schema, field by field, is docs/plugins.md's "plugin.json".
#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rt::plugin {

class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Kind { Ops, Panel, Importer, Exporter };
const char* kind_name(Kind k);  // "ops", "panel", "importer", "exporter"

// MAJOR.MINOR.PATCH; compares numerically.
struct Version {
  int major = 0, minor = 0, patch = 0;
  static std::optional<Version> parse(std::string_view text);
  std::string str() const;
  auto operator<=>(const Version&) const = default;
};

// A dependency: another plugin's id and the versions accepted, ">=1.2.0" or "1.2.0" (exactly) or "*".
struct Dependency {
  std::string id;
  std::string requirement = "*";
  bool accepts(const Version& v) const;
};

struct FileFormat {
  std::string name;                     // "folded-stacks"
  std::vector<std::string> extensions;  // ".folded"
};

struct Manifest {
  std::filesystem::path file;  // the plugin.json read
  std::string id;              // reverse-DNS: "org.rustytorch.fused-bias-gelu"
  std::string name;            // "Fused bias + GELU"
  Version version;
  std::vector<Kind> kinds;
  int abi_major = 0, abi_minor = 0;  // "abi": "1.0" (ops, importer, exporter)
  std::string sdk_version;           // "sdk": the studio panel SDK version (panels; exact match)
  std::string library;               // file name, relative to the manifest's folder
  std::vector<Dependency> dependencies;
  std::optional<int> cuda_major;       // "cuda": {"major": 12, "architectures": [90]}
  std::vector<int> cuda_architectures;
  std::vector<FileFormat> formats;
  bool enabled_by_default = true;
  std::string description;
  std::string license;

  std::filesystem::path folder() const { return file.parent_path(); }
  std::filesystem::path library_path() const { return folder() / library; }
  bool has_kind(Kind k) const;
};

Manifest read_manifest(const std::filesystem::path& plugin_json);   // throws ManifestError
Manifest parse_manifest(std::string_view json_text, const std::filesystem::path& file_for_messages);

}  // namespace rt::plugin
