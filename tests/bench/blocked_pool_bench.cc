// Max pooling on the default CNN's two shapes (batch 64, 2x2 windows): oneDNN's pooling primitive
// on the blocked nChw16c layout, our channel-blocked kernels on the same layout (what the chain of
// kernels/blocked.h runs), and our plain kernels on NCHW (what ran before the chain). Forward
// (training, winners kept) and backward, microseconds per call, median of 50 after 5 warm-ups,
// on OMP_NUM_THREADS threads for oneDNN (ours run on one).
//   blocked_pool_bench   (prints one line per shape and implementation)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "kernels/pooling.h"

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

double median_us(const std::function<void()>& call) {
  std::vector<double> times;
  for (int i = 0; i < 55; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (i >= 5) times.push_back(us);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  namespace k = paddle::kernels;
  using dnnl::memory;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  struct Shape {
    int channels, side;
  };
  for (const Shape s : {Shape{16, 28}, Shape{32, 14}}) {
    const int batch = 64, out = s.side / 2, block = 16;
    const size_t in_count = static_cast<size_t>(batch) * s.channels * s.side * s.side;
    const size_t out_count = in_count / 4;
    std::vector<float> x(in_count), y(out_count), dy(out_count), dx(in_count);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (float& v : x) v = std::max(0.0f, uniform(rng));  // a ReLU's output, as in the CNN
    for (float& v : dy) v = uniform(rng);

    const memory::dims x_dims{batch, s.channels, s.side, s.side}, y_dims{batch, s.channels, out, out};
    const memory::desc x_desc(x_dims, memory::data_type::f32, memory::format_tag::aBcd16b);
    const memory::desc y_desc(y_dims, memory::data_type::f32, memory::format_tag::aBcd16b);
    const memory::dims two{2, 2}, zero{0, 0};
    const dnnl::pooling_forward::primitive_desc forward(
        dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::pooling_max, x_desc, y_desc,
                                    two, two, zero, zero),
        engine);
    const dnnl::pooling_backward::primitive_desc backward(
        dnnl::pooling_backward::desc(dnnl::algorithm::pooling_max, x_desc, y_desc, two, two, zero, zero), engine,
        forward);
    memory src(x_desc, engine, x.data()), dst(y_desc, engine, y.data()), ws(forward.workspace_desc(), engine);
    memory diff_dst(y_desc, engine, dy.data()), diff_src(x_desc, engine, dx.data());
    const dnnl::pooling_forward pool_forward(forward);
    const dnnl::pooling_backward pool_backward(backward);
    const double dnnl_forward = median_us([&] {
      pool_forward.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, ws}});
      stream.wait();
    });
    const double dnnl_backward = median_us([&] {
      pool_backward.execute(stream, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}, {DNNL_ARG_WORKSPACE, ws}});
      stream.wait();
    });

    std::vector<int32_t> winners(out_count);
    const int outer = batch * s.channels / block;
    const double ours_forward = median_us([&] {
      k::cpu::max_pool_forward_channel_blocked(x.data(), outer, block, s.side, s.side, 2, y.data(), winners.data());
    });
    const double ours_backward = median_us([&] {
      k::cpu::max_pool_backward_channel_blocked(dy.data(), winners.data(), outer, block, s.side, s.side, 2, dx.data());
    });

    const int planes = batch * s.channels;
    const double plain_forward = median_us(
        [&] { k::cpu::max_pool_forward(x.data(), planes, s.side, s.side, 2, 2, 0, y.data(), winners.data()); });
    const double plain_backward = median_us([&] {
      std::fill(dx.begin(), dx.end(), 0.0f);  // the plain backward adds into a cleared dx, as the layer does
      k::cpu::max_pool_backward(dy.data(), winners.data(), planes, s.side * s.side, out * out, dx.data());
    });

    const auto name = fmt::format("{}x{}x{}x{} -> {}x{}", batch, s.channels, s.side, s.side, out, out);
    fmt::print("{:22} oneDNN nChw16c  forward {:7.1f} us  backward {:7.1f} us\n", name, dnnl_forward, dnnl_backward);
    fmt::print("{:22} ours nChw16c    forward {:7.1f} us  backward {:7.1f} us\n", name, ours_forward, ours_backward);
    fmt::print("{:22} ours NCHW       forward {:7.1f} us  backward {:7.1f} us\n", name, plain_forward, plain_backward);
  }
  return 0;
#else
  fmt::print("blocked_pool_bench: this build has no oneDNN\n");
  return 0;
#endif
}
