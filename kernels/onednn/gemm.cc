#include "kernels/gemm.h"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "common/error.h"

namespace paddle::kernels::onednn {

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum; oneDNN takes no zero leading dimension
    if (!accumulate) std::fill(c, c + static_cast<size_t>(m) * n, 0.0f);
    return;
  }
  const dnnl::status status =
      dnnl::sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, transpose_a ? m : k, b,
                  transpose_b ? k : n, accumulate ? 1.0f : 0.0f, c, n);
  if (status != dnnl::status::success)
    throw common::Error(fmt::format("oneDNN sgemm of [{}x{}] by [{}x{}] failed with status {}", m, k, k, n,
                                         static_cast<int>(status)));
}

}  // namespace paddle::kernels::onednn
