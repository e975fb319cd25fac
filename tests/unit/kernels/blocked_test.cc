// The blocked chain (kernels/blocked.h) against the plain CPU kernels it replaces: the
// Fashion-MNIST CNN's conv -> ReLU -> pool -> conv -> ReLU -> pool, forward and backward, with
// every activation between the first convolution and the last pooling left in oneDNN's layouts.
// Results equal the plain chain to within float rounding (relative 1e-5 of the largest
// magnitude), with the convolutions direct or Winograd's (whose transforms stay within that here).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "kernels/activation.h"
#include "kernels/blocked.h"
#include "kernels/conv.h"
#include "kernels/pooling.h"
#include "check_close.h"
#include "random_vector.h"

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
#include "kernels/onednn/kernel_choice.h"
#include "kernels/onednn/onednn.h"

namespace kernels = paddle::kernels;
namespace onednn = paddle::kernels::onednn;
using kernels::testing::check_close;
using kernels::testing::random_vector;

namespace {

// A blocked tensor's bytes as floats (padding included).
std::vector<float> blocked_buffer(const std::optional<kernels::Layout>& layout) {
  REQUIRE(layout.has_value());
  return std::vector<float>(layout->bytes() / sizeof(float));
}

std::vector<float> plain_of(onednn::OneDnn& dnn, const kernels::Layout& layout, const std::vector<float>& x,
                            size_t count) {
  std::vector<float> y(count);
  onednn::to_plain(dnn, layout, x.data(), y.data());
  return y;
}

// One conv(+bias, ReLU) -> 2x2 max pool stage, in both forms.
struct Stage {
  kernels::ConvShape shape;
  int out_channels;
};

// The chain both ways; with pool_applies_relu the pooling's backward pass applies ReLU's gradient
// and the convolution takes dy as it comes.
void check_chain(bool pool_applies_relu, onednn::Pick pick, onednn::Alternative convolution) {
  CAPTURE(pool_applies_relu);
  CAPTURE(static_cast<int>(pick));
  CAPTURE(static_cast<int>(convolution));
  onednn::OneDnn dnn(pick, convolution);
  const int batch = 8;
  const Stage stages[] = {{{1, 28, 28, 3, 1, 1}, 16}, {{16, 14, 14, 3, 1, 1}, 32}};
  unsigned seed = 100;

  // Forward, both ways. The plain chain keeps every activation; the blocked one its tensors.
  std::vector<float> x_plain = random_vector(static_cast<size_t>(batch) * 28 * 28, seed++);
  std::vector<float> x_blocked = x_plain;
  std::optional<kernels::Layout> x_layout;  // the first stage's input is plain
  struct Kept {
    std::vector<float> w, b, x_plain, y_plain, pooled_plain, x_blocked, y_blocked;
    std::optional<kernels::Layout> x_layout, y_layout, pooled_layout;
    std::vector<int32_t> argmax;
    std::vector<unsigned char> workspace;
    onednn::FusedConv conv;
    onednn::BlockedMaxPool pool;
  };
  std::vector<Kept> kept;
  for (const Stage& st : stages) {
    const kernels::ConvShape& s = st.shape;
    Kept k;
    k.w = random_vector(static_cast<size_t>(st.out_channels) * s.channels * 9, seed++);
    k.b = random_vector(static_cast<size_t>(st.out_channels), seed++);
    const int plane = s.out_height() * s.out_width();
    const size_t y_count = static_cast<size_t>(batch) * st.out_channels * plane;
    k.x_plain = x_plain;
    k.y_plain.resize(y_count);
    kernels::cpu::conv2d_forward(s, batch, st.out_channels, x_plain.data(), k.w.data(), k.y_plain.data());
    kernels::cpu::add_channel_bias(k.y_plain.data(), k.b.data(), batch, st.out_channels, plane);
    kernels::cpu::relu_forward(k.y_plain.data(), k.y_plain.data(), y_count);
    k.pooled_plain.resize(y_count / 4);
    k.argmax.resize(y_count / 4);
    kernels::cpu::max_pool_forward(k.y_plain.data(), batch * st.out_channels, s.out_height(), s.out_width(), 2, 2, 0,
                                   k.pooled_plain.data(), k.argmax.data());

    k.conv = onednn::FusedConv{s, batch, st.out_channels, true, true, true, pool_applies_relu};
    k.x_layout = x_layout;
    k.x_blocked = x_blocked;
    k.y_layout = onednn::fused_conv_output_layout(dnn, k.conv, x_layout ? &*x_layout : nullptr);
    k.y_blocked = blocked_buffer(k.y_layout);
    onednn::fused_conv_forward(dnn, k.conv, x_layout ? &*x_layout : nullptr, x_blocked.data(), k.w.data(), k.b.data(),
                               k.y_blocked.data());
    check_close(plain_of(dnn, *k.y_layout, k.y_blocked, y_count), k.y_plain, "convolution, bias and ReLU");
    k.pool =
        onednn::BlockedMaxPool{batch, st.out_channels, s.out_height(), s.out_width(), 2, 2, 0, true, pool_applies_relu};
    k.pooled_layout = onednn::max_pool_output_layout(dnn, k.pool, *k.y_layout);
    CHECK(k.pooled_layout->name().find(k.y_layout->name().substr(k.y_layout->name().find(' '))) != std::string::npos);
    std::vector<float> pooled = blocked_buffer(k.pooled_layout);
    k.workspace.resize(onednn::max_pool_workspace_bytes(dnn, k.pool, *k.y_layout));
    onednn::max_pool_forward(dnn, k.pool, *k.y_layout, k.y_blocked.data(), pooled.data(), k.workspace.data());
    check_close(plain_of(dnn, *k.pooled_layout, pooled, y_count / 4), k.pooled_plain, "max pooling");

    x_plain = k.pooled_plain;
    x_blocked = pooled;
    x_layout = k.pooled_layout;
    kept.push_back(std::move(k));
  }
  INFO("the chain's layouts: " << kept[0].y_layout->name() << ", " << kept[1].x_layout->name() << ", "
                               << kept[1].pooled_layout->name());

  // Backward from one loss gradient on the last pooled output, given plain to the plain chain
  // and reordered once into the last layout for the blocked one.
  std::vector<float> dy_plain = random_vector(x_plain.size(), seed++);
  std::vector<float> dy_blocked(x_layout->bytes() / sizeof(float));
  onednn::from_plain(dnn, *x_layout, dy_plain.data(), dy_blocked.data());
  for (int i = 1; i >= 0; --i) {
    Kept& k = kept[static_cast<size_t>(i)];
    const kernels::ConvShape& s = stages[i].shape;
    const int out = stages[i].out_channels, plane = s.out_height() * s.out_width();
    const size_t y_count = k.y_plain.size();
    std::vector<float> dpool_plain(y_count, 0.0f), dpool_blocked = blocked_buffer(k.y_layout);
    kernels::cpu::max_pool_backward(dy_plain.data(), k.argmax.data(), batch * out, plane, plane / 4,
                                    dpool_plain.data());
    onednn::max_pool_backward(dnn, k.pool, *k.y_layout, dy_blocked.data(), k.workspace.data(), dpool_blocked.data());
    // Where ReLU's output is 0, the two may route a tied maximum's gradient to different zeros;
    // ReLU's mask removes both, so compare after it.
    kernels::cpu::relu_backward(k.y_plain.data(), dpool_plain.data(), dpool_plain.data(), y_count);

    const std::vector<float> dw0 = random_vector(k.w.size(), seed++), db0 = random_vector(k.b.size(), seed++);
    std::vector<float> dw_plain = dw0, db_plain = db0, dw = dw0, db = db0;
    std::vector<float> dx_plain(k.x_plain.size());
    kernels::cpu::conv2d_backward_filter(s, batch, out, k.x_plain.data(), dpool_plain.data(), dw_plain.data());
    kernels::cpu::channel_bias_grad(dpool_plain.data(), db_plain.data(), batch, out, plane);
    kernels::cpu::conv2d_backward_data(s, batch, out, k.w.data(), dpool_plain.data(), dx_plain.data());

    std::vector<float> dx_blocked = k.x_layout ? blocked_buffer(k.x_layout) : std::vector<float>(k.x_plain.size());
    const kernels::Layout* x_lay = k.x_layout ? &*k.x_layout : nullptr;
    onednn::fused_conv_backward(dnn, k.conv, x_lay, k.x_blocked.data(), k.y_blocked.data(), dpool_blocked.data(),
                                k.w.data(), dw.data(), db.data(), dx_blocked.data());
    check_close(dw, dw_plain, "filter gradient, accumulated");
    check_close(db, db_plain, "bias gradient, accumulated");
    check_close(x_lay ? plain_of(dnn, *x_lay, dx_blocked, dx_plain.size()) : dx_blocked, dx_plain, "data gradient");
    dy_plain = dx_plain;
    dy_blocked = dx_blocked;
  }
}

}  // namespace

