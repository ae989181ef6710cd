// Elementwise functions and their in-place forms, bound as rt.<op> and Tensor.<op>.
#include <fmt/format.h>

#include "bind.h"
#include "rt/optim/functional.h"

namespace rtpy {

namespace {
using Unary = rt::Tensor (*)(const rt::Tensor&);

struct UnaryEntry {
  const char* name;
  Unary fn;
  bool has_inplace;
};

const UnaryEntry kUnary[] = {
    {"neg", &rt::neg, true},       {"negative", &rt::neg, true},     {"abs", &rt::abs, true},
    {"absolute", &rt::abs, false}, {"sign", &rt::sign, true},        {"exp", &rt::exp, true},
    {"log", &rt::log, true},       {"log1p", &rt::log1p, true},      {"sqrt", &rt::sqrt, true},
    {"rsqrt", &rt::rsqrt, true},   {"square", &rt::square, true},    {"reciprocal", &rt::reciprocal, true},
    {"sin", &rt::sin, true},       {"cos", &rt::cos, true},          {"tanh", &rt::tanh, true},
    {"sigmoid", &rt::sigmoid, true}, {"relu", &rt::relu, true},      {"silu", &rt::silu, false},
    {"isnan", &rt::isnan, false},  {"isinf", &rt::isinf, false},     {"logical_not", &rt::logical_not, false},
};

// min/max of clamp: a number, a tensor (elementwise bound) or None.
rt::Tensor clamp_any(const rt::Tensor& x, py::handle lo, py::handle hi) {
  if (lo.is_none() && hi.is_none())
    throw py::value_error("clamp: at least one of 'min' or 'max' must not be None");
  if (is_tensor(lo) || is_tensor(hi)) {
    rt::Tensor r = x;
    if (!lo.is_none()) r = rt::maximum(r, tensor_or_number(lo, "clamp"));
    if (!hi.is_none()) r = rt::minimum(r, tensor_or_number(hi, "clamp"));
    return r;
  }
  std::optional<rt::Scalar> a, b;
  if (!lo.is_none()) a = to_scalar(lo);
  if (!hi.is_none()) b = to_scalar(hi);
  if ((!lo.is_none() && !a) || (!hi.is_none() && !b)) throw py::type_error("clamp: min and max must be numbers or tensors");
  return run_sized(x.numel(), [&] { return rt::clamp(x, a, b); });
}

rt::Scalar scalar_arg(py::handle h, const char* op, const char* what) {
  auto s = to_scalar(h);
  if (!s) throw py::type_error(fmt::format("{}: {} must be a number, got {}", op, what, Py_TYPE(h.ptr())->tp_name));
  return *s;
}
}  // namespace

void bind_pointwise(py::module_& m) {
  TensorClass cls = tensor_class(m);
  for (const UnaryEntry& e : kUnary) {
    Unary fn = e.fn;
    def_both(m, cls, e.name, [fn](const rt::Tensor& x) { return run_sized(x.numel(), [&] { return fn(x); }); });
    if (!e.has_inplace) continue;
    std::string inplace = std::string(e.name) + "_";
    const char* op = e.name;
    cls.def(inplace.c_str(), [fn, op](py::handle self) {
      rt::Tensor x = unwrap(self);
      run_sized(x.numel(), [&]() -> rt::Tensor& { return rt::apply_inplace(x, op, fn); });
      return same(self);
    });
  }
  def_both(m, cls, "leaky_relu", [](const rt::Tensor& x, double s) { return rt::leaky_relu(x, s); },
           py::arg("negative_slope") = 0.01);
  def_both(m, cls, "gelu", [](const rt::Tensor& x, const std::string& a) { return rt::gelu(x, a); }, py::kw_only(),
           py::arg("approximate") = "none");
  def_both(m, cls, "softplus", [](const rt::Tensor& x, double b, double t) { return rt::softplus(x, b, t); },
           py::arg("beta") = 1.0, py::arg("threshold") = 20.0);

  auto pow_fn = [](py::handle base, py::handle exponent) {
    if (!is_tensor(base)) return rt::pow(scalar_arg(base, "pow", "self"), unwrap(exponent));
    rt::Tensor b = unwrap(base);
    if (is_tensor(exponent)) return rt::pow(b, unwrap(exponent));
    const rt::Scalar e = scalar_arg(exponent, "pow", "exponent");  // with the GIL: run_sized releases it
    return run_sized(b.numel(), [&] { return rt::pow(b, e); });
  };
  m.def("pow", pow_fn, py::arg("input"), py::arg("exponent"));
  cls.def("pow", pow_fn, py::arg("exponent"));
  cls.def(
      "pow_",
      [](py::handle self, const rt::Scalar& e) {
        rt::Tensor x = unwrap(self);
        rt::pow_(x, e);
        return same(self);
      },
      py::arg("exponent"));

  for (const char* name : {"clamp", "clip"}) {
    def_both(m, cls, name, [](const rt::Tensor& x, py::handle lo, py::handle hi) { return clamp_any(x, lo, hi); },
             py::arg("min") = py::none(), py::arg("max") = py::none());
    cls.def(
        (std::string(name) + "_").c_str(),
        [](py::handle self, py::handle lo, py::handle hi) {
          rt::Tensor x = unwrap(self);
          if (is_tensor(lo) || is_tensor(hi)) {
            rt::Tensor r = clamp_any(x, lo, hi);
            rt::copy_(x, r);
          } else {
            std::optional<rt::Scalar> a, b;
            if (!lo.is_none()) a = scalar_arg(lo, "clamp_", "min");
            if (!hi.is_none()) b = scalar_arg(hi, "clamp_", "max");
            if (!a && !b) throw py::value_error("clamp_: at least one of 'min' or 'max' must not be None");
            rt::clamp_(x, a, b);
          }
          return same(self);
        },
        py::arg("min") = py::none(), py::arg("max") = py::none());
  }
  def_both(m, cls, "clamp_min", [](const rt::Tensor& x, py::handle lo) { return clamp_any(x, lo, py::none()); },
           py::arg("min"));
  def_both(m, cls, "clamp_max", [](const rt::Tensor& x, py::handle hi) { return clamp_any(x, py::none(), hi); },
           py::arg("max"));

  using Binary = rt::Tensor (*)(const rt::Tensor&, const rt::Tensor&);
  const std::pair<const char*, Binary> binaries[] = {
      {"maximum", &rt::maximum}, {"minimum", &rt::minimum}, {"eq", &rt::eq},   {"ne", &rt::ne},
      {"lt", &rt::lt},           {"le", &rt::le},           {"gt", &rt::gt},   {"ge", &rt::ge},
      {"greater", &rt::gt},      {"less", &rt::lt},         {"greater_equal", &rt::ge}, {"less_equal", &rt::le},
      {"not_equal", &rt::ne},    {"logical_and", &rt::logical_and}, {"logical_or", &rt::logical_or},
      {"logical_xor", &rt::logical_xor},
  };
  for (const auto& [name, fn] : binaries) {
    Binary f = fn;
    const char* op = name;
    def_both(m, cls, name,
             [f, op](const rt::Tensor& x, py::handle other) {
               rt::Tensor y = tensor_or_number(other, op);
               return run_sized(x.numel(), [&] { return f(x, y); });
             },
             py::arg("other"));
  }

  auto where_fn = [](const rt::Tensor& cond, py::handle a, py::handle b) {
    rt::Tensor x = tensor_or_number(a, "where"), y = tensor_or_number(b, "where");
    return rt::where(cond, x, y);
  };
  m.def("where", where_fn, py::arg("condition"), py::arg("input"), py::arg("other"));
  cls.def("where", [where_fn](const rt::Tensor& self, const rt::Tensor& cond, py::handle other) {
    return where_fn(cond, wrap(self), other);
  }, py::arg("condition"), py::arg("other"));
  def_both(m, cls, "masked_fill",
           [](const rt::Tensor& x, const rt::Tensor& mask, py::handle v) {
             return rt::masked_fill(x, mask, scalar_arg(v, "masked_fill", "value"));
           },
           py::arg("mask"), py::arg("value"));
  cls.def(
      "masked_fill_",
      [](py::handle self, const rt::Tensor& mask, py::handle v) {
        rt::Tensor x = unwrap(self);
        rt::masked_fill_(x, mask, scalar_arg(v, "masked_fill_", "value"));
        return same(self);
      },
      py::arg("mask"), py::arg("value"));

  // ---- in-place updates (optimizers, init) ------------------------------------------------
  cls.def(
      "copy_",
      [](py::handle self, const rt::Tensor& src, bool non_blocking) {
        rt::Tensor x = unwrap(self);
        run_sized(x.numel(), [&]() -> rt::Tensor& { return rt::copy_(x, src, non_blocking); });
        return same(self);
      },
      py::arg("src"), py::arg("non_blocking") = false);
  cls.def(
      "fill_",
      [](py::handle self, py::handle v) {
        rt::Tensor x = unwrap(self);
        const rt::Scalar value = scalar_arg(v, "fill_", "value");
        run_sized(x.numel(), [&]() -> rt::Tensor& { return rt::fill_(x, value); });
        return same(self);
      },
      py::arg("value"));
  // One optimizer update of one parameter in place (rt/optim/functional.h): the Python optimizers
  // call these for parameters on a GPU, where one fused kernel replaces their chain of ops.
  m.def(
      "_adam_step_",
      [](const rt::Tensor& param, const rt::Tensor& exp_avg, const rt::Tensor& exp_avg_sq, py::handle max_exp_avg_sq,
         const rt::Tensor& grad, double lr, double beta1, double beta2, double eps, double weight_decay,
         bool decoupled_weight_decay, double step) {
        const rt::Tensor vmax = max_exp_avg_sq.is_none() ? rt::Tensor() : unwrap(max_exp_avg_sq);
        rt::optim::adam_step_(param, exp_avg, exp_avg_sq, vmax, grad,
                              {lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay}, step);
      },
      py::arg("param"), py::arg("exp_avg"), py::arg("exp_avg_sq"), py::arg("max_exp_avg_sq"), py::arg("grad"),
      py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("decoupled_weight_decay"), py::arg("step"));
  m.def(
      "_sgd_step_",
      [](const rt::Tensor& param, py::handle momentum_buffer, const rt::Tensor& grad, double lr, double momentum,
         double dampening, double weight_decay, bool nesterov, bool first) {
        const rt::Tensor buf = momentum_buffer.is_none() ? rt::Tensor() : unwrap(momentum_buffer);
        rt::optim::sgd_step_(param, buf, grad, rt::optim::SGDOptions{lr, momentum, dampening, weight_decay, nesterov},
                             first);
      },
      py::arg("param"), py::arg("momentum_buffer"), py::arg("grad"), py::kw_only(), py::arg("lr"),
      py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("first"));
  cls.def("zero_", [](py::handle self) {
    rt::Tensor x = unwrap(self);
    rt::fill_(x, 0);
    return same(self);
  });
  using Ternary = rt::Tensor& (*)(rt::Tensor&, const rt::Tensor&, const rt::Tensor&, const rt::Scalar&);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, Ternary>>{{"addcmul_", &rt::addcmul_}, {"addcdiv_", &rt::addcdiv_}}) {
    Ternary f = fn;
    cls.def(
        name,
        [f](py::handle self, const rt::Tensor& b, const rt::Tensor& c, const rt::Scalar& value) {
          rt::Tensor x = unwrap(self);
          run_sized(x.numel(), [&]() -> rt::Tensor& { return f(x, b, c, value); });
          return same(self);
        },
        py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  }
  def_both(m, cls, "addcmul",
           [](const rt::Tensor& x, const rt::Tensor& b, const rt::Tensor& c, const rt::Scalar& v) {
             return rt::add(x, rt::mul(rt::mul(b, c), rt::scalar_to_tensor(v)));
           },
           py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  def_both(m, cls, "addcdiv",
           [](const rt::Tensor& x, const rt::Tensor& b, const rt::Tensor& c, const rt::Scalar& v) {
             return rt::add(x, rt::mul(rt::div(b, c), rt::scalar_to_tensor(v)));
           },
           py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  cls.def(
      "lerp_",
      [](py::handle self, const rt::Tensor& end, py::handle weight) {
        rt::Tensor x = unwrap(self);
        if (is_tensor(weight)) {
          rt::Tensor w = unwrap(weight);
          rt::Tensor step = rt::mul(rt::sub(end, x), w);
          rt::add_(x, step);
        } else {
          rt::lerp_(x, end, scalar_arg(weight, "lerp_", "weight"));
        }
        return same(self);
      },
      py::arg("end"), py::arg("weight"));
  def_both(m, cls, "lerp",
           [](const rt::Tensor& x, const rt::Tensor& end, py::handle weight) {
             return rt::add(x, rt::mul(rt::sub(end, x), tensor_or_number(weight, "lerp")));
           },
           py::arg("end"), py::arg("weight"));
  cls.def(
      "uniform_",
      [](py::handle self, double a, double b) {
        rt::Tensor x = unwrap(self);
        run_sized(x.numel(), [&]() -> rt::Tensor& { return rt::uniform_(x, a, b); });
        return same(self);
      },
      py::arg("from") = 0.0, py::arg("to") = 1.0);
  cls.def(
      "normal_",
      [](py::handle self, double mean, double std) {
        rt::Tensor x = unwrap(self);
        run_sized(x.numel(), [&]() -> rt::Tensor& { return rt::normal_(x, mean, std); });
        return same(self);
      },
      py::arg("mean") = 0.0, py::arg("std") = 1.0);
}

}  // namespace rtpy
