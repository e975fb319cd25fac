#include <fmt/format.h>

#include "kernels/blocked.h"
#include "kernels/functors.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

using dnnl::memory;
using Use = LayoutBridge::Use;

// Max pooling of one shape for one input layout: it pools in the input's own layout (oneDNN's
// pooling reads blocked layouts natively) and keeps the winners in its workspace for backward.
struct MaxPoolPrimitives {
  std::optional<Layout> y_layout;
  memory::desc workspace;
  dnnl::pooling_forward forward;
  LayoutBridge forward_x, forward_y;
  dnnl::pooling_backward backward;
  LayoutBridge backward_dy, backward_dx;
};

MaxPoolPrimitives build(const dnnl::engine& engine, const BlockedMaxPool& p, const Layout& x_layout) {
  const auto f32 = memory::data_type::f32;
  const int ho = window_count(p.height, p.kernel, p.stride, p.padding);
  const int wo = window_count(p.width, p.kernel, p.stride, p.padding);
  const memory::dims x_dims{p.batch, p.channels, p.height, p.width}, y_dims{p.batch, p.channels, ho, wo};
  const memory::dims strides{p.stride, p.stride}, kernel{p.kernel, p.kernel}, padding{p.padding, p.padding};
  const memory::desc x_desc = desc_of(x_dims, &x_layout), y_any(y_dims, f32, memory::format_tag::any);
  const auto max = dnnl::algorithm::pooling_max;

  const dnnl::pooling_forward::primitive_desc forward(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, max, x_desc, y_any, strides, kernel, padding,
                                  padding),
      engine);
  const memory::desc y_chosen = forward.dst_desc();
  std::optional<Layout> y_layout;
  if (p.blocked_output) y_layout = layout_of(y_chosen);
  const memory::desc y_caller = y_layout ? y_chosen : desc_of(y_dims, nullptr);
  const dnnl::pooling_backward::primitive_desc backward(
      dnnl::pooling_backward::desc(max, memory::desc(x_dims, f32, memory::format_tag::any), y_chosen, strides, kernel,
                                   padding, padding),
      engine, forward);
  return MaxPoolPrimitives{
      y_layout,
      forward.workspace_desc(),
      dnnl::pooling_forward(forward),
      LayoutBridge(x_desc, forward.src_desc(), engine, Use::kRead),
      LayoutBridge(y_caller, y_chosen, engine, Use::kWrite),
      dnnl::pooling_backward(backward),
      LayoutBridge(y_caller, backward.diff_dst_desc(), engine, Use::kRead),
      LayoutBridge(x_desc, backward.diff_src_desc(), engine, Use::kWrite),
  };
}

MaxPoolPrimitives& primitives_for(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  const std::string key = fmt::format("max pool {} {} {} {} blocked {} from {}", p.kernel, p.stride, p.padding,
                                      p.blocked_output, x_layout.name(), p.batch);
  return dnn.cached<MaxPoolPrimitives>(key, [&] { return build(dnn.engine(), p, x_layout); });
}

}  // namespace

std::optional<Layout> max_pool_output_layout(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  auto held = dnn.lock();
  return primitives_for(dnn, p, x_layout).y_layout;
}

size_t max_pool_workspace_bytes(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  auto held = dnn.lock();
  return primitives_for(dnn, p, x_layout).workspace.get_size();
}

void max_pool_forward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* x, float* y,
                      void* workspace) {
  auto held = dnn.lock();
  MaxPoolPrimitives& prims = primitives_for(dnn, p, x_layout);
  dnnl::memory winners(prims.workspace, dnn.engine(), workspace);
  dnnl::stream& stream = dnn.stream();
  dnnl::memory& src = prims.forward_x.bind(x);
  prims.forward_x.before(stream);
  prims.forward.execute(stream, {{DNNL_ARG_SRC, src},
                                 {DNNL_ARG_DST, prims.forward_y.bind(y)},
                                 {DNNL_ARG_WORKSPACE, winners}});
  prims.forward_y.after(stream);
  stream.wait();
}

void max_pool_backward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* dy,
                       const void* workspace, float* dx) {
  auto held = dnn.lock();
  MaxPoolPrimitives& prims = primitives_for(dnn, p, x_layout);
  dnnl::memory winners(prims.workspace, dnn.engine(), const_cast<void*>(workspace));
  dnnl::stream& stream = dnn.stream();
  dnnl::memory& diff_dst = prims.backward_dy.bind(dy);
  prims.backward_dy.before(stream);
  prims.backward.execute(stream, {{DNNL_ARG_DIFF_DST, diff_dst},
                                  {DNNL_ARG_DIFF_SRC, prims.backward_dx.bind(dx)},
                                  {DNNL_ARG_WORKSPACE, winners}});
  prims.backward_dx.after(stream);
  stream.wait();
}

}  // namespace paddle::kernels::onednn
