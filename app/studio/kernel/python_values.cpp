#include "python_values.h"

#include <sstream>

namespace rt::studio::pyvalue {

std::string utf8(PyObject* text) {
  if (!text || !PyUnicode_Check(text)) return {};
  Py_ssize_t size = 0;
  if (const char* data = PyUnicode_AsUTF8AndSize(text, &size)) return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();  // lone surrogates: replace them
  Ref bytes(PyUnicode_AsEncodedString(text, "utf-8", "replace"));
  if (!bytes) {
    PyErr_Clear();
    return {};
  }
  return std::string(PyBytes_AS_STRING(bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.get())));
}

std::string str(PyObject* object) {
  if (!object) return {};
  Ref text(PyObject_Str(object));
  if (!text) {
    PyErr_Clear();
    return {};
  }
  return utf8(text.get());
}

DisplayData display_data(PyObject* data, PyObject* metadata_json) {
  DisplayData out;
  if (data && PyDict_Check(data)) {
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(data, &pos, &key, &value))
      out.data[str(key)] = PyUnicode_Check(value) ? utf8(value) : str(value);
  }
  if (metadata_json && PyUnicode_Check(metadata_json)) out.metadata_json = utf8(metadata_json);
  if (out.metadata_json.empty()) out.metadata_json = "{}";
  if (!out.data.count("text/plain")) out.data["text/plain"] = "";
  return out;
}

ExecutionError error(PyObject* triple) {
  ExecutionError out;
  if (!triple || !PyTuple_Check(triple) || PyTuple_GET_SIZE(triple) != 3) {
    out.ename = "KernelError";
    out.evalue = "the cell runner returned a malformed error";
    out.traceback = {out.ename + ": " + out.evalue};
    return out;
  }
  out.ename = str(PyTuple_GET_ITEM(triple, 0));
  out.evalue = str(PyTuple_GET_ITEM(triple, 1));
  PyObject* lines = PyTuple_GET_ITEM(triple, 2);
  if (PyList_Check(lines))
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); ++i) out.traceback.push_back(str(PyList_GET_ITEM(lines, i)));
  return out;
}

ExecutionError take_exception(const char* context) {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  ExecutionError out;
  out.ename = "KernelError";
  if (type) {
    Ref name(PyObject_GetAttrString(type, "__name__"));
    if (name) out.ename = str(name.get());
    PyErr_Clear();
  }
  out.evalue = str(value);
  Ref format(PyImport_ImportModule("traceback"));
  if (format) {
    Ref lines(PyObject_CallMethod(format.get(), "format_exception", "OOO", type ? type : Py_None,
                                  value ? value : Py_None, trace ? trace : Py_None));
    if (lines && PyList_Check(lines.get())) {
      std::string joined;
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines.get()); ++i) joined += str(PyList_GET_ITEM(lines.get(), i));
      std::istringstream split(joined);
      for (std::string line; std::getline(split, line);) out.traceback.push_back(line);
    }
  }
  PyErr_Clear();
  if (out.traceback.empty()) out.traceback.push_back(out.ename + ": " + out.evalue);
  out.traceback.insert(out.traceback.begin(), std::string("(while the kernel ") + context + ")");
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  return out;
}

}  // namespace rt::studio::pyvalue
