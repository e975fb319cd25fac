// Each CUDA half of kernels/<family>.h against its CPU half on random data, called directly and
// through the dispatch on a kernels::Context. Without a CUDA device the whole test reports a skip
// (exit 77). One file for every family, so that a GPU machine's short loan runs them in one call.

#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/autocast_conv.h"
#include "kernels/autocast_gemm.h"
#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/cosine.h"
#include "kernels/cuda/handles.h"
#include "kernels/elementwise.h"
#include "kernels/embedding.h"
#include "kernels/gemm.h"
#include "kernels/optimizer_update.h"
#include "kernels/pooling.h"
#include "kernels/unscale.h"
#include "tests/unit/kernels/random_vector.h"

namespace kernels = paddle::kernels;
namespace cpu = paddle::kernels::cpu;
namespace gpu = paddle::kernels::cuda;
using paddle::kernels::testing::random_vector;

namespace {

// A device copy of a host vector, copied back with host().
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : size_(host.size()) {
    cudaMalloc(reinterpret_cast<void**>(&ptr_), size_ * sizeof(T));
    cudaMemcpy(ptr_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  T* get() { return ptr_; }
  std::vector<T> host() const {
    std::vector<T> out(size_);
    cudaMemcpy(out.data(), ptr_, size_ * sizeof(T), cudaMemcpyDeviceToHost);
    return out;
  }

 private:
  T* ptr_ = nullptr;
  size_t size_;
};

void expect_close(const std::vector<float>& gpu_result, const std::vector<float>& cpu_result, double tolerance = 1e-4) {
  REQUIRE(gpu_result.size() == cpu_result.size());
  for (size_t i = 0; i < cpu_result.size(); ++i) {
    INFO("element " << i);
    CHECK(gpu_result[i] == doctest::Approx(cpu_result[i]).epsilon(tolerance).scale(1.0));
  }
}


// Autocast convolution against its CPU twin. Both round the inputs to the 16-bit type and sum
// exact products in float32, in different orders, then round the result to 16 bits; so an
// element may differ by an ulp of the 16-bit type where the two sums straddle a rounding
// boundary, and more where cuDNN picks a transform algorithm (Winograd, FFT) whose error scales
// with the output's magnitude. Tolerance per element: 2 ulps of the element plus 4 ulps of the
// largest |element|, an ulp being 2^-10 relative for float16 and 2^-7 for bfloat16: at most
// about 0.6% of the output's range in float16 and 4.7% in bfloat16, where a wrong layout or
// algorithm errs by the whole range.
void expect_within_half_ulps(const std::vector<float>& gpu_result, const std::vector<float>& twin,
                             kernels::DType half, const char* what) {
  REQUIRE(gpu_result.size() == twin.size());
  const double ulp = half == kernels::DType::kFloat16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
  double largest = 0;
  for (float v : twin) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  double worst = 0;  // the largest |difference| / tolerance
  size_t outside = 0, worst_at = 0;
  for (size_t i = 0; i < twin.size(); ++i) {
    const double tolerance = 2 * ulp * std::fabs(twin[i]) + 4 * ulp * largest;
    const double ratio = std::fabs(static_cast<double>(gpu_result[i]) - twin[i]) / tolerance;
    if (ratio > 1) ++outside;
    if (ratio > worst) worst = ratio, worst_at = i;
  }
  const std::string label = std::string(what) + (half == kernels::DType::kFloat16 ? " float16" : " bfloat16");
  MESSAGE(label << ": worst difference "
                << worst << " of its tolerance (element " << worst_at << ", gpu " << gpu_result[worst_at] << ", twin "
                << twin[worst_at] << "), max |twin| " << largest);
  CHECK(largest > 0);
  CHECK(outside == 0);
}

}  // namespace

TEST_CASE("gemm, every transpose combination, with and without accumulation") {
  gpu::Handles h;
  const int m = 7, n = 5, k = 9;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool acc : {false, true}) {
        auto a = random_vector(m * k, 1), b = random_vector(k * n, 2), c = random_vector(m * n, 3);
        auto expected = c;
        cpu::gemm(ta, tb, m, n, k, a.data(), b.data(), expected.data(), acc);
        DeviceBuffer<float> da(a), db(b), dc(c);
        gpu::gemm(h, ta, tb, m, n, k, da.get(), db.get(), dc.get(), acc);
        h.synchronize();
        expect_close(dc.host(), expected);
      }
}

