#include <fmt/format.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/blocked.h"
#include "kernels/onednn/kernel_choice.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Use = LayoutBridge::Use;
using ForwardDesc = dnnl::convolution_forward::primitive_desc;

// An algorithm oneDNN may run a convolution with.
struct Algorithm {
  dnnl::algorithm id;
  const char* name;
};
constexpr Algorithm kDirect{dnnl::algorithm::convolution_direct, "direct"};
constexpr Algorithm kWinograd{dnnl::algorithm::convolution_winograd, "Winograd's"};

// The descriptors a fused convolution is built from: the callers' layouts, and "any" where oneDNN
// chooses.
struct ConvDescs {
  memory::desc x_caller, w_plain, b_plain;  // b_plain: empty without a bias
  memory::desc x_any, w_any, b_any, y_any;
  memory::dims strides, padding;
  dnnl::primitive_attr attr;  // the ReLU post-op, where fused

  ConvDescs(const FusedConv& c, const Layout* x_layout) {
    const ConvShape& s = c.shape;
    const auto f32 = memory::data_type::f32;
    const memory::dims x_dims{c.batch, s.channels, s.height, s.width};
    const memory::dims w_dims{c.out_channels, s.channels, s.kernel, s.kernel};
    const memory::dims y_dims{c.batch, c.out_channels, s.out_height(), s.out_width()};
    x_caller = desc_of(x_dims, x_layout);
    w_plain = memory::desc(w_dims, f32, Tag::oihw);
    if (c.bias) b_plain = memory::desc({c.out_channels}, f32, Tag::x);
    x_any = memory::desc(x_dims, f32, Tag::any);
    w_any = memory::desc(w_dims, f32, Tag::any);
    y_any = memory::desc(y_dims, f32, Tag::any);
    if (c.bias) b_any = memory::desc({c.out_channels}, f32, Tag::any);
    strides = {s.stride, s.stride};
    padding = {s.padding, s.padding};
    if (c.relu) {
      dnnl::post_ops relu;
      relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(relu);
    }
  }
};

// Each direction of the convolution on one algorithm, with the bridges between the callers'
// layouts and the algorithm's.
struct ForwardRun {
  dnnl::convolution_forward op;
  LayoutBridge x, w, b, y;
  bool bias = false;

  void run(OneDnn& dnn, const float* x_data, const float* w_data, const float* b_data, float* y_data) {
    if (bias)
      execute(dnn, op, {{DNNL_ARG_SRC, x, x_data}, {DNNL_ARG_WEIGHTS, w, w_data}, {DNNL_ARG_BIAS, b, b_data}},
              {DNNL_ARG_DST, y, y_data});
    else
      execute(dnn, op, {{DNNL_ARG_SRC, x, x_data}, {DNNL_ARG_WEIGHTS, w, w_data}}, {DNNL_ARG_DST, y, y_data});
  }
};

struct DataRun {  // dx = the data gradient, from g in the forward's output layout
  dnnl::convolution_backward_data op;
  LayoutBridge w, g, dx;

  void run(OneDnn& dnn, const float* w_data, const void* g_data, float* dx_data) {
    execute(dnn, op, {{DNNL_ARG_WEIGHTS, w, w_data}, {DNNL_ARG_DIFF_DST, g, g_data}}, {DNNL_ARG_DIFF_SRC, dx, dx_data});
  }
};

struct FilterRun {  // dw += the filter gradient, db += the bias gradient
  dnnl::convolution_backward_weights op;
  LayoutBridge x, g, dw, db;
  bool bias = false;

  void run(OneDnn& dnn, const float* x_data, const void* g_data, float* dw_data, float* db_data) {
    dnnl::stream& stream = dnn.stream();
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, x.bind(x_data)}, {DNNL_ARG_DIFF_DST, g.bind(g_data)}, {DNNL_ARG_DIFF_WEIGHTS, dw.bind(dw_data)}};
    if (bias) args.emplace(DNNL_ARG_DIFF_BIAS, db.bind(db_data));
    x.before(stream);
    g.before(stream);
    op.execute(stream, args);
    dw.after(stream);
    if (bias) db.after(stream);
    stream.wait();
  }
};

