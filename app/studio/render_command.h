// app/studio/render_command.h — `rtorch-studio --render timeline|memory|scalars|graph --session DB[:N] |
// --trace FILE --output PNG [--size WxH]`: draws one view of a profile into a PNG without showing a window, for
// reports and the README's pictures (viz_panels/render_view.h draws timeline, memory and scalars;
// debugger/graph_render.h the autograd graph the session kept — its latest backward's — annotated with the
// session's per-op time and memory).
//
//   xvfb-run -a build/bin/rtorch-studio --render memory --session runs.sqlite:2 --output memory.png
//   xvfb-run -a build/bin/rtorch-studio --render graph --session runs.sqlite --output graph.png --size 1800x1000
//
// Exit status: 0 when the PNG was written; 1 when there is no display to make an OpenGL context on, or the view
// could not be drawn (no OpenGL context, a graph Graphviz could not lay out); 2 for a bad size, a missing store,
// session or trace, a session without an autograd graph (no backward ran while it recorded, or a store older
// than schema 4), `graph` of a trace (traces keep no graph), or an unwritable output (the message names the
// file and the fix).
#pragma once
#include "command_line.h"

namespace rt::studio {

int render_to_png(const StudioOptions& options, int argc, char** argv);

}  // namespace rt::studio
