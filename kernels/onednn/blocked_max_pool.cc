#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/blocked.h"
#include "kernels/functors.h"
#include "kernels/onednn/kernel_choice.h"
#include "kernels/onednn/onednn.h"
#include "kernels/pooling.h"

namespace paddle::kernels::onednn {
namespace {

using dnnl::memory;
using Use = LayoutBridge::Use;

// Max pooling of one shape for one input layout, in the input's own layout. Windows that tile a
// channel-blocked layout (nChw16c) may run on our one-pass kernels (kernels/pooling.h), which
// write each input gradient once, where oneDNN's pooling backward clears dx and then scatters
// into it: the faster of the two on this machine (kernel_choice.h). Any other case runs on
// oneDNN's pooling. Either keeps its winners in the workspace.
struct MaxPoolPrimitives {
  std::optional<Layout> y_layout;
  memory::desc workspace;
  size_t kept_output_bytes = 0;  // oneDNN's pooling with relu_gradient: a copy of y after its workspace
  // Where that copy starts: oneDNN's workspace rounded up to a cache line, so the floats are aligned.
  size_t kept_output_at() const { return (workspace.get_size() + 63) / 64 * 64; }
  int block = 0;  // channels per block for our kernels; 0: oneDNN's pooling
  std::optional<dnnl::pooling_forward> forward;
  LayoutBridge forward_x, forward_y;
  std::optional<dnnl::pooling_backward> backward;
  LayoutBridge backward_dy, backward_dx;
};

// The channel block of a [N,C,H,W] descriptor laid out as [N][C/b][H][W][b], else 0.
int channel_block(const memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 4) return 0;
  const auto& b = d.format_desc.blocking;
  if (b.inner_nblks != 1 || b.inner_idxs[0] != 1) return 0;
  const dnnl_dim_t block = b.inner_blks[0];
  const bool dense = b.strides[3] == block && b.strides[2] == d.padded_dims[3] * block &&
                     b.strides[1] == d.padded_dims[2] * d.padded_dims[3] * block &&
                     b.strides[0] == (d.padded_dims[1] / block) * b.strides[1];
  return dense ? static_cast<int>(block) : 0;
}

memory::format_tag channel_blocked_tag(int block) {
  switch (block) {
    case 16: return memory::format_tag::aBcd16b;
    case 8: return memory::format_tag::aBcd8b;
    case 4: return memory::format_tag::aBcd4b;
    default: return memory::format_tag::undef;
  }
}

// Our one-pass kernels on a channel-blocked x, whose windows tile its planes.
MaxPoolPrimitives build_ours(const dnnl::engine& engine, const BlockedMaxPool& p, int block) {
  const auto f32 = memory::data_type::f32;
  const memory::dims y_dims{p.batch, p.channels, window_count(p.height, p.kernel, p.stride, p.padding),
                            window_count(p.width, p.kernel, p.stride, p.padding)};
  const memory::desc y_chosen(y_dims, f32, channel_blocked_tag(block));
  std::optional<Layout> y_layout;
  if (p.blocked_output) y_layout = layout_of(y_chosen);
  const memory::desc y_caller = y_layout ? y_chosen : desc_of(y_dims, nullptr);
  MaxPoolPrimitives ours;
  ours.y_layout = y_layout;
  ours.workspace = memory::desc(y_chosen.dims(), memory::data_type::s32, channel_blocked_tag(block));
  ours.block = block;
  ours.forward_y = LayoutBridge(y_caller, y_chosen, engine, Use::kWrite);
  ours.backward_dy = LayoutBridge(y_caller, y_chosen, engine, Use::kRead);
  return ours;
}

MaxPoolPrimitives build_library(const dnnl::engine& engine, const BlockedMaxPool& p, const memory::desc& x_desc) {
  const auto f32 = memory::data_type::f32;
  const memory::dims x_dims{p.batch, p.channels, p.height, p.width};
  const memory::dims y_dims{p.batch, p.channels, window_count(p.height, p.kernel, p.stride, p.padding),
                            window_count(p.width, p.kernel, p.stride, p.padding)};
  const memory::dims strides{p.stride, p.stride}, kernel{p.kernel, p.kernel}, padding{p.padding, p.padding};
  const memory::desc y_any(y_dims, f32, memory::format_tag::any);
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
      p.relu_gradient ? y_chosen.get_size() : 0,
      0,
      dnnl::pooling_forward(forward),
      LayoutBridge(x_desc, forward.src_desc(), engine, Use::kRead),
      LayoutBridge(y_caller, y_chosen, engine, Use::kWrite),
      dnnl::pooling_backward(backward),
      LayoutBridge(y_caller, backward.diff_dst_desc(), engine, Use::kRead),
      LayoutBridge(x_desc, backward.diff_src_desc(), engine, Use::kWrite),
  };
}

