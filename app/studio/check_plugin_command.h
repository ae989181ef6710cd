// app/studio/check_plugin_command.h — `rtorch-studio --check-plugin DIR`: a panel plugin's checks, the part of
// `rtorch plugin check` that needs the studio's Dear ImGui and an OpenGL context.
//
//   xvfb-run -a build/bin/rtorch-studio --check-plugin plugins/grad-histogram
//     ok    manifest      org.rustytorch.grad-histogram 1.0.0 (panel)
//     ok    load          ABI 1.0, panel SDK 1.0, Dear ImGui 18600
//     ok    initialize
//     ok    draw          120 frames without a session: median 0.21 ms, slowest 0.9 ms (budget 8 ms)
//     ok    draw session  120 frames of a recorded training (3 steps, 12 histograms): median ...
//
// Exit status 0 when every check passed, 1 when one failed (the line says why), 2 for bad usage.
// An exception from the panel's draw() is a failed check; a crash is left to the caller (`rtorch plugin check`
// runs this in a child).
#pragma once
#include "command_line.h"

namespace rt::studio {

int check_panel_plugin(const StudioOptions& options, int argc, char** argv);

}  // namespace rt::studio
