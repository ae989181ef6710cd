// app/studio/kernel/embedded_python_sources.h — the kernel's Python modules (app/studio/kernel/python/*.py),
// compiled into rt_kernel by embed_python_sources.cmake so the studio needs no extra files to run cells.
#pragma once

namespace rt::studio {

struct EmbeddedPythonModule {
  const char* module;     // name in sys.modules, e.g. "_rtstudio_cell_runner"
  const char* file_name;  // __file__ and the code's file name, e.g. "<rtstudio cell_runner.py>"
  const char* source;
};

extern const EmbeddedPythonModule kCellRunnerModule;          // python/cell_runner.py
extern const EmbeddedPythonModule kNamespaceInspectorModule;  // python/namespace_inspector.py

}  // namespace rt::studio
