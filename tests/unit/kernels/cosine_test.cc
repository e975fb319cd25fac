#include "kernels/cosine.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/functors.h"
#include "tests/unit/kernels/random_vector.h"

namespace kernels = paddle::kernels;
using paddle::kernels::testing::random_vector;

namespace {

// sum_i w_i * y_i over the forward's output, in double.
double probe(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& w, int d,
             float scale) {
  const size_t n = w.size();
  std::vector<float> y(n), saved(3 * n);
  kernels::cpu::cosine_forward(a.data(), b.data(), n, d, scale, y.data(), saved.data());
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(w[i]) * y[i];
  return sum;
}

}  // namespace

TEST_CASE("cosine: scaled cosine of the rows, the saved norms, and a zero row") {
  // Rows: parallel, opposite, orthogonal, and a zero row a against (1, 2).
  const std::vector<float> a = {1, 0, 1, 1, 2, 0, 0, 0};
  const std::vector<float> b = {3, 0, -1, -1, 0, 4, 1, 2};
  std::vector<float> y(4), saved(12);
  kernels::cosine_forward(kernels::Context::host(), a.data(), b.data(), 4, 2, 5.0f, y.data(), saved.data());
  CHECK(y[0] == doctest::Approx(5.0));
  CHECK(y[1] == doctest::Approx(-5.0));
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == 0.0f);
  CHECK(saved[0] == 1.0f);
  CHECK(saved[1] == 3.0f);
  CHECK(saved[2] == doctest::Approx(1.0));
  CHECK(saved[3] == doctest::Approx(std::sqrt(2.0)));
  CHECK(saved[5] == doctest::Approx(-1.0));
  CHECK(saved[6] == 2.0f);
  CHECK(saved[7] == 4.0f);
  CHECK(saved[9] == static_cast<float>(kernels::kCosineMinNorm));
  CHECK(saved[10] == doctest::Approx(std::sqrt(5.0)));
  CHECK(saved[11] == 0.0f);

  std::vector<float> da(8), db(8);
  const std::vector<float> dy = {1, 1, 1, 1};
  kernels::cosine_backward(kernels::Context::host(), a.data(), b.data(), saved.data(), dy.data(), 4, 2, 5.0f, da.data(),
                           db.data());
  // Parallel rows: the cosine is at its maximum, so both gradients vanish.
  CHECK(da[0] == doctest::Approx(0.0));
  CHECK(db[0] == doctest::Approx(0.0));
  // Orthogonal rows (2,0) and (0,4): d cos / d a = b / (|a||b|) = (0, 0.5), d cos / d b = (0.25, 0); times 5.
  CHECK(da[4] == 0.0f);
  CHECK(da[5] == doctest::Approx(2.5));
  CHECK(db[4] == doctest::Approx(1.25));
  CHECK(db[5] == 0.0f);
  // The zero row: the floor keeps its gradient finite, and b's gradient is 0 as a is.
  CHECK(std::isfinite(da[6]));
  CHECK(da[7] == doctest::Approx(2 * da[6]));
  CHECK(db[6] == 0.0f);
  CHECK(db[7] == 0.0f);
}

TEST_CASE("cosine: the gradient of both inputs matches central differences") {
  const int n = 3, d = 5;
  const float scale = 5.0f, eps = 1e-2f;
  auto a = random_vector(n * d, 1), b = random_vector(n * d, 2), w = random_vector(n, 3);
  std::vector<float> y(n), saved(3 * n), da(n * d), db(n * d);
  kernels::cpu::cosine_forward(a.data(), b.data(), n, d, scale, y.data(), saved.data());
  kernels::cpu::cosine_backward(a.data(), b.data(), saved.data(), w.data(), n, d, scale, da.data(), db.data());
  for (auto [input, grad] : {std::pair{&a, &da}, std::pair{&b, &db}})
    for (int k = 0; k < n * d; ++k) {
      const float kept = (*input)[k];
      (*input)[k] = kept + eps;
      const double up = probe(a, b, w, d, scale);
      (*input)[k] = kept - eps;
      const double down = probe(a, b, w, d, scale);
      (*input)[k] = kept;
      INFO("element " << k);
      CHECK((*grad)[k] == doctest::Approx((up - down) / (2 * eps)).epsilon(2e-3).scale(1.0));
    }
}
