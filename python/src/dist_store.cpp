// rustytorch._C._dist's stores: Store and its HashStore, FileStore, TCPStore, PrefixStore with
// torch.distributed's Python signatures. Values go in as str or bytes and come out as bytes; every
// call that can block (connecting, get, wait, and the rest, which wait on a socket or a file lock)
// releases the GIL. Stores are held by std::shared_ptr, so a PrefixStore keeps its base alive.
#include <pybind11/chrono.h>

#include "bind.h"
#include "rt/dist/store.h"

namespace rtpy {

namespace {

using rt::dist::Bytes;
using rt::dist::Milliseconds;
using rt::dist::Store;

Bytes to_bytes(const py::handle& value, const char* what) {
  if (py::isinstance<py::bytes>(value) || py::isinstance<py::bytearray>(value) || py::isinstance<py::str>(value)) {
    std::string s = py::isinstance<py::bytearray>(value) ? std::string(py::bytearray(py::reinterpret_borrow<py::object>(value)))
                                                         : value.cast<std::string>();
    return Bytes(s.begin(), s.end());
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       std::string(py::str(value.get_type().attr("__name__"))));
}

py::bytes to_py(const Bytes& b) { return py::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

uint16_t checked_port(int port) {
  if (port < 0 || port > 65535)
    throw py::value_error("TCPStore: port " + std::to_string(port) + " is outside 0..65535 (0: the master picks a free port)");
  return uint16_t(port);
}

}  // namespace

void bind_dist_store(py::module_& dist) {
  using release = py::call_guard<py::gil_scoped_release>;

  py::class_<Store, std::shared_ptr<Store>>(dist, "Store",
                                            "A key-value store shared by the ranks of a job (torch.distributed.Store).")
      .def("set",
           [](Store& s, const std::string& key, const py::object& value) {
             Bytes v = to_bytes(value, "value");
             py::gil_scoped_release r;
             s.set(key, v);
           },
           py::arg("key"), py::arg("value"))
      .def("get",
           [](Store& s, const std::string& key) {
             Bytes v;
             {
               py::gil_scoped_release r;
               v = s.get(key);
             }
             return to_py(v);
           },
           py::arg("key"))
      .def("add", &Store::add, release(), py::arg("key"), py::arg("value"))
      .def("compare_set",
           [](Store& s, const std::string& key, const py::object& expected, const py::object& desired) {
             Bytes e = to_bytes(expected, "expected_value"), d = to_bytes(desired, "desired_value"), out;
             {
               py::gil_scoped_release r;
               out = s.compare_set(key, e, d);
             }
             return to_py(out);
           },
           py::arg("key"), py::arg("expected_value"), py::arg("desired_value"))
      .def("check", &Store::check, release(), py::arg("keys"))
      .def("wait", [](Store& s, const std::vector<std::string>& keys) { s.wait(keys); }, release(), py::arg("keys"))
      .def("wait", [](Store& s, const std::vector<std::string>& keys, Milliseconds timeout) { s.wait(keys, timeout); },
           release(), py::arg("keys"), py::arg("timeout"))
      .def("delete_key", &Store::delete_key, release(), py::arg("key"))
      .def("num_keys", &Store::num_keys, release())
      .def("set_timeout", &Store::set_timeout, py::arg("timeout"))
      .def_property_readonly("timeout", &Store::timeout)
      .def("__repr__", [](const Store& s) { return "<" + s.describe() + ">"; });

  py::class_<rt::dist::HashStore, Store, std::shared_ptr<rt::dist::HashStore>>(dist, "HashStore")
      .def(py::init<>());

  py::class_<rt::dist::FileStore, Store, std::shared_ptr<rt::dist::FileStore>>(dist, "FileStore")
      .def(py::init([](const std::string& file_name, int world_size) {
             py::gil_scoped_release r;
             return std::make_shared<rt::dist::FileStore>(file_name, world_size);
           }),
           py::arg("file_name"), py::arg("world_size") = -1)
      .def_property_readonly("path", &rt::dist::FileStore::path);

  py::class_<rt::dist::TCPStore, Store, std::shared_ptr<rt::dist::TCPStore>>(dist, "TCPStore")
      .def(py::init([](const std::string& host_name, int port, std::optional<int> world_size, bool is_master,
                       Milliseconds timeout, bool wait_for_workers) {
             rt::dist::TCPStoreOptions o;
             o.port = checked_port(port);
             o.is_master = is_master;
             o.world_size = world_size.value_or(-1);
             o.wait_for_workers = wait_for_workers;
             o.timeout = timeout;
             py::gil_scoped_release r;
             return std::make_shared<rt::dist::TCPStore>(host_name, o);
           }),
           py::arg("host_name"), py::arg("port"), py::arg("world_size") = py::none(), py::arg("is_master") = false,
           py::arg("timeout") = Milliseconds(rt::dist::kDefaultStoreTimeout), py::arg("wait_for_workers") = true)
      .def_property_readonly("host", &rt::dist::TCPStore::host)
      .def_property_readonly("port", &rt::dist::TCPStore::port);

  py::class_<rt::dist::PrefixStore, Store, std::shared_ptr<rt::dist::PrefixStore>>(dist, "PrefixStore")
      .def(py::init<std::string, std::shared_ptr<Store>>(), py::arg("prefix"), py::arg("store"))
      .def_property_readonly("underlying_store", &rt::dist::PrefixStore::base);
}

}  // namespace rtpy