// A caller's buffer for timing: a fixed pattern in [-1, 1), so no denormals slow either way.
std::vector<float> sample_of(const memory::desc& desc) {
  std::vector<float> values(desc.get_size() / sizeof(float));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(static_cast<int>(i * 7919 % 2000) - 1000) / 1000.0f;
  return values;
}

// The way a direction runs: of one per algorithm with a primitive for the shape (`make` gives
// nothing for one without), the one OneDnn::decide() takes, where the choice is timed raced by
// the call `on_scratch` gives (made only then: its scratch data can be megabytes); else the first.
template <class Run>
Run choose_way(OneDnn& dnn, const std::vector<Algorithm>& algorithms, const std::string& what,
               const std::function<std::optional<Run>(const Algorithm&)>& make,
               const std::function<std::function<void(Run&)>()>& on_scratch) {
  std::vector<std::pair<Algorithm, Run>> ways;
  for (const Algorithm& algorithm : algorithms) {
    if (!ways.empty() && !dnn.times_alternatives()) break;
    if (auto run = make(algorithm)) ways.emplace_back(algorithm, std::move(*run));
  }
  if (ways.empty()) throw std::logic_error(fmt::format("{}: oneDNN has no algorithm for it", what));
  if (ways.size() == 1) return std::move(ways.front().second);
  const size_t way = dnn.decide(what, ways.size(), [&] {
    const std::function<void(Run&)> call = on_scratch();
    std::vector<std::function<void()>> calls;
    for (auto& [algorithm, run] : ways) calls.push_back([&call, &run = run] { call(run); });
    const std::vector<double> us = race(calls);
    std::vector<TimedWay> timings;
    for (size_t i = 0; i < ways.size(); ++i) timings.push_back({ways[i].first.name, us[i]});
    return fastest_way(timings);
  });
  return std::move(ways[way].second);
}

// The algorithms to try, in order of preference where untimed.
std::vector<Algorithm> algorithms_for(const OneDnn& dnn) {
  switch (dnn.alternative()) {
    case Alternative::kNever: return {kDirect};
    case Alternative::kAlways: return {kWinograd, kDirect};
    case Alternative::kTimed: break;
  }
  return {kDirect, kWinograd};
}

// Every primitive of one fused convolution for one input layout. The forward's algorithm is
// chosen when it is built; each gradient's at its first use, so a shape that only ever runs
// forward (evaluation's) times no backward. The forward's ways all write y in the layout the
// first chose, which the next layer is told. The gradient g = dy (times ReLU's mask) is formed
// once in that layout and read by both backward convolutions from there.
struct FusedConvPrimitives {
  FusedConvPrimitives(const FusedConv& c, const Layout* x_layout) : conv(c), descs(c, x_layout) {}

  FusedConv conv;
  ConvDescs descs;
  std::string what;  // "convolution 64x16x14x14 nChw16c, 3x3 pad 1 to 32 channels, bias, ReLU": the op and its key
  std::vector<std::pair<Algorithm, ForwardDesc>> hints;  // each algorithm's forward, for its backward
  std::optional<Layout> y_layout;
  memory::desc y_chosen, y_caller;
  ForwardRun forward;
  LayoutBridge g_from_dy;  // dy brought into the chosen output layout
  std::optional<dnnl::eltwise_backward> relu_backward;
  LayoutBridge relu_y;
  memory relu_g;  // dy times ReLU's mask, in the chosen output layout
  std::optional<DataRun> data;
  std::optional<FilterRun> filter;
};

// The algorithms `p` has a forward for, and each one's forward: the hint its backward is built from.
std::vector<Algorithm> algorithms_of(const FusedConvPrimitives& p) {
  std::vector<Algorithm> algorithms;
  for (const auto& [algorithm, hint] : p.hints) algorithms.push_back(algorithm);
  return algorithms;
}
const ForwardDesc& hint_of(const FusedConvPrimitives& p, const Algorithm& algorithm) {
  for (const auto& [a, hint] : p.hints)
    if (a.id == algorithm.id) return hint;
  throw std::logic_error("a convolution's backward asked for an algorithm its forward has none of");
}