size_t workspace_bytes(const MaxPoolPrimitives& prims) {
  return prims.kept_output_bytes != 0 ? prims.kept_output_at() + prims.kept_output_bytes : prims.workspace.get_size();
}

// The op itself, on primitives already built; the caller holds dnn.lock().
void run_forward(OneDnn& dnn, MaxPoolPrimitives& prims, const BlockedMaxPool& p, const Layout& x_layout,
                 const float* x, float* y, void* workspace) {
  dnnl::stream& stream = dnn.stream();
  if (prims.block != 0) {
    float* pooled = static_cast<float*>(prims.forward_y.bind(y).get_data_handle());
    const int outer = static_cast<int>(x_layout.desc().desc.data.padded_dims[1]) / prims.block * p.batch;
    cpu::max_pool_forward_channel_blocked(x, outer, prims.block, p.height, p.width, p.kernel, pooled,
                                          static_cast<int32_t*>(workspace), p.relu_gradient);
    prims.forward_y.after(stream);
    stream.wait();
    return;
  }
  dnnl::memory winners(prims.workspace, dnn.engine(), workspace);
  dnnl::memory& src = prims.forward_x.bind(x);
  dnnl::memory& dst = prims.forward_y.bind(y);
  prims.forward_x.before(stream);
  prims.forward->execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, winners}});
  prims.forward_y.after(stream);
  stream.wait();
  if (prims.kept_output_bytes != 0)
    std::memcpy(static_cast<char*>(workspace) + prims.kept_output_at(), dst.get_data_handle(),
                prims.kept_output_bytes);
}

void run_backward(OneDnn& dnn, MaxPoolPrimitives& prims, const BlockedMaxPool& p, const Layout& x_layout,
                  const float* dy, const void* workspace, float* dx) {
  dnnl::stream& stream = dnn.stream();
  dnnl::memory diff_dst = prims.backward_dy.bind(dy);
  prims.backward_dy.before(stream);
  if (prims.block != 0) {
    stream.wait();
    const int outer = static_cast<int>(x_layout.desc().desc.data.padded_dims[1]) / prims.block * p.batch;
    cpu::max_pool_backward_channel_blocked(static_cast<const float*>(diff_dst.get_data_handle()),
                                           static_cast<const int32_t*>(workspace), outer, prims.block, p.height,
                                           p.width, p.kernel, dx);
    return;
  }
  dnnl::memory winners(prims.workspace, dnn.engine(), const_cast<void*>(workspace));
  std::vector<float> masked;
  if (prims.kept_output_bytes != 0) {  // ReLU's gradient at the winner: none where the maximum is 0
    stream.wait();
    const auto* pooled = reinterpret_cast<const float*>(static_cast<const char*>(workspace) + prims.kept_output_at());
    const auto* g = static_cast<const float*>(diff_dst.get_data_handle());
    masked.resize(prims.kept_output_bytes / sizeof(float));
    for (size_t i = 0; i < masked.size(); ++i) masked[i] = pooled[i] > 0.0f ? g[i] : 0.0f;
    diff_dst = dnnl::memory(diff_dst.get_desc(), dnn.engine(), masked.data());
  }
  prims.backward->execute(stream, {{DNNL_ARG_DIFF_DST, diff_dst},
                                  {DNNL_ARG_DIFF_SRC, prims.backward_dx.bind(dx)},
                                  {DNNL_ARG_WORKSPACE, winners}});
  prims.backward_dx.after(stream);
  stream.wait();
}