TEST_CASE("bias rows and their gradient") {
  gpu::Handles h;
  auto y = random_vector(6 * 4, 4), bias = random_vector(4, 5), db = random_vector(4, 6);
  auto y_cpu = y, db_cpu = db;
  cpu::add_bias_rows(y_cpu.data(), bias.data(), 6, 4);
  cpu::bias_grad_rows(y.data(), db_cpu.data(), 6, 4);
  DeviceBuffer<float> dy(y), dbias(bias), ddb(db);
  gpu::bias_grad_rows(h, dy.get(), ddb.get(), 6, 4);
  gpu::add_bias_rows(h, dy.get(), dbias.get(), 6, 4);
  h.synchronize();
  expect_close(dy.host(), y_cpu);
  expect_close(ddb.host(), db_cpu);
}

TEST_CASE("ReLU forward and backward") {
  gpu::Handles h;
  auto x = random_vector(1000, 7), dy = random_vector(1000, 8);
  std::vector<float> y(1000), dx(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = x[i] > 0 ? x[i] : 0;
    dx[i] = y[i] > 0 ? dy[i] : 0;
  }
  DeviceBuffer<float> dx_in(x), dy_out(std::vector<float>(1000)), ddy(dy), ddx(std::vector<float>(1000));
  gpu::relu_forward(h, dx_in.get(), dy_out.get(), 1000);
  gpu::relu_backward(h, dy_out.get(), ddy.get(), ddx.get(), 1000);
  h.synchronize();
  expect_close(dy_out.host(), y);
  expect_close(ddx.host(), dx);
}

TEST_CASE("tanh forward and backward through the dispatch match the CPU context") {
  const kernels::Context device(0, false);
  auto x = random_vector(1000, 31), dy = random_vector(1000, 32);
  std::vector<float> y(1000), dx(1000);
  kernels::tanh_forward(kernels::Context::host(), x.data(), y.data(), 1000);
  kernels::tanh_backward(kernels::Context::host(), y.data(), dy.data(), dx.data(), 1000);
  DeviceBuffer<float> gx(x), gy(std::vector<float>(1000)), gdy(dy), gdx(std::vector<float>(1000));
  kernels::tanh_forward(device, gx.get(), gy.get(), 1000);
  kernels::tanh_backward(device, gy.get(), gdy.get(), gdx.get(), 1000);
  device.synchronize();
  expect_close(gy.host(), y);
  expect_close(gdx.host(), dx);
}

TEST_CASE("cosine forward and backward, a zero row included, match the CPU half") {
  const kernels::Context device(0, false);
  const size_t n = 37;  // not a whole number of warps per block
  const int d = 200;
  auto a = random_vector(n * d, 33), b = random_vector(n * d, 34), dy = random_vector(n, 35);
  std::fill_n(a.begin() + 5 * d, d, 0.0f);
  std::vector<float> y(n), saved(3 * n), da(n * d), db(n * d);
  cpu::cosine_forward(a.data(), b.data(), n, d, 5.0f, y.data(), saved.data());
  cpu::cosine_backward(a.data(), b.data(), saved.data(), dy.data(), n, d, 5.0f, da.data(), db.data());
  DeviceBuffer<float> ga(a), gb(b), gdy(dy), gy(std::vector<float>(n, 0.0f)), gsaved(std::vector<float>(3 * n)),
      gda(std::vector<float>(n * d)), gdb(std::vector<float>(n * d));
  kernels::cosine_forward(device, ga.get(), gb.get(), n, d, 5.0f, gy.get(), gsaved.get());
  kernels::cosine_backward(device, ga.get(), gb.get(), gsaved.get(), gdy.get(), n, d, 5.0f, gda.get(), gdb.get());
  device.synchronize();
  expect_close(gy.host(), y);
  expect_close(gsaved.host(), saved);
  expect_close(gda.host(), da);
  expect_close(gdb.host(), db);
}

