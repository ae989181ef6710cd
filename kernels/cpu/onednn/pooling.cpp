#include "pooling.h"

#include <variant>

#include "runtime.h"

namespace rt::cpu::onednn {

using dnnl::memory;
using ForwardPD = dnnl::pooling_v2_forward::primitive_desc;
using BackwardPD = dnnl::pooling_v2_backward::primitive_desc;

struct AvgPoolPlanState {
  memory::desc src, dst;  // nchw
  std::variant<ForwardPD, BackwardPD> pd;
};

namespace {

struct PoolDescs {
  memory::desc src, dst;
  dnnl::algorithm alg;
  memory::dims strides, kernel, dilation, padding_l, padding_r;
};

std::optional<PoolDescs> descs_of(const AvgPoolProblem& p) {
  if (p.dtype != kFloat32) return std::nullopt;
  // ceil_mode can need more padding on the right than on the left; oneDNN counts it in an
  // include-padding divisor, PyTorch clips the window to the padded input.
  const int64_t rH = (p.oH - 1) * p.sH + p.kH - p.H - p.pH, rW = (p.oW - 1) * p.sW + p.kW - p.W - p.pW;
  if (p.count_include_pad && (rH > p.pH || rW > p.pW)) return std::nullopt;
  PoolDescs d;
  d.src = memory::desc({p.N, p.C, p.H, p.W}, memory::data_type::f32, memory::format_tag::nchw);
  d.dst = memory::desc({p.N, p.C, p.oH, p.oW}, memory::data_type::f32, memory::format_tag::nchw);
  d.alg = p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                              : dnnl::algorithm::pooling_avg_exclude_padding;
  d.strides = {p.sH, p.sW};
  d.kernel = {p.kH, p.kW};
  d.dilation = {0, 0};
  d.padding_l = {p.pH, p.pW};
  d.padding_r = {std::max(rH, int64_t(0)), std::max(rW, int64_t(0))};
  return d;
}

std::optional<ForwardPD> forward_pd(const PoolDescs& d) {
  return usable<ForwardPD>([&] {
    const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_training, d.alg, d.src, d.dst, d.strides,
                                              d.kernel, d.dilation, d.padding_l, d.padding_r);
    return ForwardPD(desc, user_scratchpad_attr(), cpu_engine());
  });
}

}  // namespace

std::optional<AvgPoolForward> AvgPoolForward::plan(const AvgPoolProblem& p) {
  try {
    const auto d = descs_of(p);
    if (!d) return std::nullopt;
    auto pd = forward_pd(*d);
    if (!pd) return std::nullopt;
    AvgPoolForward plan;
    plan.state_ = std::make_shared<const AvgPoolPlanState>(AvgPoolPlanState{d->src, d->dst, std::move(*pd)});
    return plan;
  } catch (const dnnl::error& e) {
    throw_error("avg_pool2d forward", e);
  }
}

void AvgPoolForward::run(const void* src, void* dst, Scratch& scratch) const {
  const auto& pd = std::get<ForwardPD>(state_->pd);
  try {
    Execution run(scratch);
    run.add(DNNL_ARG_SRC, run.input(pd.src_desc(), state_->src, src));
    run.add(DNNL_ARG_DST, run.output(pd.dst_desc(), state_->dst, dst));
    run.execute(dnnl::pooling_v2_forward(pd), pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    throw_error("avg_pool2d forward", e);
  }
}

std::optional<AvgPoolBackward> AvgPoolBackward::plan(const AvgPoolProblem& p) {
  try {
    const auto d = descs_of(p);
    if (!d) return std::nullopt;
    const auto hint = forward_pd(*d);
    if (!hint) return std::nullopt;
    auto pd = usable<BackwardPD>([&] {
      const dnnl::pooling_v2_backward::desc desc(d->alg, d->src, d->dst, d->strides, d->kernel, d->dilation,
                                                 d->padding_l, d->padding_r);
      return BackwardPD(desc, user_scratchpad_attr(), cpu_engine(), *hint);
    });
    if (!pd) return std::nullopt;
    AvgPoolBackward plan;
    plan.state_ = std::make_shared<const AvgPoolPlanState>(AvgPoolPlanState{d->src, d->dst, std::move(*pd)});
    return plan;
  } catch (const dnnl::error& e) {
    throw_error("avg_pool2d backward", e);
  }
}

void AvgPoolBackward::run(const void* diff_dst, void* diff_src, Scratch& scratch) const {
  const auto& pd = std::get<BackwardPD>(state_->pd);
  try {
    Execution run(scratch);
    run.add(DNNL_ARG_DIFF_DST, run.input(pd.diff_dst_desc(), state_->dst, diff_dst));
    run.add(DNNL_ARG_DIFF_SRC, run.output(pd.diff_src_desc(), state_->src, diff_src));
    run.execute(dnnl::pooling_v2_backward(pd), pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    throw_error("avg_pool2d backward", e);
  }
}

}  // namespace rt::cpu::onednn
