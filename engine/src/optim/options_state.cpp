#include "options_state.h"

#include "rt/ops/creation.h"

namespace rt::optim::detail {

Tensor number(double v) { return rt::scalar_tensor(v, kFloat64); }
Tensor flag(bool v) { return rt::scalar_tensor(v, kBool); }
Tensor number_pair(std::pair<double, double> v) { return rt::tensor({v.first, v.second}); }

namespace {
std::vector<double> values_of(const nn::StateDict& d, const char* key, int64_t expected) {
  const Tensor* t = d.find(key);
  if (!t) return {};
  if (!t->defined() || t->numel() != expected)
    throw ValueError(std::string("optimizer load_state_dict: param_groups entry '") + key + "' should hold " +
                     std::to_string(expected) + " value(s), got shape " +
                     (t->defined() ? format_shape(t->sizes()) : std::string("<undefined>")));
  return t->to_vector<double>();
}
}  // namespace

void read(const nn::StateDict& d, const char* key, double& v) {
  auto x = values_of(d, key, 1);
  if (!x.empty()) v = x[0];
}

void read(const nn::StateDict& d, const char* key, bool& v) {
  auto x = values_of(d, key, 1);
  if (!x.empty()) v = x[0] != 0.0;
}

void read(const nn::StateDict& d, const char* key, std::pair<double, double>& v) {
  auto x = values_of(d, key, 2);
  if (!x.empty()) v = {x[0], x[1]};
}

}  // namespace rt::optim::detail