TEST_CASE("bag mean forward and backward, rows of padding included, match the CPU half") {
  const kernels::Context device(0, false);
  const size_t rows = 50;
  const int slots = 4, dim = 8;
  std::mt19937 rng(36);
  std::uniform_int_distribution<int64_t> id(0, 2);  // a third of the slots are padding
  std::vector<int64_t> ids(rows * slots);
  for (auto& i : ids) i = id(rng);
  std::fill_n(ids.begin() + 7 * slots, slots, 0);
  auto embedded = random_vector(rows * slots * dim, 37), dy = random_vector(rows * dim, 38);
  std::vector<float> weights(rows * slots), y(rows * dim), dembedded(rows * slots * dim);
  cpu::bag_mean_forward(ids.data(), embedded.data(), rows, slots, dim, weights.data(), y.data());
  cpu::bag_mean_backward(weights.data(), dy.data(), rows, slots, dim, dembedded.data());
  DeviceBuffer<int64_t> gids(ids);
  DeviceBuffer<float> gembedded(embedded), gdy(dy), gweights(std::vector<float>(weights.size())),
      gy(std::vector<float>(y.size())), gdembedded(std::vector<float>(dembedded.size()));
  kernels::bag_mean_forward(device, gids.get(), gembedded.get(), rows, slots, dim, gweights.get(), gy.get());
  kernels::bag_mean_backward(device, gweights.get(), gdy.get(), rows, slots, dim, gdembedded.get());
  device.synchronize();
  expect_close(gweights.host(), weights);
  expect_close(gy.host(), y);
  expect_close(gdembedded.host(), dembedded);
}

TEST_CASE("copy_columns slices and concatenates column blocks on the device as on the CPU") {
  const kernels::Context device(0, false);
  const size_t rows = 9, width = 13;
  auto x = random_vector(rows * width, 39);
  std::vector<float> block(rows * 4), wide(rows * 6, 0.0f);
  kernels::copy_columns(kernels::Context::host(), block.data(), 4, x.data() + 3, width, rows, 4);
  kernels::copy_columns(kernels::Context::host(), wide.data() + 2, 6, block.data(), 4, rows, 4);
  DeviceBuffer<float> gx(x), gblock(std::vector<float>(block.size())), gwide(std::vector<float>(wide.size()));
  kernels::copy_columns(device, gblock.get(), 4, gx.get() + 3, width, rows, 4);
  kernels::copy_columns(device, gwide.get() + 2, 6, gblock.get(), 4, rows, 4);
  device.synchronize();
  CHECK(gblock.host() == block);
  CHECK(gwide.host() == wide);
}

TEST_CASE("convolution forward, backward data and backward filter match im2col + GEMM") {
  gpu::Handles h;
  const kernels::ConvShape s{3, 9, 9, 3, 2, 1};
  const int batch = 2, out = 4, rows = s.channels * s.kernel * s.kernel, positions = s.out_height() * s.out_width();
  const int image = s.channels * s.height * s.width;
  auto x = random_vector(batch * image, 9), w = random_vector(out * rows, 10), dy = random_vector(batch * out * positions, 11);
  std::vector<float> y(batch * out * positions), dx(batch * image), dw(out * rows, 0.0f);
  cpu::conv2d_forward(s, batch, out, x.data(), w.data(), y.data());
  cpu::conv2d_backward_filter(s, batch, out, x.data(), dy.data(), dw.data());
  cpu::conv2d_backward_data(s, batch, out, w.data(), dy.data(), dx.data());
  DeviceBuffer<float> gx(x), gw(w), gy(std::vector<float>(y.size())), gdy(dy), gdx(std::vector<float>(dx.size())),
      gdw(std::vector<float>(dw.size(), 0.0f));
  gpu::conv2d_forward(h, s, batch, out, gx.get(), gw.get(), gy.get());
  gpu::conv2d_backward_data(h, s, batch, out, gw.get(), gdy.get(), gdx.get());
  gpu::conv2d_backward_filter(h, s, batch, out, gx.get(), gdy.get(), gdw.get());
  h.synchronize();
  expect_close(gy.host(), y, 1e-3);
  expect_close(gdx.host(), dx, 1e-3);
  expect_close(gdw.host(), dw, 1e-3);
}