// One forward and backward of `prims` on data of the op's shape (a ReLU's output where the op
// takes ReLU's gradient), timed (kernel_choice.h).
OpTiming time_primitives(OneDnn& dnn, MaxPoolPrimitives& prims, const BlockedMaxPool& p, const Layout& x_layout) {
  const size_t x_floats = x_layout.desc().desc.get_size() / sizeof(float);
  const memory::dims y_dims{p.batch, p.channels, window_count(p.height, p.kernel, p.stride, p.padding),
                            window_count(p.width, p.kernel, p.stride, p.padding)};
  const size_t y_floats = (prims.y_layout ? prims.y_layout->desc().desc : desc_of(y_dims, nullptr)).get_size() / sizeof(float);
  std::vector<float> x(x_floats), y(y_floats), dy(y_floats), dx(x_floats);
  std::vector<std::byte> workspace(workspace_bytes(prims));
  uint32_t state = 12345;
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  };
  for (float& v : x) v = p.relu_gradient ? std::max(0.0f, next()) : next();
  for (float& v : dy) v = next();
  return time_op([&] { run_forward(dnn, prims, p, x_layout, x.data(), y.data(), workspace.data()); },
                 [&] { run_backward(dnn, prims, p, x_layout, dy.data(), workspace.data(), dx.data()); });
}

// Max pooling of one shape: our kernels where the windows tile a channel-blocked x and they are
// the faster here (or forced, OneDnn::pick()); oneDNN's pooling otherwise.
MaxPoolPrimitives build(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  const memory::desc x_desc = desc_of({p.batch, p.channels, p.height, p.width}, &x_layout);
  const int block = channel_block(x_desc);
  const bool ours_fit = block != 0 && channel_blocked_tag(block) != memory::format_tag::undef &&
                        p.stride == p.kernel && p.padding == 0 && p.kernel > 0;
  if (!ours_fit || dnn.pick() == Pick::kLibrary) return build_library(dnn.engine(), p, x_desc);
  if (dnn.pick() == Pick::kOurs) return build_ours(dnn.engine(), p, block);
  MaxPoolPrimitives ours = build_ours(dnn.engine(), p, block);
  MaxPoolPrimitives library = build_library(dnn.engine(), p, x_desc);
  const std::string what = fmt::format("max pooling {}, {}x{} windows{}", x_layout.name(), p.kernel, p.kernel,
                                       p.relu_gradient ? " with ReLU's gradient" : "");
  const size_t way = dnn.decide(what, 2, [&] {
    return choose_faster(time_primitives(dnn, ours, p, x_layout), time_primitives(dnn, library, p, x_layout));
  });
  return way == 0 ? std::move(ours) : std::move(library);
}

MaxPoolPrimitives& primitives_for(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  const std::string key = fmt::format("max pool {} {} {} blocked {} relu {} from {}", p.kernel, p.stride, p.padding,
                                      p.blocked_output, p.relu_gradient, x_layout.name());
  return dnn.cached<MaxPoolPrimitives>(key, [&] { return build(dnn, p, x_layout); });
}

}  // namespace

std::optional<Layout> max_pool_output_layout(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  auto held = dnn.lock();
  return primitives_for(dnn, p, x_layout).y_layout;
}

size_t max_pool_workspace_bytes(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout) {
  auto held = dnn.lock();
  return workspace_bytes(primitives_for(dnn, p, x_layout));
}

void max_pool_forward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* x, float* y,
                      void* workspace) {
  auto held = dnn.lock();
  run_forward(dnn, primitives_for(dnn, p, x_layout), p, x_layout, x, y, workspace);
}

void max_pool_backward(OneDnn& dnn, const BlockedMaxPool& p, const Layout& x_layout, const float* dy,
                       const void* workspace, float* dx) {
  auto held = dnn.lock();
  run_backward(dnn, primitives_for(dnn, p, x_layout), p, x_layout, dy, workspace, dx);
}

}  // namespace paddle::kernels::onednn