FusedConvPrimitives build(OneDnn& dnn, const FusedConv& c, const Layout* x_layout) {
  const dnnl::engine& engine = dnn.engine();
  FusedConvPrimitives p(c, x_layout);
  const ConvDescs& d = p.descs;
  p.what = fmt::format("convolution {}, {}x{}{} pad {} to {} channels{}{}{}",
                       x_layout ? x_layout->name() : fmt::format("{}x{}x{}x{} nchw", c.batch, c.shape.channels,
                                                                 c.shape.height, c.shape.width),
                       c.shape.kernel, c.shape.kernel, c.shape.stride == 1 ? "" : fmt::format(" stride {}", c.shape.stride),
                       c.shape.padding, c.out_channels, c.bias ? ", bias" : "", c.relu ? ", ReLU" : "",
                       c.blocked_output ? "" : ", plain output");
  for (const Algorithm& algorithm : algorithms_for(dnn)) {
    const auto desc = if_implemented<ForwardDesc>([&] {
      return ForwardDesc(dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm.id, d.x_any,
                                                         d.w_any, d.b_any, d.y_any, d.strides, d.padding, d.padding),
                         d.attr, engine);
    });
    if (desc && (p.hints.empty() || desc->dst_desc() == p.hints.front().second.dst_desc()))
      p.hints.emplace_back(algorithm, *desc);
  }
  p.y_chosen = p.hints.front().second.dst_desc();
  if (c.blocked_output) p.y_layout = layout_of(p.y_chosen);
  p.y_caller = p.y_layout ? p.y_chosen : desc_of(d.y_any.dims(), nullptr);
  p.forward = choose_way<ForwardRun>(
      dnn, algorithms_of(p), p.what + ", forward",
      [&](const Algorithm& algorithm) {
        const ForwardDesc& desc = hint_of(p, algorithm);
        return std::optional<ForwardRun>(ForwardRun{
            dnnl::convolution_forward(desc), LayoutBridge(d.x_caller, desc.src_desc(), engine, Use::kRead),
            LayoutBridge(d.w_plain, desc.weights_desc(), engine, Use::kRead),
            c.bias ? LayoutBridge(d.b_plain, desc.bias_desc(), engine, Use::kRead) : LayoutBridge(),
            LayoutBridge(p.y_caller, desc.dst_desc(), engine, Use::kWrite), c.bias});
      },
      [&] {
        return [&dnn, x = sample_of(d.x_caller), w = sample_of(d.w_plain), b = sample_of(d.b_plain),
                y = sample_of(p.y_caller)](ForwardRun& run) mutable {
          run.run(dnn, x.data(), w.data(), b.data(), y.data());
        };
      });
  p.g_from_dy = LayoutBridge(p.y_caller, p.y_chosen, engine, Use::kRead);
  if (c.relu && !c.dy_masked) {
    const auto relu = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    const dnnl::eltwise_forward::primitive_desc relu_forward(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, relu, p.y_chosen, 0.0f, 0.0f), engine);
    const dnnl::eltwise_backward::primitive_desc relu_backward(
        dnnl::eltwise_backward::desc(relu, p.y_chosen, p.y_chosen, 0.0f, 0.0f), engine, relu_forward);
    p.relu_backward = dnnl::eltwise_backward(relu_backward);
    p.relu_y = LayoutBridge(p.y_caller, p.y_chosen, engine, Use::kRead);
    p.relu_g = memory(p.y_chosen, engine);
  }
  return p;
}

DataRun& data_run(OneDnn& dnn, FusedConvPrimitives& p) {
  if (p.data) return *p.data;
  const ConvDescs& d = p.descs;
  const dnnl::engine& engine = dnn.engine();
  p.data = choose_way<DataRun>(
      dnn, algorithms_of(p), p.what + ", data gradient",
      [&](const Algorithm& algorithm) -> std::optional<DataRun> {
        using Desc = dnnl::convolution_backward_data::primitive_desc;
        const auto desc = if_implemented<Desc>([&] {
          return Desc(dnnl::convolution_backward_data::desc(algorithm.id, d.x_any, d.w_any, d.y_any, d.strides,
                                                            d.padding, d.padding),
                      engine, hint_of(p, algorithm));
        });
        if (!desc) return std::nullopt;
        return DataRun{dnnl::convolution_backward_data(*desc),
                       LayoutBridge(d.w_plain, desc->weights_desc(), engine, Use::kRead),
                       LayoutBridge(p.y_chosen, desc->diff_dst_desc(), engine, Use::kRead),
                       LayoutBridge(d.x_caller, desc->diff_src_desc(), engine, Use::kWrite)};
      },
      [&] {
        return [&dnn, w = sample_of(d.w_plain), g = sample_of(p.y_chosen), dx = sample_of(d.x_caller)](
                   DataRun& run) mutable { run.run(dnn, w.data(), g.data(), dx.data()); };
      });
  return *p.data;
}