TEST_CASE("channel bias and its gradient") {
  gpu::Handles h;
  const int batch = 2, channels = 3, plane = 5;
  auto y = random_vector(batch * channels * plane, 12), bias = random_vector(channels, 13);
  auto expected = y;
  std::vector<float> db(channels, 0.0f);
  for (int b = 0; b < batch; ++b)
    for (int c = 0; c < channels; ++c)
      for (int p = 0; p < plane; ++p) {
        expected[(b * channels + c) * plane + p] += bias[c];
        db[c] += y[(b * channels + c) * plane + p];
      }
  DeviceBuffer<float> gy(y), gb(bias), gdb(std::vector<float>(channels, 0.0f));
  gpu::channel_bias_grad(h, gy.get(), gdb.get(), batch, channels, plane);
  gpu::add_channel_bias(h, gy.get(), gb.get(), batch, channels, plane);
  h.synchronize();
  expect_close(gy.host(), expected);
  expect_close(gdb.host(), db);
}

TEST_CASE("max and average pooling, forward and backward") {
  gpu::Handles h;
  const int planes = 6, height = 7, width = 7;
  auto x = random_vector(planes * height * width, 14);
  for (auto [kernel, stride, padding] : {std::tuple{2, 2, 0}, std::tuple{3, 2, 1}}) {
    const int ho = (height + 2 * padding - kernel) / stride + 1, wo = (width + 2 * padding - kernel) / stride + 1;
    std::vector<float> y(planes * ho * wo), dx(planes * height * width, 0.0f);
    std::vector<int32_t> argmax(y.size());
    auto dy = random_vector(y.size(), 15);
    cpu::max_pool_forward(x.data(), planes, height, width, kernel, stride, padding, y.data(), argmax.data());
    cpu::max_pool_backward(dy.data(), argmax.data(), planes, height * width, ho * wo, dx.data());
    DeviceBuffer<float> gx(x), gy(std::vector<float>(y.size())), gdy(dy), gdx(std::vector<float>(dx.size(), 0.0f));
    DeviceBuffer<int32_t> gargmax(std::vector<int32_t>(y.size()));
    gpu::max_pool_forward(h, gx.get(), planes, height, width, kernel, stride, padding, gy.get(), gargmax.get());
    gpu::max_pool_backward(h, gdy.get(), gargmax.get(), planes, height * width, ho * wo, gdx.get());
    h.synchronize();
    expect_close(gy.host(), y);
    CHECK(gargmax.host() == argmax);
    expect_close(gdx.host(), dx);
  }
  const int ho = 3, wo = 3;
  std::vector<float> y(planes * ho * wo), dx(planes * height * width, 0.0f);
  auto dy = random_vector(y.size(), 16);
  cpu::avg_pool_forward(x.data(), planes, height, width, 2, 2, y.data());
  cpu::avg_pool_backward(dy.data(), planes, height, width, 2, 2, dx.data());
  DeviceBuffer<float> gx(x), gy(std::vector<float>(y.size())), gdy(dy), gdx(std::vector<float>(dx.size(), 0.0f));
  gpu::avg_pool_forward(h, gx.get(), planes, height, width, 2, 2, gy.get());
  gpu::avg_pool_backward(h, gdy.get(), planes, height, width, 2, 2, gdx.get());
  h.synchronize();
  expect_close(gy.host(), y);
  expect_close(gdx.host(), dx);
}

TEST_CASE("momentum update matches the CPU optimizer's rule") {
  gpu::Handles h;
  auto w = random_vector(100, 17), g = random_vector(100, 18), v = random_vector(100, 19);
  auto w_cpu = w, v_cpu = v;
  cpu::momentum_update(w_cpu.data(), g.data(), v_cpu.data(), 100, 0.1f, 0.9f, 1e-4f);
  DeviceBuffer<float> gw(w), gg(g), gv(v);
  gpu::momentum_update(h, gw.get(), gg.get(), gv.get(), 100, 0.1f, 0.9f, 1e-4f);
  h.synchronize();
  expect_close(gw.host(), w_cpu);
  expect_close(gv.host(), v_cpu);
}

