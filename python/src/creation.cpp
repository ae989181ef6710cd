// Factories: rt.tensor(data), zeros/ones/empty/full, arange/linspace/eye, random, *_like.
#include <fmt/format.h>

#include "bind.h"
#include "rt/generator.h"

namespace rtpy {

namespace {
enum class Kind { Bool = 0, Int = 1, Float = 2 };

struct NestedData {
  rt::Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  Kind kind = Kind::Bool;
  bool any_float_tensor = false;
  std::optional<rt::ScalarType> tensor_dtype;  // when elements are tensors
};

bool is_sequence(py::handle h) {
  return (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) ||
         (!is_tensor(h) && !PyUnicode_Check(h.ptr()) && PySequence_Check(h.ptr()) && !py::hasattr(h, "dtype"));
}

void infer_shape(py::handle h, rt::Shape& shape) {
  while (is_sequence(h)) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    shape.push_back(int64_t(s.size()));
    if (s.size() == 0) return;
    h = s[0];
  }
  if (is_tensor(h)) for (int64_t d : unwrap(h).sizes()) shape.push_back(d);
}

void collect(py::handle h, size_t depth, NestedData& out) {
  if (depth < out.shape.size() && is_sequence(h)) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(h);
    if (int64_t(s.size()) != out.shape[depth])
      throw py::value_error(fmt::format("expected sequence of length {} at dim {} (got {})", out.shape[depth], depth,
                                        s.size()));
    for (py::handle e : s) collect(e, depth + 1, out);
    return;
  }
  if (is_tensor(h)) {
    rt::Tensor t = unwrap(h);
    rt::Shape rest(out.shape.begin() + long(depth), out.shape.end());
    if (t.sizes() != rest)
      throw py::value_error(fmt::format("a tensor of shape {} inside the data does not match the expected shape {}",
                                        rt::format_shape(t.sizes()), rt::format_shape(rest)));
    out.tensor_dtype = out.tensor_dtype ? rt::promote_types(*out.tensor_dtype, t.dtype()) : t.dtype();
    for (double v : t.to_vector<double>()) out.f.push_back(v);
    for (int64_t v : t.to_vector<int64_t>()) out.i.push_back(v);
    out.kind = std::max(out.kind, t.is_floating_point() ? Kind::Float : t.dtype() == rt::kBool ? Kind::Bool : Kind::Int);
    return;
  }
  if (depth != out.shape.size())
    throw py::value_error(fmt::format("the data is ragged: expected a sequence at dim {} but found {}", depth,
                                      Py_TYPE(h.ptr())->tp_name));
  auto s = to_scalar(h);
  if (!s)
    throw py::type_error(fmt::format("could not convert an element of type {} to a number", Py_TYPE(h.ptr())->tp_name));
  out.f.push_back(s->to_double());
  out.i.push_back(s->is_floating() ? int64_t(s->to_double()) : s->to_int());
  out.kind = std::max(out.kind, s->is_floating() ? Kind::Float : s->is_bool() ? Kind::Bool : Kind::Int);
}

rt::TensorOptions options(std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad,
                          rt::ScalarType fallback = rt::kFloat32) {
  rt::TensorOptions o(dtype.value_or(fallback));
  o.device = to_device(device);
  o.requires_grad = requires_grad;
  return o;
}

rt::Tensor finish(rt::Tensor t, bool requires_grad) {
  if (requires_grad) {
    if (!t.is_floating_point())
      throw py::value_error(fmt::format("only Tensors of floating point dtype can require gradients, got {}",
                                        rt::dtype_name(t.dtype())));
    t.requires_grad_(true);
  }
  return t;
}
}  // namespace

rt::Tensor tensor_from_data(py::handle data, std::optional<rt::ScalarType> dtype) {
  if (is_tensor(data)) {
    rt::Tensor t = unwrap(data).detach().clone();
    return dtype && *dtype != t.dtype() ? t.to(*dtype) : t;
  }
  if (py::hasattr(data, "__array_interface__") && py::hasattr(data, "dtype") && !is_sequence(data)) {
    py::object np = py::module_::import("numpy");
    // ascontiguousarray makes a 0-d array 1-d: keep the input's shape (torch.tensor(np.array(3.0)) is 0-d).
    py::object arr = np.attr("ascontiguousarray")(data).attr("reshape")(np.attr("shape")(data));
    if (arr.attr("dtype").attr("byteorder").cast<std::string>() == ">")
      arr = arr.attr("astype")(arr.attr("dtype").attr("newbyteorder")("="));
    rt::Tensor t = from_numpy_array(arr).clone();
    return dtype && *dtype != t.dtype() ? t.to(*dtype) : t;
  }
  NestedData nd;
  infer_shape(data, nd.shape);
  collect(data, 0, nd);
  rt::ScalarType t = nd.kind == Kind::Float ? rt::kFloat32 : nd.kind == Kind::Int ? rt::kInt64 : rt::kBool;
  if (nd.f.empty() && nd.i.empty() && !nd.tensor_dtype) t = rt::kFloat32;  // rt.tensor([]): torch's default dtype
  if (nd.tensor_dtype && nd.kind != Kind::Float) t = *nd.tensor_dtype;
  if (nd.tensor_dtype && nd.kind == Kind::Float && rt::is_floating(*nd.tensor_dtype)) t = *nd.tensor_dtype;
  if (dtype) t = *dtype;
  rt::Tensor out = rt::make_tensor(nd.shape, t);
  const bool use_float = nd.kind == Kind::Float;
  rt::visit_dtype(t, [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (size_t k = 0; k < nd.f.size(); ++k) {
      if constexpr (std::is_same_v<T, bool>) p[k] = use_float ? nd.f[k] != 0.0 : nd.i[k] != 0;
      else if constexpr (std::is_integral_v<T>) p[k] = use_float ? T(nd.f[k]) : T(nd.i[k]);
      else p[k] = T(static_cast<rt::compute_t<T>>(use_float ? nd.f[k] : double(nd.i[k])));
    }
  });
  return out;
}

