// Whole-file reads for the data loaders, with transparent gzip decompression.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace rt::data::detail {

// The file's bytes; gzip data (by its magic bytes, whatever the extension) is decompressed.
// `who` prefixes error messages ("read_idx"). Open/read failures throw rt::Error; corrupt or
// truncated gzip data, or output over 1032x the compressed size (deflate's limit), ValueError.
std::string read_file_contents(const std::filesystem::path& path, const char* who);

// Decompresses a gzip stream (all members); `source` names it in errors.
std::string gunzip(std::string_view compressed, const std::string& source, const char* who);

}  // namespace rt::data::detail
