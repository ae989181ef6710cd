// Parsing and validation of safetensors headers, shared by the file and in-memory readers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "rt/io/safetensors.h"

namespace rt::io::detail {

std::string quoted(const std::string& s);  // 'name'

// Throws ValueError("safetensors: '<source>': <what>").
[[noreturn]] void fail(const std::string& source, const std::string& what);

// Checks the 8-byte length prefix against the total size (at least 8); returns N.
uint64_t header_length(const char* prefix, uint64_t total, const std::string& source);

// Parses and validates the N-byte JSON header against a data buffer of `data_size` bytes.
// Tensors come back sorted by offset. See the contracts in rt/io/safetensors.h.
SafetensorsHeader parse_header(std::string_view text, uint64_t data_size, const std::string& source);

}  // namespace rt::io::detail
