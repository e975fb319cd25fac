#include <fmt/format.h>

#include "kernels/blocked.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Use = LayoutBridge::Use;

// Every primitive of one fused convolution for one input layout, with the bridges between the
// callers' layouts and oneDNN's. The gradient g = dy (times ReLU's mask) is formed once in the
// forward output's chosen layout and read by both backward convolutions from there.
struct FusedConvPrimitives {
  std::optional<Layout> y_layout;
  dnnl::convolution_forward forward;
  LayoutBridge forward_x, forward_w, forward_b, forward_y;
  LayoutBridge g_from_dy;  // dy brought into the chosen output layout
  std::optional<dnnl::eltwise_backward> relu_backward;
  LayoutBridge relu_y;
  memory relu_g;  // dy times ReLU's mask, in the chosen output layout
  dnnl::convolution_backward_weights filter;
  LayoutBridge filter_x, filter_g, filter_dw, filter_db;
  dnnl::convolution_backward_data data;
  LayoutBridge data_w, data_g, data_dx;
};

FusedConvPrimitives build(const dnnl::engine& engine, const FusedConv& c, const Layout* x_layout) {
  const ConvShape& s = c.shape;
  const auto f32 = memory::data_type::f32;
  const memory::dims x_dims{c.batch, s.channels, s.height, s.width};
  const memory::dims w_dims{c.out_channels, s.channels, s.kernel, s.kernel};
  const memory::dims y_dims{c.batch, c.out_channels, s.out_height(), s.out_width()};
  const memory::dims b_dims{c.out_channels};
  const memory::dims strides{s.stride, s.stride}, padding{s.padding, s.padding};
  const memory::desc x_caller = desc_of(x_dims, x_layout), w_plain(w_dims, f32, Tag::oihw),
                     b_plain(b_dims, f32, Tag::x);
  const memory::desc x_any(x_dims, f32, Tag::any), w_any(w_dims, f32, Tag::any), y_any(y_dims, f32, Tag::any),
      b_any = c.bias ? memory::desc(b_dims, f32, Tag::any) : memory::desc();
  const auto direct = dnnl::algorithm::convolution_direct;

  dnnl::primitive_attr attr;
  if (c.relu) {
    dnnl::post_ops relu;
    relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(relu);
  }
  const dnnl::convolution_forward::primitive_desc forward(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, x_any, w_any, b_any, y_any, strides,
                                      padding, padding),
      attr, engine);
  const memory::desc y_chosen = forward.dst_desc();
  std::optional<Layout> y_layout;
  if (c.blocked_output) y_layout = layout_of(y_chosen);
  const memory::desc y_caller = y_layout ? y_chosen : desc_of(y_dims, nullptr);

  const dnnl::convolution_backward_weights::primitive_desc filter(
      dnnl::convolution_backward_weights::desc(direct, x_any, w_any, b_any, y_any, strides, padding, padding), engine,
      forward);
  const dnnl::convolution_backward_data::primitive_desc data(
      dnnl::convolution_backward_data::desc(direct, x_any, w_any, y_any, strides, padding, padding), engine, forward);

  FusedConvPrimitives p{
      y_layout,
      dnnl::convolution_forward(forward),
      LayoutBridge(x_caller, forward.src_desc(), engine, Use::kRead),
      LayoutBridge(w_plain, forward.weights_desc(), engine, Use::kRead),
      c.bias ? LayoutBridge(b_plain, forward.bias_desc(), engine, Use::kRead) : LayoutBridge(),
      LayoutBridge(y_caller, y_chosen, engine, Use::kWrite),
      LayoutBridge(y_caller, y_chosen, engine, Use::kRead),
      std::nullopt,
      LayoutBridge(),
      memory(),
      dnnl::convolution_backward_weights(filter),
      LayoutBridge(x_caller, filter.src_desc(), engine, Use::kRead),
      LayoutBridge(y_chosen, filter.diff_dst_desc(), engine, Use::kRead),
      LayoutBridge(w_plain, filter.diff_weights_desc(), engine, Use::kAccumulate),
      c.bias ? LayoutBridge(b_plain, filter.diff_bias_desc(), engine, Use::kAccumulate) : LayoutBridge(),
      dnnl::convolution_backward_data(data),
      LayoutBridge(w_plain, data.weights_desc(), engine, Use::kRead),
      LayoutBridge(y_chosen, data.diff_dst_desc(), engine, Use::kRead),
      LayoutBridge(x_caller, data.diff_src_desc(), engine, Use::kWrite),
  };
  if (c.relu && !c.dy_masked) {
    const auto relu = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    const dnnl::eltwise_forward::primitive_desc relu_forward(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, relu, y_chosen, 0.0f, 0.0f), engine);
    const dnnl::eltwise_backward::primitive_desc relu_backward(
        dnnl::eltwise_backward::desc(relu, y_chosen, y_chosen, 0.0f, 0.0f), engine, relu_forward);
    p.relu_backward = dnnl::eltwise_backward(relu_backward);
    p.relu_y = LayoutBridge(y_caller, y_chosen, engine, Use::kRead);
    p.relu_g = memory(y_chosen, engine);
  }
  return p;
}

