// Engine exceptions -> the Python exceptions PyTorch raises in the same situation, message kept.
#include "bind.h"

namespace rtpy {

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rt::InterruptedError& e) {
      rt::clear_cancel();
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const rt::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const rt::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const rt::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const rt::Error& e) {  // ShapeError, DTypeError, DeviceError, AutogradError: RuntimeError in torch
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace rtpy
