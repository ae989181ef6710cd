#include "convolution.h"

#include <cstdlib>
#include <cstring>
#include <variant>

#include "runtime.h"

namespace rt::cpu::onednn {

using dnnl::memory;
using tag = memory::format_tag;
using ForwardPD = dnnl::convolution_forward::primitive_desc;
using BackwardDataPD = dnnl::convolution_backward_data::primitive_desc;
using BackwardWeightsPD = dnnl::convolution_backward_weights::primitive_desc;

// The problem's memory descriptors in the caller's layout (user), what the primitive is offered (any_),
// and the primitive descriptor of one pass.
struct ConvPlanState {
  memory::desc src, weights, bias, dst;          // user: nchw, (g)oihw, a, nchw
  memory::desc any_src, any_weights, any_dst;
  memory::dims strides, dilates, padding_l, padding_r;
  std::variant<std::monostate, ForwardPD, BackwardDataPD, BackwardWeightsPD> pd;
};

namespace {

std::optional<memory::data_type> dnnl_type(ScalarType t) {
  if (t == kFloat32) return memory::data_type::f32;
  if (t == kBFloat16) return memory::data_type::bf16;
  return std::nullopt;
}

enum class Pass { Forward, BackwardData, BackwardWeights };

// Note [oneDNN convolution layouts]
// oneDNN's fast direct kernels read blocked layouts (nChw16c, OIhw16i16o, depthwise Goihw16g); offered
// format_tag::any it picks them, and the operands are reordered in and out through Scratch. Offered
// plain nchw it runs a GEMM-based kernel without reorders. Measured per pass (one thread, min of 7,
// bench shapes; ms plain / blocked): a 3x3 conv 32->32 on 32x32, batch 32, 13.0/5.2 forward,
// 19.4/5.1 input gradient, 19.0/5.0 weight gradient; depthwise 64 on 16x16 3.0/0.8; but a 1x1 conv
// 64->64 0.41/0.73 (plain is one GEMM, the reorders cost more than they save), and the input gradient
// of a layer with 1 or 3 input channels 0.8/3.7 and 1.6/2.8. So: blocked, except 1x1 kernels and
// the input gradient of fewer than 8 input channels.
bool blocked_layout(const ConvProblem& p, Pass pass) {
  if (const char* forced = std::getenv("RT_ONEDNN_CONV_LAYOUT")) return std::strcmp(forced, "blocked") == 0;
  if (p.g.kH == 1 && p.g.kW == 1) return false;
  return !(pass == Pass::BackwardData && p.Cin < 8);
}

std::optional<ConvPlanState> descs_of(const ConvProblem& p, Pass pass) {
  const auto dt = dnnl_type(p.dtype);
  if (!dt) return std::nullopt;
  const ConvGeometry& g = p.g;
  ConvPlanState d;
  const memory::dims src{p.N, p.Cin, g.H, g.W}, dst{p.N, p.Cout, g.oH, g.oW};
  const memory::dims w = p.groups == 1 ? memory::dims{p.Cout, g.C, g.kH, g.kW}
                                       : memory::dims{p.groups, p.Cout / p.groups, g.C, g.kH, g.kW};
  d.src = memory::desc(src, *dt, tag::nchw);
  d.dst = memory::desc(dst, *dt, tag::nchw);
  d.weights = memory::desc(w, *dt, p.groups == 1 ? tag::oihw : tag::goihw);
  if (p.bias) d.bias = memory::desc({p.Cout}, *dt, tag::a);
  const bool blocked = blocked_layout(p, pass);
  d.any_src = blocked ? memory::desc(src, *dt, tag::any) : d.src;
  d.any_dst = blocked ? memory::desc(dst, *dt, tag::any) : d.dst;
  d.any_weights = blocked ? memory::desc(w, *dt, tag::any) : d.weights;
  d.strides = {g.sH, g.sW};
  d.dilates = {g.dH - 1, g.dW - 1};  // oneDNN counts the gaps: 0 is no dilation
  d.padding_l = {g.pH, g.pW};
  d.padding_r = {g.pH, g.pW};
  return d;
}

// The forward primitive descriptor (forward_training: the backward passes are built against it).
std::optional<ForwardPD> forward_pd(const ConvPlanState& d) {
  return usable<ForwardPD>([&] {
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                               d.any_src, d.any_weights, d.bias, d.any_dst, d.strides, d.dilates,
                                               d.padding_l, d.padding_r);
    return ForwardPD(desc, user_scratchpad_attr(), cpu_engine());
  });
}

}  // namespace

std::optional<ConvForward> ConvForward::plan(const ConvProblem& p) {
  try {
    auto d = descs_of(p, Pass::Forward);
    if (!d) return std::nullopt;
    auto pd = forward_pd(*d);
    if (!pd) return std::nullopt;
    d->pd = std::move(*pd);
    ConvForward plan;
    plan.state_ = std::make_shared<const ConvPlanState>(std::move(*d));
    return plan;
  } catch (const dnnl::error& e) {
    throw_error("conv2d forward", e);
  }
}