TEST_CASE("a conv-ReLU-pool chain kept in oneDNN's blocked layouts equals the plain kernels, forward and backward") {
  // The pooling on oneDNN's primitive, on our kernels, and on the faster of the two here; the
  // convolutions direct, Winograd's where oneDNN has it, and the faster here.
  for (const auto pick : {onednn::Pick::kLibrary, onednn::Pick::kOurs, onednn::Pick::kFaster})
    for (const auto convolution : {onednn::Alternative::kNever, onednn::Alternative::kAlways,
                                   onednn::Alternative::kTimed}) {
      check_chain(false, pick, convolution);
      check_chain(true, pick, convolution);  // the pooling applies ReLU's gradient
    }
}

TEST_CASE("max pooling on a channel-blocked layout runs the faster of ours and oneDNN's, timed at the shape's first use, "
          "and says so; PADDLE_CPU_KERNELS forces either") {
  const kernels::ConvShape s{1, 28, 28, 3, 1, 1};
  const onednn::FusedConv conv{s, 8, 16, true, true, true, false};
  const auto choices_after_pooling = [&](kernels::CpuKernels kernels) {
    const kernels::Context context(kernels);
    onednn::OneDnn& dnn = context.onednn();
    const auto layout = onednn::fused_conv_output_layout(dnn, conv, nullptr);
    REQUIRE(layout.has_value());
    const onednn::BlockedMaxPool pool{8, 16, 28, 28, 2, 2, 0, true, true};
    onednn::max_pool_output_layout(dnn, pool, *layout);
    onednn::max_pool_output_layout(dnn, pool, *layout);  // built once: one choice
    std::vector<std::string> pooling;
    for (const std::string& line : context.kernel_choices())
      if (line.starts_with("max pooling")) pooling.push_back(line);
    return pooling;
  };
  const std::vector<std::string> measured = choices_after_pooling(kernels::CpuKernels::kOneDnn);
  REQUIRE(measured.size() == 1);
  CHECK(measured[0].starts_with("max pooling 8x16x28x28 nChw16c, 2x2 windows with ReLU's gradient: "));
  CHECK((measured[0].find(": ours, ") != std::string::npos) != (measured[0].find(": oneDNN's, ") != std::string::npos));
  CHECK(measured[0].find("us forward + backward, against ") != std::string::npos);
  CHECK(choices_after_pooling(kernels::CpuKernels::kOneDnnOurs).empty());  // forced: nothing was timed
  CHECK(choices_after_pooling(kernels::CpuKernels::kOneDnnLibrary).empty());
  CHECK(kernels::cpu_kernels_from("onednn:ours") == kernels::CpuKernels::kOneDnnOurs);
  CHECK(kernels::cpu_kernels_from("onednn:library") == kernels::CpuKernels::kOneDnnLibrary);
}

