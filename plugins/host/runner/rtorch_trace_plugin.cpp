// rtorch-trace-plugin: runs one trace importer or exporter plugin for rtorch and the studio, in its own process
// (trace_child.h describes the command line and the protocol; rt/plugin_host/trace_plugins.h the host side).
#include "trace/trace_child.h"

int main(int argc, char** argv) { return rt::plugin::trace_plugin_child_main(argc, argv); }
