// One update of one parameter in place for the optimizers whose Python classes (rustytorch/optim/)
// keep param_groups and state in Python and leave the arithmetic to the engine: RMSprop, Adagrad,
// Adadelta, Adamax, NAdam, RAdam (rt/optim/<name>.h states each update). `maximize` is applied by
// the engine; `step` is the count after incrementing it. Adam/AdamW and SGD take a whole parameter
// group per call (_fused_adam_, _fused_sgd_: rt/optim/functional.h).
#include "bind.h"
#include "rt/optim/adadelta.h"
#include "rt/optim/adagrad.h"
#include "rt/optim/adamax.h"
#include "rt/optim/functional.h"
#include "rt/optim/nadam.h"
#include "rt/optim/radam.h"
#include "rt/optim/rmsprop.h"

namespace rtpy {

namespace {
rt::Tensor optional_tensor(py::handle h) { return h.is_none() ? rt::Tensor() : unwrap(h); }
std::pair<double, double> beta_pair(py::handle betas) {
  auto seq = py::cast<py::sequence>(betas);
  if (seq.size() != 2) throw py::value_error("betas must be a pair (beta1, beta2)");
  return {py::cast<double>(seq[0]), py::cast<double>(seq[1])};
}
}  // namespace

void bind_optim_steps(py::module_& m) {
  m.def(
      "_fused_adam_",
      [](const rt::TensorList& params, const rt::TensorList& grads, const rt::TensorList& exp_avgs,
         const rt::TensorList& exp_avg_sqs, const rt::TensorList& max_exp_avg_sqs, const rt::TensorList& steps,
         double lr, py::handle betas, double eps, double weight_decay, bool decoupled_weight_decay, bool maximize) {
        const auto [beta1, beta2] = beta_pair(betas);
        rt::optim::fused_adam_({params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps},
                               {lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay}, maximize);
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
      py::arg("steps"), py::kw_only(), py::arg("lr"), py::arg("betas"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("decoupled_weight_decay"), py::arg("maximize"));
  m.def(
      "_fused_sgd_",
      [](const rt::TensorList& params, const rt::TensorList& grads, const rt::TensorList& momentum_buffers,
         const std::vector<bool>& first, double lr, double momentum, double dampening, double weight_decay,
         bool nesterov, bool maximize) {
        rt::optim::fused_sgd_({params, grads, momentum_buffers, first},
                              rt::optim::SGDOptions{lr, momentum, dampening, weight_decay, nesterov}, maximize);
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("first"), py::kw_only(),
      py::arg("lr"), py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"),
      py::arg("maximize"));
  m.def(
      "_rmsprop_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& square_avg, py::handle grad_avg,
         py::handle momentum_buffer, double lr, double alpha, double eps, double weight_decay, double momentum,
         bool centered, bool maximize) {
        rt::optim::rmsprop_step_(param, grad, square_avg, optional_tensor(grad_avg), optional_tensor(momentum_buffer),
                                 {lr, alpha, eps, weight_decay, momentum, centered, maximize});
      },
      py::arg("param"), py::arg("grad"), py::arg("square_avg"), py::arg("grad_avg"), py::arg("momentum_buffer"),
      py::kw_only(), py::arg("lr"), py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"),
      py::arg("centered"), py::arg("maximize"));
  m.def(
      "_adagrad_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& sum, double lr, double lr_decay,
         double weight_decay, double eps, bool maximize, double step) {
        rt::optim::adagrad_step_(param, grad, sum, {lr, lr_decay, weight_decay, 0.0, eps, maximize}, step);
      },
      py::arg("param"), py::arg("grad"), py::arg("sum"), py::kw_only(), py::arg("lr"), py::arg("lr_decay"),
      py::arg("weight_decay"), py::arg("eps"), py::arg("maximize"), py::arg("step"));
  m.def(
      "_adadelta_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& square_avg, const rt::Tensor& acc_delta,
         double lr, double rho, double eps, double weight_decay, bool maximize) {
        rt::optim::adadelta_step_(param, grad, square_avg, acc_delta, {lr, rho, eps, weight_decay, maximize});
      },
      py::arg("param"), py::arg("grad"), py::arg("square_avg"), py::arg("acc_delta"), py::kw_only(), py::arg("lr"),
      py::arg("rho"), py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"));
  m.def(
      "_adamax_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& exp_avg, const rt::Tensor& exp_inf,
         double lr, py::handle betas, double eps, double weight_decay, bool maximize, double step) {
        rt::optim::adamax_step_(param, grad, exp_avg, exp_inf, {lr, beta_pair(betas), eps, weight_decay, maximize},
                                step);
      },
      py::arg("param"), py::arg("grad"), py::arg("exp_avg"), py::arg("exp_inf"), py::kw_only(), py::arg("lr"),
      py::arg("betas"), py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"), py::arg("step"));
  m.def(
      "_nadam_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& exp_avg, const rt::Tensor& exp_avg_sq,
         const rt::Tensor& mu_product, double lr, py::handle betas, double eps, double weight_decay,
         double momentum_decay, double step) {
        rt::optim::nadam_step_(param, grad, exp_avg, exp_avg_sq, mu_product,
                               {lr, beta_pair(betas), eps, weight_decay, momentum_decay}, step);
      },
      py::arg("param"), py::arg("grad"), py::arg("exp_avg"), py::arg("exp_avg_sq"), py::arg("mu_product"),
      py::kw_only(), py::arg("lr"), py::arg("betas"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("momentum_decay"), py::arg("step"));
  m.def(
      "_radam_step_",
      [](const rt::Tensor& param, const rt::Tensor& grad, const rt::Tensor& exp_avg, const rt::Tensor& exp_avg_sq,
         double lr, py::handle betas, double eps, double weight_decay, double step) {
        rt::optim::radam_step_(param, grad, exp_avg, exp_avg_sq, {lr, beta_pair(betas), eps, weight_decay}, step);
      },
      py::arg("param"), py::arg("grad"), py::arg("exp_avg"), py::arg("exp_avg_sq"), py::kw_only(), py::arg("lr"),
      py::arg("betas"), py::arg("eps"), py::arg("weight_decay"), py::arg("step"));
}

}  // namespace rtpy