FilterRun& filter_run(OneDnn& dnn, FusedConvPrimitives& p) {
  if (p.filter) return *p.filter;
  const ConvDescs& d = p.descs;
  const dnnl::engine& engine = dnn.engine();
  const bool bias = p.conv.bias;
  p.filter = choose_way<FilterRun>(
      dnn, algorithms_of(p), p.what + ", filter gradient",
      [&](const Algorithm& algorithm) -> std::optional<FilterRun> {
        using Desc = dnnl::convolution_backward_weights::primitive_desc;
        const auto desc = if_implemented<Desc>([&] {
          return Desc(dnnl::convolution_backward_weights::desc(algorithm.id, d.x_any, d.w_any, d.b_any, d.y_any,
                                                               d.strides, d.padding, d.padding),
                      engine, hint_of(p, algorithm));
        });
        if (!desc) return std::nullopt;
        return FilterRun{dnnl::convolution_backward_weights(*desc),
                         LayoutBridge(d.x_caller, desc->src_desc(), engine, Use::kRead),
                         LayoutBridge(p.y_chosen, desc->diff_dst_desc(), engine, Use::kRead),
                         LayoutBridge(d.w_plain, desc->diff_weights_desc(), engine, Use::kAccumulate),
                         bias ? LayoutBridge(d.b_plain, desc->diff_bias_desc(), engine, Use::kAccumulate)
                              : LayoutBridge(),
                         bias};
      },
      [&] {
        return [&dnn, x = sample_of(d.x_caller), g = sample_of(p.y_chosen), dw = sample_of(d.w_plain),
                db = sample_of(d.b_plain)](FilterRun& run) mutable {
          run.run(dnn, x.data(), g.data(), dw.data(), db.data());
        };
      });
  return *p.filter;
}

FusedConvPrimitives& primitives_for(OneDnn& dnn, const FusedConv& c, const Layout* x_layout) {
  const ConvShape& s = c.shape;
  const std::string key = fmt::format("fused conv {} {} {} {} {} {} {} {} bias {} relu {} masked {} blocked {} from {}",
                                      c.batch, s.channels, s.height, s.width, c.out_channels, s.kernel, s.stride,
                                      s.padding, c.bias, c.relu, c.dy_masked, c.blocked_output,
                                      x_layout ? x_layout->name() : "plain");
  return dnn.cached<FusedConvPrimitives>(key, [&] { return build(dnn, c, x_layout); });
}

}  // namespace

std::optional<Layout> fused_conv_output_layout(OneDnn& dnn, const FusedConv& c, const Layout* x_layout) {
  auto held = dnn.lock();
  return primitives_for(dnn, c, x_layout).y_layout;
}

void fused_conv_forward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* w,
                        const float* bias, float* y) {
  auto held = dnn.lock();
  primitives_for(dnn, c, x_layout).forward.run(dnn, x, w, bias, y);
}

void fused_conv_backward(OneDnn& dnn, const FusedConv& c, const Layout* x_layout, const float* x, const float* y,
                         const float* dy, const float* w, float* dw, float* db, float* dx) {
  auto held = dnn.lock();
  FusedConvPrimitives& p = primitives_for(dnn, c, x_layout);
  dnnl::stream& stream = dnn.stream();
  memory g = p.g_from_dy.bind(dy);
  p.g_from_dy.before(stream);
  if (p.relu_backward) {
    memory y_chosen = p.relu_y.bind(y);
    p.relu_y.before(stream);
    p.relu_backward->execute(stream, {{DNNL_ARG_DST, y_chosen}, {DNNL_ARG_DIFF_DST, g}, {DNNL_ARG_DIFF_SRC, p.relu_g}});
    g = p.relu_g;
  }
  stream.wait();
  const void* g_data = g.get_data_handle();
  if (dw != nullptr) filter_run(dnn, p).run(dnn, x, g_data, dw, db);
  if (dx != nullptr) data_run(dnn, p).run(dnn, w, g_data, dx);
}

}  // namespace paddle::kernels::onednn