void ConvForward::run(const void* src, const void* weights, const void* bias, void* dst, Scratch& scratch) const {
  const ConvPlanState& d = *state_;
  const auto& pd = std::get<ForwardPD>(d.pd);
  try {
    Execution run(scratch);
    run.add(DNNL_ARG_SRC, run.input(pd.src_desc(), d.src, src));
    run.add(DNNL_ARG_WEIGHTS, run.input(pd.weights_desc(), d.weights, weights));
    if (!d.bias.is_zero()) run.add(DNNL_ARG_BIAS, run.input(pd.bias_desc(), d.bias, bias));
    run.add(DNNL_ARG_DST, run.output(pd.dst_desc(), d.dst, dst));
    run.execute(dnnl::convolution_forward(pd), pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    throw_error("conv2d forward", e);
  }
}

std::optional<ConvBackwardData> ConvBackwardData::plan(const ConvProblem& p) {
  try {
    ConvProblem no_bias = p;
    no_bias.bias = false;
    auto d = descs_of(no_bias, Pass::BackwardData);
    if (!d) return std::nullopt;
    const auto hint = forward_pd(*d);
    if (!hint) return std::nullopt;
    auto pd = usable<BackwardDataPD>([&] {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d->any_src,
                                                       d->any_weights, d->any_dst, d->strides, d->dilates,
                                                       d->padding_l, d->padding_r);
      return BackwardDataPD(desc, user_scratchpad_attr(), cpu_engine(), *hint);
    });
    if (!pd) return std::nullopt;
    d->pd = std::move(*pd);
    ConvBackwardData plan;
    plan.state_ = std::make_shared<const ConvPlanState>(std::move(*d));
    return plan;
  } catch (const dnnl::error& e) {
    throw_error("conv2d backward (input gradient)", e);
  }
}

void ConvBackwardData::run(const void* diff_dst, const void* weights, void* diff_src, Scratch& scratch,
                           SharedReorders* shared) const {
  const ConvPlanState& d = *state_;
  const auto& pd = std::get<BackwardDataPD>(d.pd);
  try {
    Execution run(scratch, shared);
    run.add(DNNL_ARG_DIFF_DST, run.input(pd.diff_dst_desc(), d.dst, diff_dst));
    run.add(DNNL_ARG_WEIGHTS, run.input(pd.weights_desc(), d.weights, weights));
    run.add(DNNL_ARG_DIFF_SRC, run.output(pd.diff_src_desc(), d.src, diff_src));
    run.execute(dnnl::convolution_backward_data(pd), pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    throw_error("conv2d backward (input gradient)", e);
  }
}

std::optional<ConvBackwardWeights> ConvBackwardWeights::plan(const ConvProblem& p) {
  try {
    auto d = descs_of(p, Pass::BackwardWeights);
    if (!d) return std::nullopt;
    const auto hint = forward_pd(*d);
    if (!hint) return std::nullopt;
    auto pd = usable<BackwardWeightsPD>([&] {
      const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, d->any_src,
                                                          d->any_weights, d->bias, d->any_dst, d->strides,
                                                          d->dilates, d->padding_l, d->padding_r);
      return BackwardWeightsPD(desc, user_scratchpad_attr(), cpu_engine(), *hint);
    });
    if (!pd) return std::nullopt;
    d->pd = std::move(*pd);
    ConvBackwardWeights plan;
    plan.state_ = std::make_shared<const ConvPlanState>(std::move(*d));
    return plan;
  } catch (const dnnl::error& e) {
    throw_error("conv2d backward (weight gradient)", e);
  }
}

void ConvBackwardWeights::run(const void* src, const void* diff_dst, void* diff_weights, void* diff_bias,
                              Scratch& scratch, SharedReorders* shared) const {
  const ConvPlanState& d = *state_;
  const auto& pd = std::get<BackwardWeightsPD>(d.pd);
  try {
    Execution run(scratch, shared);
    run.add(DNNL_ARG_SRC, run.input(pd.src_desc(), d.src, src));
    run.add(DNNL_ARG_DIFF_DST, run.input(pd.diff_dst_desc(), d.dst, diff_dst));
    run.add(DNNL_ARG_DIFF_WEIGHTS, run.output(pd.diff_weights_desc(), d.weights, diff_weights));
    if (!d.bias.is_zero()) run.add(DNNL_ARG_DIFF_BIAS, run.output(pd.diff_bias_desc(), d.bias, diff_bias));
    run.execute(dnnl::convolution_backward_weights(pd), pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    throw_error("conv2d backward (weight gradient)", e);
  }
}

}  // namespace rt::cpu::onednn
