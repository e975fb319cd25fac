#include "kernels/gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "kernels/onednn/kernel_choice.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

using dnnl::memory;

struct ProductShape {
  bool transpose_a, transpose_b;
  int m, n, k;
  bool accumulate;
};

void sgemm(const ProductShape& s, const float* a, const float* b, float* c) {
  const dnnl::status status =
      dnnl::sgemm(s.transpose_a ? 'T' : 'N', s.transpose_b ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, s.transpose_a ? s.m : s.k,
                  b, s.transpose_b ? s.k : s.n, s.accumulate ? 1.0f : 0.0f, c, s.n);
  if (status != dnnl::status::success)
    throw common::Error(fmt::format("oneDNN sgemm of [{}x{}] by [{}x{}] failed with status {}", s.m, s.k, s.k, s.n,
                                    static_cast<int>(status)));
}

// One way to run a matrix product: oneDNN's sgemm (its BLAS call, the default), or its matmul
// primitive, built for the shape, with the sum as a post-op where the product is added in.
struct ProductWay {
  std::optional<dnnl::matmul> matmul;  // none: sgemm
  memory a, b, c;

  void run(OneDnn& dnn, const ProductShape& s, const float* a_data, const float* b_data, float* c_data) {
    if (!matmul) return sgemm(s, a_data, b_data, c_data);
    a.set_data_handle(const_cast<float*>(a_data));
    b.set_data_handle(const_cast<float*>(b_data));
    c.set_data_handle(c_data);
    matmul->execute(dnn.stream(), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    dnn.stream().wait();
  }
};

std::optional<ProductWay> matmul_for(OneDnn& dnn, const ProductShape& s) {
  const auto f32 = memory::data_type::f32;
  const memory::desc a({s.m, s.k}, f32, s.transpose_a ? memory::dims{1, s.m} : memory::dims{s.k, 1});
  const memory::desc b({s.k, s.n}, f32, s.transpose_b ? memory::dims{1, s.k} : memory::dims{s.n, 1});
  const memory::desc c({s.m, s.n}, f32, memory::dims{s.n, 1});
  dnnl::primitive_attr attr;
  if (s.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  using Desc = dnnl::matmul::primitive_desc;
  const auto desc = if_implemented<Desc>([&] { return Desc(dnnl::matmul::desc(a, b, c), attr, dnn.engine()); });
  if (!desc) return std::nullopt;
  return ProductWay{dnnl::matmul(*desc), memory(a, dnn.engine(), nullptr), memory(b, dnn.engine(), nullptr),
                    memory(c, dnn.engine(), nullptr)};
}

// The way a matrix product shape runs (OneDnn::alternative()): sgemm, or matmul where it is
// told so or raced faster on scratch data. On the AMD EPYC, one thread, Linear(1568, 128)'s data
// gradient, [64x128] by [1568x128] transposed, took 305 us on sgemm and 240 on matmul.
ProductWay way_for(OneDnn& dnn, const ProductShape& s) {
  const bool try_matmul = dnn.alternative() == Alternative::kAlways || dnn.times_alternatives();
  std::optional<ProductWay> matmul = try_matmul ? matmul_for(dnn, s) : std::nullopt;
  if (!matmul) return ProductWay{};
  if (!dnn.times_alternatives()) return std::move(*matmul);
  const std::string what = fmt::format("matrix product [{}x{}]{} by [{}x{}]{}{}", s.transpose_a ? s.k : s.m,
                                       s.transpose_a ? s.m : s.k, s.transpose_a ? " transposed" : "",
                                       s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n,
                                       s.transpose_b ? " transposed" : "", s.accumulate ? ", added in" : "");
  ProductWay sgemm_way;
  const size_t way = dnn.decide(what, 2, [&] {
    std::vector<float> a(static_cast<size_t>(s.m) * s.k, 0.5f), b(static_cast<size_t>(s.k) * s.n, 0.25f),
        c(static_cast<size_t>(s.m) * s.n, 0.0f);
    const std::vector<double> us = race({[&] { sgemm_way.run(dnn, s, a.data(), b.data(), c.data()); },
                                         [&] { matmul->run(dnn, s, a.data(), b.data(), c.data()); }});
    return fastest_way({{"sgemm", us[0]}, {"matmul", us[1]}});
  });
  return way == 1 ? std::move(*matmul) : sgemm_way;
}

}  // namespace

void gemm(OneDnn& dnn, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b,
          float* c, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum; oneDNN takes no zero leading dimension
    if (!accumulate) std::fill(c, c + static_cast<size_t>(m) * n, 0.0f);
    return;
  }
  const ProductShape s{transpose_a, transpose_b, m, n, k, accumulate};
  auto held = dnn.lock();
  const std::string key = fmt::format("gemm {} {} {} {} {} {}", transpose_a, transpose_b, m, n, k, accumulate);
  dnn.cached<ProductWay>(key, [&] { return way_for(dnn, s); }).run(dnn, s, a, b, c);
}

}  // namespace paddle::kernels::onednn
