// app/studio/headless_execute.h — `rtorch-studio --execute IN.ipynb [--output OUT.ipynb] [--allow-errors]
// [--timeout S]`: runs every code cell of a notebook without a window or a display, like
// `jupyter nbconvert --execute`, through the runner (runner/notebook_runner.h).
//
//   return execute_headless(options);   // from main(), before any QApplication exists
//
// Exit status (runner's ExecuteExitStatus): 0 when every cell ran (or errors were allowed), 1 when a cell raised
// or timed out or the kernel could not start, 2 when the notebook could not be read or the output not written (the
// message on stderr names the file, the cell and the fix) and for usage errors (command_line.h). The executed
// notebook is written also when a cell failed. Progress goes to stderr, one line per cell.
#pragma once
#include "command_line.h"

namespace rt::studio {

int execute_headless(const StudioOptions& options);

}  // namespace rt::studio