TEST_CASE("Adam, Adagrad and SGD through the dispatch match the CPU context") {
  const kernels::Context device(0, false);
  REQUIRE(device.is_cuda());
  auto w = random_vector(100, 20), g = random_vector(100, 21), m = random_vector(100, 22);
  std::vector<float> v(100, 0.5f);
  auto w_cpu = w, m_cpu = m, v_cpu = v;
  kernels::adam_update(kernels::Context::host(), w_cpu.data(), g.data(), m_cpu.data(), v_cpu.data(), 100, 0.01f, 0.9f,
                       0.999f, 1e-8f, 1e-4f);
  kernels::adagrad_update(kernels::Context::host(), w_cpu.data(), g.data(), v_cpu.data(), 100, 0.01f, 1e-6f, 1e-4f);
  kernels::sgd_update(kernels::Context::host(), w_cpu.data(), g.data(), 100, 0.01f, 1e-4f);
  DeviceBuffer<float> gw(w), gg(g), gm(m), gv(v);
  kernels::adam_update(device, gw.get(), gg.get(), gm.get(), gv.get(), 100, 0.01f, 0.9f, 0.999f, 1e-8f, 1e-4f);
  kernels::adagrad_update(device, gw.get(), gg.get(), gv.get(), 100, 0.01f, 1e-6f, 1e-4f);
  kernels::sgd_update(device, gw.get(), gg.get(), 100, 0.01f, 1e-4f);
  device.synchronize();
  expect_close(gw.host(), w_cpu);
  expect_close(gm.host(), m_cpu);
  expect_close(gv.host(), v_cpu);
}

TEST_CASE("add_relu and add_in_place through the dispatch match the CPU context") {
  const kernels::Context device(0, false);
  auto a = random_vector(300, 23), b = random_vector(300, 24);
  auto y_cpu = a, sum_cpu = a;
  kernels::add_relu(kernels::Context::host(), a.data(), b.data(), y_cpu.data(), 300);
  kernels::add_in_place(kernels::Context::host(), sum_cpu.data(), b.data(), 300);
  DeviceBuffer<float> ga(a), gb(b), gy(std::vector<float>(300)), gsum(a);
  kernels::add_relu(device, ga.get(), gb.get(), gy.get(), 300);
  kernels::add_in_place(device, gsum.get(), gb.get(), 300);
  device.synchronize();
  expect_close(gy.host(), y_cpu);
  expect_close(gsum.host(), sum_cpu);
}

TEST_CASE("batch normalization: training forward and backward match the CPU half") {
  // The running variance is left out: the CPU half keeps the biased batch variance, cuDNN the
  // unbiased one.
  const kernels::Context device(0, false);
  const kernels::BatchNormShape s{3, 2, 4, 5};
  const size_t n = 3 * 2 * 4 * 5;
  auto x = random_vector(n, 25), dy = random_vector(n, 26), scale = random_vector(2, 27), shift = random_vector(2, 28);
  std::vector<float> y(n), dx(n), mean(2, 0.0f), var(2, 1.0f), saved_mean(2), saved_inv_std(2), dscale(2, 0.0f),
      dshift(2, 0.0f);
  const float epsilon = 1e-3f;
  kernels::batch_norm_forward_training(kernels::Context::host(), s, x.data(), y.data(), scale.data(), shift.data(),
                                       mean.data(), var.data(), saved_mean.data(), saved_inv_std.data(), 0.9f, epsilon);
  kernels::batch_norm_backward(kernels::Context::host(), s, x.data(), dy.data(), scale.data(), saved_mean.data(),
                               saved_inv_std.data(), dx.data(), dscale.data(), dshift.data(), epsilon);
  const std::vector<float> zeros(n, 0.0f);
  DeviceBuffer<float> gx(x), gy(zeros), gscale(scale), gshift(shift), gmean(std::vector<float>(2, 0.0f)),
      gvar(std::vector<float>(2, 1.0f)), gsaved_mean(std::vector<float>(2)), gsaved_inv_std(std::vector<float>(2)),
      gdy(dy), gdx(zeros), gdscale(std::vector<float>(2, 0.0f)), gdshift(std::vector<float>(2, 0.0f));
  kernels::batch_norm_forward_training(device, s, gx.get(), gy.get(), gscale.get(), gshift.get(), gmean.get(),
                                       gvar.get(), gsaved_mean.get(), gsaved_inv_std.get(), 0.9f, epsilon);
  kernels::batch_norm_backward(device, s, gx.get(), gdy.get(), gscale.get(), gsaved_mean.get(), gsaved_inv_std.get(),
                               gdx.get(), gdscale.get(), gdshift.get(), epsilon);
  device.synchronize();
  expect_close(gy.host(), y, 1e-3);
  expect_close(gmean.host(), mean, 1e-3);
  expect_close(gsaved_mean.host(), saved_mean, 1e-3);
  expect_close(gsaved_inv_std.host(), saved_inv_std, 1e-3);
  expect_close(gdx.host(), dx, 1e-3);
  expect_close(gdscale.host(), dscale, 1e-3);
  expect_close(gdshift.host(), dshift, 1e-3);
}