void bind_creation(py::module_& m) {
  m.def(
      "tensor",
      [](py::handle data, std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
        const rt::Device d = to_device(device);
        return finish(tensor_from_data(data, dtype).to(d), requires_grad);
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);

  auto shaped = [&m](const char* name, rt::Tensor (*fn)(const rt::Shape&, rt::TensorOptions)) {
    m.def(
        name,
        [fn](py::handle size, std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
          const rt::Shape shape = to_shape(size, "size");
          const rt::TensorOptions opts = options(dtype, device, false);
          return finish(run_sized(rt::numel_of(shape), [&] { return fn(shape, opts); }), requires_grad);
        },
        py::arg("size"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  };
  shaped("_empty", &rt::empty);
  shaped("_zeros", &rt::zeros);
  shaped("_ones", &rt::ones);
  shaped("_rand", &rt::rand);
  shaped("_randn", &rt::randn);
  m.def(
      "_full",
      [](py::handle size, const rt::Scalar& value, std::optional<rt::ScalarType> dtype, py::handle device,
         bool requires_grad) {
        rt::ScalarType fallback = value.is_floating() ? rt::kFloat32 : value.is_bool() ? rt::kBool : rt::kInt64;
        return finish(rt::full(to_shape(size, "size"), value, options(dtype, device, false, fallback)), requires_grad);
      },
      py::arg("size"), py::arg("fill_value"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "_randint",
      [](int64_t low, int64_t high, py::handle size, std::optional<rt::ScalarType> dtype, py::handle device,
         bool requires_grad) {
        return finish(rt::randint(low, high, to_shape(size, "size"), options(dtype, device, false, rt::kInt64)),
                      requires_grad);
      },
      py::arg("low"), py::arg("high"), py::arg("size"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "arange",
      [](const rt::Scalar& start, std::optional<rt::Scalar> end, const rt::Scalar& step,
         std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
        std::optional<rt::TensorOptions> o;
        if (dtype) o = options(dtype, device, false);
        rt::Tensor t = end ? rt::arange(start, *end, step, o) : rt::arange(start, o);
        return finish(t.to(to_device(device)), requires_grad);
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, std::optional<rt::ScalarType> dtype, py::handle device,
         bool requires_grad) {
        return finish(rt::linspace(start, end, steps, options(dtype, device, false)), requires_grad);
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> mcols, std::optional<rt::ScalarType> dtype, py::handle device,
         bool requires_grad) {
        return finish(rt::eye(n, mcols.value_or(-1), options(dtype, device, false)), requires_grad);
      },
      py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "randperm",
      [](int64_t n, std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
        return finish(rt::randperm(n, options(dtype, device, false, rt::kInt64)), requires_grad);
      },
      py::arg("n"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def("bernoulli", [](const rt::Tensor& p) { return rt::bernoulli(p); }, py::arg("input"));
  m.def(
      "scalar_tensor",
      [](const rt::Scalar& s, std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
        return finish(rt::scalar_tensor(s, options(dtype, device, false)), requires_grad);
      },
      py::arg("s"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);

  auto like = [&m](const char* name, rt::Tensor (*fn)(const rt::Tensor&, std::optional<rt::TensorOptions>)) {
    m.def(
        name,
        [fn](const rt::Tensor& t, std::optional<rt::ScalarType> dtype, py::handle device, bool requires_grad) {
          std::optional<rt::TensorOptions> o;
          if (dtype || !device.is_none()) o = options(dtype.value_or(t.dtype()), device, false);
          return finish(fn(t, o), requires_grad);
        },
        py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  };
  like("empty_like", &rt::empty_like);
  like("zeros_like", &rt::zeros_like);
  like("ones_like", &rt::ones_like);
  like("rand_like", &rt::rand_like);
  like("randn_like", &rt::randn_like);
  m.def(
      "full_like",
      [](const rt::Tensor& t, const rt::Scalar& v, std::optional<rt::ScalarType> dtype, py::handle device,
         bool requires_grad) {
        std::optional<rt::TensorOptions> o;
        if (dtype || !device.is_none()) o = options(dtype.value_or(t.dtype()), device, false);
        return finish(rt::full_like(t, v, o), requires_grad);
      },
      py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);

  m.def("manual_seed", [](uint64_t seed) { rt::manual_seed(seed); }, py::arg("seed"));
  m.def("seed", []() { return rt::default_generator().seed(); });
  m.def("initial_seed", []() { return rt::default_generator().seed(); });
  m.def("_get_rng_state", []() {
    auto& g = rt::default_generator();
    return std::make_pair(g.seed(), g.offset());
  });
  m.def("_set_rng_state", [](uint64_t seed, uint64_t offset) {
    auto& g = rt::default_generator();
    g.manual_seed(seed);
    g.set_offset(offset);
  });
}

}  // namespace rtpy
