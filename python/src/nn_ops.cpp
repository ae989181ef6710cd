// Linear algebra, convolution, pooling, softmax, losses, norms and attention. Bound under
// torch's names; rustytorch/nn/functional.py adds torch's full keyword signatures on top.
#include <fmt/format.h>

#include "bind.h"
#include "rt/ops/linear_pointwise.h"

namespace rtpy {

namespace {
// An int or a tuple of `n` ints (conv/pool arguments).
rt::Shape pair_arg(py::handle h, const char* what, size_t n = 2) {
  rt::Shape s = to_shape(h, what);
  if (s.size() != 1 && s.size() != n)
    throw py::value_error(fmt::format("{} must be an int or a tuple of {} ints, got {} values", what, n, s.size()));
  return s;
}

rt::Tensor optional_tensor(py::handle h) { return h.is_none() ? rt::Tensor() : unwrap(h); }

rt::Shape conv_padding(py::handle padding, const rt::Tensor& weight, const rt::Shape& dilation, size_t spatial) {
  if (!PyUnicode_Check(padding.ptr())) return pair_arg(padding, "padding", spatial);
  const std::string mode = padding.cast<std::string>();
  if (mode == "valid") return {0};
  if (mode != "same") throw py::value_error(fmt::format("Invalid padding string '{}': use 'same' or 'valid'", mode));
  rt::Shape pad;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[i];
    const int64_t total = d * (weight.size(int64_t(weight.dim() - spatial + i)) - 1);
    if (total % 2 != 0)
      throw rt::NotImplementedError("padding='same' with an even effective kernel size needs asymmetric padding, "
                                    "which conv does not support; pad the input explicitly instead");
    pad.push_back(total / 2);
  }
  return pad;
}

rt::Tensor softmax_like(rt::Tensor (*fn)(const rt::Tensor&, int64_t), const rt::Tensor& x, py::handle dim,
                        std::optional<rt::ScalarType> dtype, const char* op) {
  if (dim.is_none())
    throw py::type_error(fmt::format("{}() requires dim: implicit dim selection is deprecated in torch; pass dim=-1",
                                     op));
  ExplicitDtype explicit_dtype(dtype);
  rt::Tensor c = dtype && *dtype != x.dtype() ? rt::to_dtype(x, *dtype) : x;
  const int64_t d = dim.cast<int64_t>();
  return run_sized(x.numel(), [&] { return fn(c, d); });
}
}  // namespace