TEST_CASE("embedding rows, an id outside the vocabulary, and the gradient of repeated ids") {
  const kernels::Context device(0, false);
  const int dim = 4;
  const int64_t vocabulary = 6;
  auto table = random_vector(vocabulary * dim, 29), dy = random_vector(5 * dim, 30);
  const std::vector<int64_t> ids = {3, 0, 3, 5, 1}, bad = {2, 6, 1};
  std::vector<float> y(5 * dim), dtable(vocabulary * dim, 0.0f);
  REQUIRE(kernels::embedding_forward(kernels::Context::host(), table.data(), ids.data(), 5, dim, vocabulary,
                                     y.data()) == -1);
  kernels::embedding_backward(kernels::Context::host(), ids.data(), 5, dim, dy.data(), dtable.data());
  DeviceBuffer<float> gtable(table), gy(std::vector<float>(5 * dim)), gdy(dy), gdtable(std::vector<float>(dtable.size()));
  DeviceBuffer<int64_t> gids(ids), gbad(bad);
  CHECK(kernels::embedding_forward(device, gtable.get(), gids.get(), 5, dim, vocabulary, gy.get()) == -1);
  CHECK(kernels::embedding_forward(device, gtable.get(), gbad.get(), 3, dim, vocabulary, gy.get()) == 6);
  kernels::embedding_forward(device, gtable.get(), gids.get(), 5, dim, vocabulary, gy.get());
  kernels::embedding_backward(device, gids.get(), 5, dim, gdy.get(), gdtable.get());
  device.synchronize();
  expect_close(gy.host(), y);
  expect_close(gdtable.host(), dtable);
}

TEST_CASE("fused unscale and inf/NaN check over many tensors, in one call, matches the CPU half") {
  const kernels::Context device(0, false);
  // More tensors than one launch's table holds, of sizes from empty to several blocks' worth.
  std::vector<std::vector<float>> host;
  for (size_t t = 0; t < 1100; ++t) host.push_back(random_vector(t % 7 == 0 ? 0 : (t * 37) % 3000 + 1, 100 + t));
  for (const float factor : {1.0f / 65536, 0.5f})
    for (const int poison : {-1, 0, 1099}) {  // -1: every value finite
      auto cpu_data = host;
      if (poison >= 0) cpu_data[static_cast<size_t>(poison)].assign(5, std::numeric_limits<float>::quiet_NaN());
      std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
      std::vector<kernels::TensorSlice> cpu_slices, gpu_slices;
      for (auto& v : cpu_data) {
        buffers.push_back(std::make_unique<DeviceBuffer<float>>(v));
        cpu_slices.push_back({v.data(), v.size()});
        gpu_slices.push_back({buffers.back()->get(), v.size()});
      }
      const bool cpu_found = kernels::scale_and_check_finite(kernels::Context::host(), cpu_slices.data(),
                                                             cpu_slices.size(), factor);
      const bool gpu_found = kernels::scale_and_check_finite(device, gpu_slices.data(), gpu_slices.size(), factor);
      INFO("factor " << factor << ", poisoned tensor " << poison);
      CHECK(gpu_found == (poison >= 0));
      CHECK(cpu_found == gpu_found);
      for (size_t t = 0; t < cpu_data.size(); t += 97) {
        if (static_cast<int>(t) == poison) continue;
        CHECK(buffers[t]->host() == cpu_data[t]);  // one multiplication each: bit-identical
      }
    }
}