FusedConvPrimitives& primitives_for(OneDnn& dnn, const FusedConv& c, const Layout* x_layout) {
  const ConvShape& s = c.shape;
  const std::string key = fmt::format("fused conv {} {} {} {} {} {} {} {} bias {} relu {} masked {} blocked {} from {}",
                                      c.batch, s.channels, s.height, s.width, c.out_channels, s.kernel, s.stride,
                                      s.padding, c.bias, c.relu, c.dy_masked, c.blocked_output,
                                      x_layout ? x_layout->name() : "plain");
  return dnn.cached<FusedConvPrimitives>(key, [&] { return build(dnn.engine(), c, x_layout); });
}

}  // namespace

std::optional<Layout> fused_conv_output_layout(OneDnn& dnn, const FusedConv& c, const Layout* x_layout) {
  auto held = dnn.lock();
  return primitives_for(dnn, c, x_layout).y_layout;
}

void fused_conv_forward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* w,
                        const float* bias, float* y) {
  auto held = dnn.lock();
  FusedConvPrimitives& p = primitives_for(dnn, c, x_layout);
  if (c.bias)
    execute(dnn, p.forward,
            {{DNNL_ARG_SRC, p.forward_x, x}, {DNNL_ARG_WEIGHTS, p.forward_w, w}, {DNNL_ARG_BIAS, p.forward_b, bias}},
            {DNNL_ARG_DST, p.forward_y, y});
  else
    execute(dnn, p.forward, {{DNNL_ARG_SRC, p.forward_x, x}, {DNNL_ARG_WEIGHTS, p.forward_w, w}},
            {DNNL_ARG_DST, p.forward_y, y});
}

void fused_conv_backward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* y,
                         const float* dy, const float* w, float* dw, float* db, float* dx) {
  auto held = dnn.lock();
  FusedConvPrimitives& p = primitives_for(dnn, c, x_layout);
  dnnl::stream& stream = dnn.stream();
  dnnl::memory g = p.g_from_dy.bind(dy);
  p.g_from_dy.before(stream);
  if (p.relu_backward) {
    dnnl::memory y_chosen = p.relu_y.bind(y);
    p.relu_y.before(stream);
    p.relu_backward->execute(stream, {{DNNL_ARG_DST, y_chosen}, {DNNL_ARG_DIFF_DST, g}, {DNNL_ARG_DIFF_SRC, p.relu_g}});
    g = p.relu_g;
  }
  const void* g_data = g.get_data_handle();

  if (dw != nullptr) {
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, p.filter_x.bind(x)},
                                               {DNNL_ARG_DIFF_DST, p.filter_g.bind(g_data)},
                                               {DNNL_ARG_DIFF_WEIGHTS, p.filter_dw.bind(dw)}};
    if (c.bias) args.emplace(DNNL_ARG_DIFF_BIAS, p.filter_db.bind(db));
    p.filter_x.before(stream);
    p.filter_g.before(stream);
    p.filter.execute(stream, args);
    p.filter_dw.after(stream);
    if (c.bias) p.filter_db.after(stream);
  }

  if (dx != nullptr) {
    std::unordered_map<int, dnnl::memory> data_args{{DNNL_ARG_WEIGHTS, p.data_w.bind(w)},
                                                    {DNNL_ARG_DIFF_DST, p.data_g.bind(g_data)},
                                                    {DNNL_ARG_DIFF_SRC, p.data_dx.bind(dx)}};
    p.data_w.before(stream);
    p.data_g.before(stream);
    p.data.execute(stream, data_args);
    p.data_dx.after(stream);
  }
  stream.wait();
}

}  // namespace paddle::kernels::onednn
