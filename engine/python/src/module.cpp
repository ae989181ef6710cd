#include <pybind11/pybind11.h>
PYBIND11_MODULE(_C, m) { m.doc() = "RustyTorch++ engine bindings"; }