TEST_CASE("autocast GEMM on tensor cores matches its CPU twin, float16 and bfloat16, every transpose") {
  // The twin rounds the operands the same way; only the summation order differs, so the tolerance
  // is float32's over k = 96 terms of magnitude <= 1, not a 16-bit one.
  const int m = 33, n = 17, k = 96;
  for (kernels::DType half : {kernels::DType::kFloat16, kernels::DType::kBFloat16})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          auto a = random_vector(m * k, 51), b = random_vector(k * n, 52), c = random_vector(m * n, 53);
          auto expected = c;
          cpu::autocast_gemm(half, ta, tb, m, n, k, a.data(), b.data(), expected.data(), acc);
          DeviceBuffer<float> da(a), db(b), dc(c);
          gpu::Handles h;
          gpu::autocast_gemm(h, half, ta, tb, m, n, k, da.get(), db.get(), dc.get(), acc);
          h.synchronize();
          INFO("bfloat16 " << (half == kernels::DType::kBFloat16) << " ta " << ta << " tb " << tb);
          expect_close(dc.host(), expected, 1e-4);
        }
}

TEST_CASE("autocast convolution in 16 bits on cuDNN matches its CPU twin: forward, backward data, backward filter") {
  struct Case {
    kernels::ConvShape shape;
    int batch, out;
  };
  const Case cases[] = {
      {{3, 32, 32, 7, 2, 3}, 2, 16},   // ResNet's stem: 7x7, stride 2
      {{16, 14, 14, 3, 1, 1}, 3, 24},  // 3x3, stride 1
      {{8, 15, 15, 3, 2, 1}, 2, 8},    // 3x3, stride 2, odd size
      {{32, 7, 7, 1, 1, 0}, 4, 64},    // 1x1 bottleneck
      {{16, 8, 8, 1, 2, 0}, 2, 32},    // 1x1, stride 2 (projection shortcut)
      {{40, 9, 9, 3, 1, 1}, 2, 72},    // channels and positions over one 32x32 transpose tile
  };
  for (kernels::DType half : {kernels::DType::kFloat16, kernels::DType::kBFloat16})
    for (const Case& c : cases) {
      const kernels::ConvShape& s = c.shape;
      const int rows = s.channels * s.kernel * s.kernel, positions = s.out_height() * s.out_width();
      const int image = s.channels * s.height * s.width;
      auto x = random_vector(c.batch * image, 61), w = random_vector(c.out * rows, 62),
           dy = random_vector(c.batch * c.out * positions, 63), dw = random_vector(c.out * rows, 64);
      std::vector<float> y(c.batch * c.out * positions), dx(c.batch * image), dw_sum = dw;
      cpu::autocast_conv2d_forward(half, s, c.batch, c.out, x.data(), w.data(), y.data());
      cpu::autocast_conv2d_backward_data(half, s, c.batch, c.out, w.data(), dy.data(), dx.data());
      cpu::autocast_conv2d_backward_filter(half, s, c.batch, c.out, x.data(), dy.data(), dw_sum.data());
      gpu::Handles h;
      DeviceBuffer<float> gx(x), gw(w), gy(std::vector<float>(y.size())), gdy(dy), gdx(std::vector<float>(dx.size())),
          gdw(dw);
      gpu::autocast_conv2d_forward(h, half, s, c.batch, c.out, gx.get(), gw.get(), gy.get());
      gpu::autocast_conv2d_backward_data(h, half, s, c.batch, c.out, gw.get(), gdy.get(), gdx.get());
      gpu::autocast_conv2d_backward_filter(h, half, s, c.batch, c.out, gx.get(), gdy.get(), gdw.get());
      h.synchronize();
      INFO("C " << s.channels << " H " << s.height << " k " << s.kernel << " stride " << s.stride << " out " << c.out);
      expect_within_half_ulps(gy.host(), y, half, "forward");
      expect_within_half_ulps(gdx.host(), dx, half, "backward data");
      // dw accumulated onto a random start: the filter gradient adds to it, as the layer needs.
      std::vector<float> got = gdw.host(), added(dw.size()), twin_added(dw.size());
      for (size_t i = 0; i < dw.size(); ++i) added[i] = got[i] - dw[i], twin_added[i] = dw_sum[i] - dw[i];
      expect_within_half_ulps(added, twin_added, half, "backward filter");
    }
}

int main(int argc, char** argv) {
  if (gpu::device_count() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
