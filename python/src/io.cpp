// safetensors files: the engine reader/writer behind rt.save / rt.load.
#include "bind.h"
#include "rt/io/safetensors.h"

namespace rtpy {

void bind_io(py::module_& m) {
  m.def(
      "_save_safetensors",
      [](const std::string& path, py::dict tensors, py::handle metadata) {
        rt::io::NamedTensorList list;
        for (auto [k, v] : tensors) {
          if (!is_tensor(v))
            throw py::type_error("_save_safetensors: value for key '" + py::str(k).cast<std::string>() +
                                 "' is not a Tensor");
          list.emplace_back(py::str(k).cast<std::string>(), unwrap(v).detach());
        }
        rt::io::Metadata meta;
        if (!metadata.is_none())
          for (auto [k, v] : py::reinterpret_borrow<py::dict>(metadata))
            meta[py::str(k).cast<std::string>()] = py::str(v).cast<std::string>();
        run_long([&] { rt::io::save_safetensors(path, list, meta); });
      },
      py::arg("path"), py::arg("tensors"), py::arg("metadata") = py::none());
  m.def(
      "_load_safetensors",
      [](const std::string& path) {
        rt::io::SafetensorsContents c = run_long([&] { return rt::io::load_safetensors(path); });
        py::dict tensors, meta;
        for (auto& [name, t] : c.tensors) tensors[py::str(name)] = wrap(t);
        for (auto& [k, v] : c.metadata) meta[py::str(k)] = py::str(v);
        return py::make_tuple(tensors, meta);
      },
      py::arg("path"));
}

}  // namespace rtpy