void bind_nn_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  using Binary = rt::Tensor (*)(const rt::Tensor&, const rt::Tensor&);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, Binary>>{{"matmul", &rt::matmul}, {"mm", &rt::mm}, {"bmm", &rt::bmm}}) {
    Binary f = fn;
    def_both(m, cls, name, [f](const rt::Tensor& a, const rt::Tensor& b) { return run_long([&] { return f(a, b); }); },
             py::arg("mat2"));
  }
  def_both(m, cls, "addmm",
           [](const rt::Tensor& s, const rt::Tensor& a, const rt::Tensor& b, const rt::Scalar& beta,
              const rt::Scalar& alpha) { return run_long([&] { return rt::addmm(s, a, b, beta, alpha); }); },
           py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  m.def("linear",
        [](const rt::Tensor& x, const rt::Tensor& w, py::handle b) {
          rt::Tensor bias = optional_tensor(b);
          return run_sized(x.numel() + w.numel(), [&] { return rt::linear(x, w, bias); });
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  // nn.Sequential's Linear + activation (rt/ops/linear_pointwise.h), each part in its module's scope (the
  // children's _scope_name); activation as rt::linear_activation_from_name.
  m.def("_linear_pointwise",
        [](const rt::Tensor& x, const rt::Tensor& w, py::handle b, const std::string& activation,
           const std::string& approximate, const std::string& linear_scope, const std::string& activation_scope) {
          const auto act = rt::linear_activation_from_name(activation, approximate);
          if (!act)
            throw py::value_error("_linear_pointwise: activation '" + activation + "' (approximate '" + approximate +
                                  "') is not one of relu, gelu (none or tanh), silu, sigmoid, tanh");
          rt::Tensor bias = optional_tensor(b);
          return run_sized(x.numel() + w.numel(), [&] {
            return rt::linear_pointwise(x, w, bias, *act, {linear_scope, activation_scope});
          });
        },
        py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("activation"), py::arg("approximate") = "none",
        py::arg("linear_scope") = "", py::arg("activation_scope") = "");
  m.def("conv1d",
        [](const rt::Tensor& x, const rt::Tensor& w, py::handle b, py::handle stride, py::handle padding,
           py::handle dilation, int64_t groups) {
          rt::Shape d = pair_arg(dilation, "dilation", 1), s = pair_arg(stride, "stride", 1);
          rt::Shape p = conv_padding(padding, w, d, 1);
          rt::Tensor bias = optional_tensor(b);
          return run_long([&] { return rt::conv1d(x, w, bias, s[0], p[0], d[0], groups); });
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
        py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def("conv2d",
        [](const rt::Tensor& x, const rt::Tensor& w, py::handle b, py::handle stride, py::handle padding,
           py::handle dilation, int64_t groups) {
          rt::Shape d = pair_arg(dilation, "dilation"), s = pair_arg(stride, "stride");
          rt::Shape p = conv_padding(padding, w, d, 2);
          rt::Tensor bias = optional_tensor(b);
          return run_long([&] { return rt::conv2d(x, w, bias, s, p, d, groups); });
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
        py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def("max_pool2d",
        [](const rt::Tensor& x, py::handle k, py::handle stride, py::handle padding, py::handle dilation,
           bool ceil_mode, bool return_indices) {
          if (return_indices)
            throw rt::NotImplementedError("max_pool2d(return_indices=True) is not supported by the engine");
          rt::Shape s = stride.is_none() ? rt::Shape{} : pair_arg(stride, "stride");
          rt::Shape ks = pair_arg(k, "kernel_size"), p = pair_arg(padding, "padding"), d = pair_arg(dilation, "dilation");
          return run_long([&] { return rt::max_pool2d(x, ks, s, p, d, ceil_mode); });
        },
        py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
        py::arg("dilation") = 1, py::arg("ceil_mode") = false, py::arg("return_indices") = false);
  m.def("avg_pool2d",
        [](const rt::Tensor& x, py::handle k, py::handle stride, py::handle padding, bool ceil_mode,
           bool count_include_pad, py::handle divisor_override) {
          if (!divisor_override.is_none())
            throw rt::NotImplementedError("avg_pool2d(divisor_override=...) is not supported by the engine");
          rt::Shape s = stride.is_none() ? rt::Shape{} : pair_arg(stride, "stride");
          rt::Shape ks = pair_arg(k, "kernel_size"), p = pair_arg(padding, "padding");
          return run_long([&] { return rt::avg_pool2d(x, ks, s, p, ceil_mode, count_include_pad); });
        },
        py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
        py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none());
  m.def("adaptive_avg_pool2d",
        [](const rt::Tensor& x, py::handle size) {
          rt::Shape out;
          if (PyLong_Check(size.ptr())) {
            out = {size.cast<int64_t>(), size.cast<int64_t>()};
          } else {
            py::sequence seq = py::reinterpret_borrow<py::sequence>(size);
            if (seq.size() != 2) throw py::value_error("adaptive_avg_pool2d: output_size must be an int or 2 values");
            for (size_t i = 0; i < 2; ++i)
              out.push_back(seq[i].is_none() ? x.size(int64_t(x.dim() - 2 + i)) : seq[i].cast<int64_t>());
          }
          return run_long([&] { return rt::adaptive_avg_pool2d(x, out); });
        },
        py::arg("input"), py::arg("output_size"));

  def_both(m, cls, "softmax",
           [](const rt::Tensor& x, py::handle dim, std::optional<rt::ScalarType> dtype) {
             return softmax_like(&rt::softmax, x, dim, dtype, "softmax");
           },
           py::arg("dim") = py::none(), py::arg("dtype") = py::none());
  def_both(m, cls, "log_softmax",
           [](const rt::Tensor& x, py::handle dim, std::optional<rt::ScalarType> dtype) {
             return softmax_like(&rt::log_softmax, x, dim, dtype, "log_softmax");
           },
           py::arg("dim") = py::none(), py::arg("dtype") = py::none());

  m.def("_cross_entropy",
        [](const rt::Tensor& x, const rt::Tensor& t, py::handle w, int64_t ignore_index, const std::string& reduction,
           double label_smoothing) {
          rt::Tensor weight = optional_tensor(w);
          return run_sized(x.numel(), [&] { return rt::cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing); });
        },
        py::arg("input"), py::arg("target"), py::arg("weight"), py::arg("ignore_index"), py::arg("reduction"),
        py::arg("label_smoothing"));
  m.def("_nll_loss",
        [](const rt::Tensor& x, const rt::Tensor& t, py::handle w, int64_t ignore_index, const std::string& reduction) {
          rt::Tensor weight = optional_tensor(w);
          return run_sized(x.numel(), [&] { return rt::nll_loss(x, t, weight, ignore_index, reduction); });
        },
        py::arg("input"), py::arg("target"), py::arg("weight"), py::arg("ignore_index"), py::arg("reduction"));
  m.def("_mse_loss",
        [](const rt::Tensor& x, const rt::Tensor& t, const std::string& reduction) {
          return run_sized(x.numel(), [&] { return rt::mse_loss(x, t, reduction); });
        },
        py::arg("input"), py::arg("target"), py::arg("reduction"));
  m.def("_binary_cross_entropy_with_logits",
        [](const rt::Tensor& x, const rt::Tensor& t, py::handle w, const std::string& reduction, py::handle pw) {
          rt::Tensor weight = optional_tensor(w), pos_weight = optional_tensor(pw);
          return run_sized(x.numel(), [&] {
            return rt::binary_cross_entropy_with_logits(x, t, weight, reduction, pos_weight);
          });
        },
        py::arg("input"), py::arg("target"), py::arg("weight"), py::arg("reduction"), py::arg("pos_weight"));
  m.def("layer_norm",
        [](const rt::Tensor& x, py::handle shape, py::handle w, py::handle b, double eps) {
          rt::Tensor weight = optional_tensor(w), bias = optional_tensor(b);
          rt::Shape s = to_shape(shape, "normalized_shape");
          return run_sized(x.numel(), [&] { return rt::layer_norm(x, s, weight, bias, eps); });
        },
        py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("eps") = 1e-5);
  m.def("batch_norm",
        [](const rt::Tensor& x, py::handle rm, py::handle rv, py::handle w, py::handle b, bool training,
           double momentum, double eps) {
          rt::Tensor mean = optional_tensor(rm), var = optional_tensor(rv), weight = optional_tensor(w),
                     bias = optional_tensor(b);
          return run_sized(x.numel(), [&] { return rt::batch_norm(x, mean, var, weight, bias, training, momentum, eps); });
        },
        py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
        py::arg("bias") = py::none(), py::arg("training") = false, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  m.def("embedding",
        [](const rt::Tensor& indices, const rt::Tensor& weight, py::handle padding_idx) {
          int64_t p = padding_idx.is_none() ? -1 : padding_idx.cast<int64_t>();
          if (p < -1) p += weight.size(0);
          return rt::embedding(weight, indices, p);
        },
        py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none());
  m.def("dropout",
        [](const rt::Tensor& x, double p, bool training) {
          if (p < 0.0 || p > 1.0)
            throw py::value_error(fmt::format("dropout probability has to be between 0 and 1, but got {}", p));
          return rt::dropout(x, p, training);
        },
        py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true);
  m.def("scaled_dot_product_attention",
        [](const rt::Tensor& q, const rt::Tensor& k, const rt::Tensor& v, py::handle mask, double dropout_p,
           bool is_causal, std::optional<double> scale) {
          rt::Tensor attn_mask = optional_tensor(mask);
          return run_long([&] { return rt::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale); });
        },
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
        py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::kw_only(), py::arg("scale") = py::none());
  m.def("one_hot", [](const rt::Tensor& t, int64_t n) { return rt::one_hot(t, n); }, py::arg("tensor"),
        py::arg("num_classes") = -1);
}

}  // namespace rtpy