namespace {

// Whether oneDNN has Winograd's algorithm for a forward convolution of `c` on this CPU.
bool winograd_implemented(const onednn::FusedConv& c) {
  using dnnl::memory;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const auto f32 = memory::data_type::f32;
  const kernels::ConvShape& s = c.shape;
  const memory::desc x({c.batch, s.channels, s.height, s.width}, f32, memory::format_tag::any),
      w({c.out_channels, s.channels, s.kernel, s.kernel}, f32, memory::format_tag::any),
      y({c.batch, c.out_channels, s.out_height(), s.out_width()}, f32, memory::format_tag::any);
  try {
    dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_winograd, x,
                                        w, y, {s.stride, s.stride}, {s.padding, s.padding}, {s.padding, s.padding}),
        engine);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("a convolution that oneDNN can run two ways runs the faster here for each direction, raced at its first "
          "use, and says so; a forced pick times nothing") {
  const int batch = 8, in = 16, out = 32, side = 14;
  const onednn::FusedConv conv{{in, side, side, 3, 1, 1}, batch, out, true, true, true, false};
  const auto x = random_vector(static_cast<size_t>(batch) * in * side * side, 51);
  const auto w = random_vector(static_cast<size_t>(out) * in * 9, 52), b = random_vector(out, 53);
  const auto run = [&](onednn::OneDnn& dnn, bool backward) {
    const auto layout = onednn::fused_conv_output_layout(dnn, conv, nullptr);
    REQUIRE(layout.has_value());
    std::vector<float> y(layout->bytes() / sizeof(float)), dw(w.size()), db(b.size()), dx(x.size());
    for (int call = 0; call < 3; ++call) {  // chosen at the first, once
      onednn::fused_conv_forward(dnn, conv, nullptr, x.data(), w.data(), b.data(), y.data());
      if (backward) {
        const std::vector<float> dy = y;
        onednn::fused_conv_backward(dnn, conv, nullptr, x.data(), y.data(), dy.data(), w.data(), dw.data(), db.data(),
                                    dx.data());
      }
    }
    return dnn.choices();
  };
  const std::string what = "convolution 8x16x14x14 nchw, 3x3 pad 1 to 32 channels, bias, ReLU, ";
  const auto check_line = [&](const std::string& line, const char* direction) {
    CAPTURE(line);
    CHECK(line.starts_with(what + direction + ": "));
    const bool direct = line.find(": direct, ") != std::string::npos;
    CHECK(direct != (line.find(": Winograd's, ") != std::string::npos));
    CHECK(line.find(direct ? " us, against Winograd's " : " us, against direct ") != std::string::npos);
    CHECK(line.ends_with(" us, timed here"));
  };

  onednn::OneDnn forward_only;  // evaluation's shapes: no gradient is timed
  const std::vector<std::string> forward_choices = run(forward_only, false);
  onednn::OneDnn trained;
  const std::vector<std::string> choices = run(trained, true);
  if (!winograd_implemented(conv)) {
    MESSAGE("oneDNN has no Winograd convolution on this CPU: one algorithm, nothing timed");
    CHECK(choices.empty());
  } else {
    REQUIRE(forward_choices.size() == 1);
    check_line(forward_choices[0], "forward");
    REQUIRE(choices.size() == 3);
    for (const char* direction : {"forward", "filter gradient", "data gradient"}) {
      const auto line = std::find_if(choices.begin(), choices.end(), [&](const std::string& l) {
        return l.starts_with(what + direction + ": ");
      });
      REQUIRE(line != choices.end());
      check_line(*line, direction);
    }
  }
  onednn::OneDnn forced(onednn::Pick::kLibrary);
  CHECK(run(forced, true).empty());
  onednn::OneDnn named(onednn::Pick::kFaster, onednn::Alternative::kAlways);
  CHECK(run(named, true).empty());

  // One algorithm only (a 1x1 window): nothing to time.
  const onednn::FusedConv pointwise{{in, side, side, 1, 1, 0}, batch, out, false, false, true, false};
  onednn::OneDnn one_way;
  onednn::fused_conv_output_layout(one_way, pointwise, nullptr);
  CHECK(one_way.choices().empty());
}

TEST_CASE("the fastest of several ways is chosen, the first among equals, and the words give every timing") {
  const onednn::Decision winograd = onednn::fastest_way({{"direct", 900.4}, {"Winograd's", 836}});
  CHECK(winograd.index == 1);
  CHECK(winograd.words == "Winograd's, 836 us, against direct 900 us");
  const onednn::Decision tie = onednn::fastest_way({{"direct", 5}, {"Winograd's", 5}, {"other", 4}});
  CHECK(tie.index == 2);
  CHECK(tie.words == "other, 4 us, against direct 5 us, Winograd's 5 us");
  CHECK(onednn::fastest_way({{"a", 3}, {"b", 3}}).index == 0);
  CHECK(onednn::fastest_way({{"alone", 7}}).words == "alone, 7 us");
}

TEST_CASE("a race warms each way, times its calls, and stops timing a clear loser and a lone leader") {
  // Each way's calls take the scripted times in turn; returns the ways in the order they ran.
  const auto run = [](onednn::Race& race, std::vector<std::vector<double>> script) {
    std::vector<size_t> ran, calls(script.size(), 0);
    while (!race.decided()) {
      const size_t way = race.next();
      ran.push_back(way);
      race.record(script[way][calls[way]++]);
    }
    return ran;
  };
  const double untimed = 1e9;  // a warm-up call's time counts for nothing
  onednn::Race close(3, 3);
  // Two close ways run every pass; one 25% slower than the best so far stops after its pass.
  CHECK(run(close, {{untimed, 10, 9, 11}, {untimed, 12, 8, 10}, {untimed, 30}}) ==
        std::vector<size_t>{0, 1, 2, 0, 1, 2, 0, 1, 0, 1});
  CHECK(close.best_us() == std::vector<double>{9, 8, 30});
  CHECK(close.next() == 1);  // the winner runs from now on
  close.record(1);
  CHECK(close.next() == 1);

  onednn::Race loser(2, 3);  // 12 > 1.25 x 8 after the second pass: out, and the leader alone wins
  CHECK(run(loser, {{untimed, 10, 8}, {untimed, 12, 12}}) == std::vector<size_t>{0, 1, 0, 1, 0, 1});
  CHECK(loser.next() == 0);
  onednn::Race clear(2, 3);  // a clear choice: two calls of each way
  CHECK(run(clear, {{untimed, 50}, {untimed, 5}}) == std::vector<size_t>{0, 1, 0, 1});
  CHECK(clear.next() == 1);
  onednn::Race alone(1, 3);
  CHECK(alone.decided());
  CHECK(alone.next() == 0);
}

TEST_CASE("a race on scratch calls gives each way's fastest call, a clear loser's after two calls") {
  std::vector<int> calls(2, 0);
  const std::vector<double> us = onednn::race({[&] { ++calls[0]; },
                                               [&] {
                                                 ++calls[1];
                                                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                               }});
  CHECK(us[1] >= 20000);
  CHECK(us[0] < us[1]);
  CHECK(calls[1] == 2);  // warmed, timed once, out
  CHECK(calls[0] >= 2);
}

TEST_CASE("the faster of two timings is chosen, and the line gives both") {
  const onednn::Decision ours = onednn::choose_faster({10, 20}, {40, 5});
  CHECK(ours.index == 0);
  CHECK(ours.words == "ours, 10 + 20 us forward + backward, against oneDNN's 40 + 5 us");
  const onednn::Decision library = onednn::choose_faster({50, 20}, {40, 5});
  CHECK(library.index == 1);
  CHECK(library.words == "oneDNN's, 40 + 5 us forward + backward, against ours 50 + 20 us");
  const onednn::OpTiming t = onednn::time_op([] {}, [] {}, 3);
  CHECK(t.forward_us >= 0);
  CHECK(t.total_us() < 1000);
}

TEST_CASE("a blocked chain's ends: plain output on request, and no data gradient where none is asked for") {
  const kernels::Context context;
  onednn::OneDnn& dnn = context.onednn();
  const kernels::ConvShape s{3, 9, 9, 3, 1, 1};
  const int batch = 2, out = 20;  // 20 channels: blocked layouts pad them to 32
  const auto x = random_vector(static_cast<size_t>(batch) * 3 * 81, 7), w = random_vector(out * 27, 8);
  const onednn::FusedConv plain_out{s, batch, out, false, false, false, false};
  CHECK_FALSE(onednn::fused_conv_output_layout(dnn, plain_out, nullptr).has_value());
  std::vector<float> y(static_cast<size_t>(batch) * out * 81), y_ref(y.size());
  onednn::fused_conv_forward(dnn, plain_out, nullptr, x.data(), w.data(), nullptr, y.data());
  kernels::cpu::conv2d_forward(s, batch, out, x.data(), w.data(), y_ref.data());
  check_close(y, y_ref, "plain output");

  const onednn::FusedConv blocked_out{s, batch, out, false, false, true, false};
  const auto layout = onednn::fused_conv_output_layout(dnn, blocked_out, nullptr);
  REQUIRE(layout.has_value());
  CHECK(layout->bytes() >= y.size() * sizeof(float));
  std::vector<float> dw(w.size(), 0.0f), dw_ref(w.size(), 0.0f), dy(layout->bytes() / sizeof(float));
  const auto dy_plain = random_vector(y.size(), 9);
  onednn::from_plain(dnn, *layout, dy_plain.data(), dy.data());
  onednn::fused_conv_backward(dnn, blocked_out, nullptr, x.data(), nullptr, dy.data(), w.data(), dw.data(), nullptr,
                              nullptr);
  kernels::cpu::conv2d_backward_filter(s, batch, out, x.data(), dy_plain.data(), dw_ref.data());
  check_close(dw, dw_ref, "filter gradient without a data gradient");
  std::vector<float> back(y.size());
  onednn::to_plain(dnn, *layout, dy.data(), back.data());
  CHECK(back == dy_plain);
}
#endif

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
TEST_CASE("blocked max pooling of an odd plane leaves the uncovered edge out and gives it no gradient") {
  const kernels::Context context;
  onednn::OneDnn& dnn = context.onednn();
  const int batch = 2, channels = 20, side = 7;  // 20 channels: padded to 32 when blocked
  const onednn::FusedConv conv{{3, side, side, 1, 1, 0}, batch, channels, false, false, true, false};
  const auto layout = onednn::fused_conv_output_layout(dnn, conv, nullptr);
  REQUIRE(layout.has_value());
  const size_t count = static_cast<size_t>(batch) * channels * side * side;
  const auto x_plain = random_vector(count, 31);
  std::vector<float> x(layout->bytes() / sizeof(float));
  onednn::from_plain(dnn, *layout, x_plain.data(), x.data());

  const onednn::BlockedMaxPool pool{batch, channels, side, side, 2, 2, 0, false, false};  // a plain output
  CHECK_FALSE(onednn::max_pool_output_layout(dnn, pool, *layout).has_value());
  std::vector<unsigned char> workspace(onednn::max_pool_workspace_bytes(dnn, pool, *layout));
  std::vector<float> y(static_cast<size_t>(batch) * channels * 9), y_ref(y.size());
  std::vector<int32_t> argmax(y.size());
  onednn::max_pool_forward(dnn, pool, *layout, x.data(), y.data(), workspace.data());
  kernels::cpu::max_pool_forward(x_plain.data(), batch * channels, side, side, 2, 2, 0, y_ref.data(), argmax.data());
  CHECK(y == y_ref);

  const auto dy = random_vector(y.size(), 32);
  std::vector<float> dx(x.size(), 7.0f), dx_ref(count, 0.0f);
  onednn::max_pool_backward(dnn, pool, *layout, dy.data(), workspace.data(), dx.data());
  kernels::cpu::max_pool_backward(dy.data(), argmax.data(), batch * channels, side * side, 9, dx_ref.data());
  CHECK(plain_of(dnn, *layout, dx, count) == dx_ref);  // the 7th row and column: 0, not 7
}
#endif

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
TEST_CASE("overlapping max-pool windows run on oneDNN's pooling, which also takes over a ReLU's gradient") {
  const kernels::Context context;
  onednn::OneDnn& dnn = context.onednn();
  const int batch = 2, channels = 16, side = 9, out_side = 5;  // 3x3 windows, stride 2, padding 1
  const kernels::ConvShape s{3, side, side, 3, 1, 1};
  const auto x = random_vector(static_cast<size_t>(batch) * 3 * side * side, 41);
  const auto w = random_vector(static_cast<size_t>(channels) * 27, 42);
  const onednn::FusedConv conv{s, batch, channels, false, true, true, true};
  const auto layout = onednn::fused_conv_output_layout(dnn, conv, nullptr);
  REQUIRE(layout.has_value());
  std::vector<float> y(layout->bytes() / sizeof(float));
  onednn::fused_conv_forward(dnn, conv, nullptr, x.data(), w.data(), nullptr, y.data());
  const size_t count = static_cast<size_t>(batch) * channels * side * side;
  const std::vector<float> y_plain = plain_of(dnn, *layout, y, count);

  const onednn::BlockedMaxPool pool{batch, channels, side, side, 3, 2, 1, false, true};
  std::vector<unsigned char> workspace(onednn::max_pool_workspace_bytes(dnn, pool, *layout));
  std::vector<float> pooled(static_cast<size_t>(batch) * channels * out_side * out_side), pooled_ref(pooled.size());
  std::vector<int32_t> argmax(pooled.size());
  onednn::max_pool_forward(dnn, pool, *layout, y.data(), pooled.data(), workspace.data());
  kernels::cpu::max_pool_forward(y_plain.data(), batch * channels, side, side, 3, 2, 1, pooled_ref.data(),
                                 argmax.data());
  CHECK(pooled == pooled_ref);

  const auto dy = random_vector(pooled.size(), 43);
  std::vector<float> dx(y.size()), dx_ref(count, 0.0f);
  onednn::max_pool_backward(dnn, pool, *layout, dy.data(), workspace.data(), dx.data());
  kernels::cpu::max_pool_backward(dy.data(), argmax.data(), batch * channels, side * side, out_side * out_side,
                                  dx_ref.data());
  kernels::cpu::relu_backward(y_plain.data(), dx_ref.data(), dx_ref.data(), count);
  const auto got = plain_of(dnn, *layout, dx, count);
  // Tied maxima (ReLU's zeros) may be routed differently; ReLU's gradient removes both.
  check_close(got, dx_ref, "pooling and ReLU gradient");
}
#endif
