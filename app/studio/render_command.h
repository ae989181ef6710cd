// app/studio/render_command.h — `rtorch-studio --render timeline|memory|scalars --session DB[:N] | --trace FILE
// --output PNG [--size WxH]`: draws one view of a profile into a PNG without showing a window, for reports and
// the README's pictures (viz_panels/render_view.h does the drawing).
//
//   xvfb-run -a build/bin/rtorch-studio --render memory --session runs.sqlite:2 --output memory.png
//
// Exit status: 0 when the PNG was written; 1 when there is no display to make an OpenGL context on, or the view
// could not be drawn; 2 for a bad size, a missing store, session or trace, or an unwritable output (the message
// names the file and the fix). `graph` is not drawable from a stored profile yet (stores keep no autograd
// graph): it exits 2 and points at the Graph panel.
#pragma once
#include "command_line.h"

namespace rt::studio {

int render_to_png(const StudioOptions& options, int argc, char** argv);

}  // namespace rt::studio
