// app/studio/notebook_view/ansi_text.h — terminal colour codes in tracebacks (IPython writes them) as HTML.
// (To remove them instead, use strip_ansi_escapes from notebook/outputs.h.)
//
//   std::string tb = "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero";
//   rt::studio::ansi_to_html(tb);  // "<span style=\"color:#c91b00\">ZeroDivisionError</span>: division by zero"
//
// Contracts:
// - SGR sequences (ESC [ ... m) set colour (30-37, 90-97, 38;5;N, 38;2;R;G;B, and the 4x/10x/48 backgrounds),
//   bold (1/22), italic (3/23), underline (4/24), and reset (0, 39, 49); every other escape sequence (cursor
//   moves, OSC titles, lone ESC) is dropped, never shown as garbage.
// - It escapes <, >, & and " and keeps newlines as they are (the caller shows it inside <pre>).
// - Input is UTF-8 and passes through unchanged apart from the escapes.
#pragma once
#include <string>
#include <string_view>

namespace rt::studio {

std::string ansi_to_html(std::string_view text);

}  // namespace rt::studio
