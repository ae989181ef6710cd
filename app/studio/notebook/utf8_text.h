// app/studio/notebook/utf8_text.h — the UTF-8 text rules notebooks need: validity, repair, Python's splitlines.
//
//   rt::studio::is_valid_utf8("caf\xc3\xa9")                 // true
//   rt::studio::to_valid_utf8("bad \xff byte")               // "bad \uFFFD byte" (as UTF-8)
//   rt::studio::python_splitlines("a\nb\r\nc\rd")            // {"a\n", "b\r\n", "c\r", "d"}
//   rt::studio::floor_to_char_boundary("\xc3\xa9", 1)        // 0
//
// Contracts:
// - Validity is Python's strict UTF-8: no overlong forms, no surrogates (U+D800..DFFF), nothing past U+10FFFF.
// - to_valid_utf8 replaces each maximal invalid subsequence with U+FFFD, as Python's errors="replace" does.
// - python_splitlines == str.splitlines(keepends=True): splits after \n, \r\n, \r, \v, \f, \x1c, \x1d, \x1e,
//   U+0085, U+2028, U+2029; an empty string gives no lines; the last line has no terminator if the text does
//   not end with one. Joining the lines gives the text back.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rt::studio {

// Length of the valid UTF-8 sequence that starts at text[offset], or 0 if the bytes there are not valid UTF-8.
std::size_t utf8_sequence_length(std::string_view text, std::size_t offset);
bool is_valid_utf8(std::string_view text);
std::string to_valid_utf8(std::string_view text);
// The largest offset <= `offset` (clamped to the size) that does not fall inside a UTF-8 sequence.
std::size_t floor_to_char_boundary(std::string_view text, std::size_t offset);

std::vector<std::string> python_splitlines(std::string_view text);

}  // namespace rt::studio
