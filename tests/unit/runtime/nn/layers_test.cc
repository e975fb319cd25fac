#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "kernels/autocast_conv.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/residual.h"
#include "runtime/nn/sequential.h"
#include "tests/unit/runtime/nn/gradient_check.h"

using namespace paddle::runtime;
using namespace paddle::runtime::testing;

TEST_CASE("layer gradients match finite differences") {
  std::mt19937 rng(3);
  SUBCASE("Linear") {
    Linear l(5, 3, rng, "fc");
    check_gradients(l, random_tensor({4, 5}, rng));
  }
  SUBCASE("Conv2D with padding and stride") {
    Conv2D c(2, 3, 3, 2, 1, rng, "conv");
    check_gradients(c, random_tensor({2, 2, 5, 5}, rng));
  }
  SUBCASE("ReLU") {
    ReLU r;
    check_gradients(r, random_tensor({3, 7}, rng));
  }
  SUBCASE("MaxPool2D") {
    MaxPool2D m(2, 2);
    check_gradients(m, random_tensor({2, 2, 4, 4}, rng));
  }
  SUBCASE("AvgPool2D, windowed and global") {
    AvgPool2D a(2, 2);
    check_gradients(a, random_tensor({2, 2, 4, 4}, rng));
    AvgPool2D g(0, 0);
    check_gradients(g, random_tensor({2, 3, 3, 3}, rng));
  }
  SUBCASE("BatchNorm2D") {
    BatchNorm2D bn(3, "bn");
    check_gradients(bn, random_tensor({4, 3, 2, 2}, rng), 5e-2);
  }
  SUBCASE("Residual with a projection shortcut, and with identity") {
    Sequential branch, shortcut;
    branch.add(std::make_unique<Conv2D>(2, 3, 3, 1, 1, rng, "b.conv")).add(std::make_unique<ReLU>());
    shortcut.add(std::make_unique<Conv2D>(2, 3, 1, 1, 0, rng, "s.conv"));
    Residual projected(std::move(branch), std::move(shortcut));
    check_gradients(projected, random_tensor({2, 2, 4, 4}, rng));
    Sequential same;
    same.add(std::make_unique<Conv2D>(3, 3, 3, 1, 1, rng, "i.conv"));
    Residual identity(std::move(same), Sequential());
    check_gradients(identity, random_tensor({1, 3, 4, 4}, rng));
  }
  SUBCASE("MaxPool2D with padding") {
    MaxPool2D m(3, 2, 1);
    check_gradients(m, random_tensor({1, 2, 5, 5}, rng));
  }
  SUBCASE("Embedding") {
    Embedding e(10, 4, rng, "emb");
    const std::vector<int64_t> id_values{1, 2, 9, 0, 2, 5};
    Tensor ids = Tensor::from_ids({2, 3}, id_values);
    Tensor w = random_tensor({2, 12}, rng);
    e.forward(ids, true);
    e.backward(w);
    auto g = e.parameters()[0]->grad.values();
    CHECK(g[2 * 4 + 1] == doctest::Approx(w.values()[1 * 4 + 1] + w.values()[4 * 4 + 1]));
    // ids given as whole floats are the same ids
    e.parameters()[0]->grad.zero();
    e.forward(Tensor::from_values({2, 3}, {1, 2, 9, 0, 2, 5}), true);
    e.backward(w);
    CHECK(e.parameters()[0]->grad.values()[2 * 4 + 1] == doctest::Approx(g[2 * 4 + 1]));
    CHECK_THROWS_AS(e.forward(Tensor({1, 1}, 10.0f), true), std::out_of_range);
    CHECK_THROWS_AS(e.forward(Tensor({1, 1}, 1.5f), true), std::invalid_argument);
  }
}

TEST_CASE("Dropout keeps the expectation and is the identity in evaluation") {
  Dropout d(0.5f, 1);
  Tensor x({1, 10000}, 1.0f);
  Tensor y = d.forward(x, true);
  double sum = 0;
  for (float v : y.values()) sum += v;
  CHECK(sum / 10000 == doctest::Approx(1.0).epsilon(0.05));
  CHECK(d.forward(x, false).to_vector() == x.to_vector());
}

TEST_CASE("Conv2D under O1 autocast runs its three convolutions through the autocast kernels; weights stay float32") {
  std::mt19937 rng(12), same(12);
  Conv2D plain(2, 3, 3, 2, 1, rng, "conv"), amp(2, 3, 3, 2, 1, same, "conv");
  const std::vector<float> w32 = amp.parameters()[0]->value.to_vector();
  Execution cpu(Device::cpu());
  CHECK_THROWS_AS(cpu.set_conv_autocast(paddle::kernels::DType::kFloat32), std::invalid_argument);  // not a half
  cpu.set_conv_autocast(paddle::kernels::DType::kBFloat16);
  amp.place(cpu);
  std::mt19937 data(6);
  const Tensor x = random_tensor({2, 2, 5, 5}, data), dy = random_tensor({2, 3, 3, 3}, data);
  const paddle::kernels::ConvShape s{2, 5, 5, 3, 2, 1};
  std::vector<float> y_ref(2 * 3 * 9), dx_ref(2 * 2 * 25), dw_ref(3 * 18, 0.0f);
  paddle::kernels::cpu::autocast_conv2d_forward(paddle::kernels::DType::kBFloat16, s, 2, 3, x.ptr(), w32.data(),
                                                y_ref.data());
  paddle::kernels::cpu::autocast_conv2d_backward_data(paddle::kernels::DType::kBFloat16, s, 2, 3, w32.data(),
                                                      dy.ptr(), dx_ref.data());
  paddle::kernels::cpu::autocast_conv2d_backward_filter(paddle::kernels::DType::kBFloat16, s, 2, 3, x.ptr(),
                                                        dy.ptr(), dw_ref.data());
  const Tensor y = amp.forward(x, true);
  CHECK(y.dtype() == DType::kFloat32);
  const Tensor plain_y = plain.forward(x, true);
  for (size_t i = 0; i < y_ref.size(); ++i) y_ref[i] += amp.parameters()[1]->value.to_vector()[i / 9 % 3];
  CHECK(y.to_vector() == y_ref);
  CHECK(amp.backward(dy).to_vector() == dx_ref);
  CHECK(amp.parameters()[0]->grad.to_vector() == dw_ref);
  CHECK(amp.parameters()[0]->value.to_vector() == w32);
  CHECK(plain_y.to_vector() != y.to_vector());  // bfloat16 rounding shows against the float32 layer
}

TEST_CASE("Linear under O1 autocast computes its three GEMMs on 16-bit-rounded operands, accumulating in float32") {
  std::mt19937 rng(11), same(11);
  Linear plain(6, 4, rng, "fc"), amp(6, 4, same, "fc");
  Execution cpu(Device::cpu());
  cpu.set_matmul_autocast(paddle::kernels::DType::kFloat16);
  amp.place(cpu);
  std::mt19937 data(5);
  const Tensor x = random_tensor({3, 6}, data), dy = random_tensor({3, 4}, data);

  // The reference: the float32 layer fed operands rounded to float16 (its own weight included).
  const auto round16 = [](const Tensor& t) { return t.cast(DType::kFloat16).cast(DType::kFloat32); };
  Parameter* w = plain.parameters()[0];
  const std::vector<float> w32 = w->value.to_vector();
  w->value = round16(w->value);
  const Tensor y_ref = plain.forward(round16(x), true);
  const Tensor y = amp.forward(x, true);
  CHECK(y.dtype() == DType::kFloat32);
  CHECK(y.to_vector() == y_ref.to_vector());
  const Tensor dx_ref = plain.backward(round16(dy));
  const Tensor dx = amp.backward(dy);
  CHECK(dx.to_vector() == dx_ref.to_vector());
  CHECK(amp.parameters()[0]->grad.to_vector() == w->grad.to_vector());
  CHECK(amp.parameters()[0]->value.to_vector() == w32);  // the weights themselves stay float32

  // And it is not the float32 product: the rounding shows.
  std::mt19937 again(11);
  Linear exact(6, 4, again, "fc");
  CHECK(exact.forward(x, true).to_vector() != y.to_vector());
}

TEST_CASE("a net told its input is data skips the input gradient and computes the same parameter gradients") {
  std::mt19937 rng(4);
  auto net = [](unsigned seed) {
    std::mt19937 init(seed);
    Sequential s;
    s.add(std::make_unique<Conv2D>(2, 4, 3, 1, 1, init, "conv"))
        .add(std::make_unique<ReLU>())
        .add(std::make_unique<Flatten>())
        .add(std::make_unique<Linear>(4 * 5 * 5, 3, init, "fc"));
    return s;
  };
  const Tensor x = random_tensor({2, 2, 5, 5}, rng), dy = random_tensor({2, 3}, rng);
  Sequential full = net(1), skipping = net(1);
  skipping.skip_input_gradient(true);
  full.forward(x, true);
  skipping.forward(x, true);
  CHECK(full.backward(dy).numel() == x.numel());
  CHECK(skipping.backward(dy).numel() == 0);
  const auto want = full.parameters(), got = skipping.parameters();
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i]->grad.to_vector() == want[i]->grad.to_vector());

  Linear first(3, 2, rng, "fc");  // a Linear on data skips its GEMM for dx
  first.skip_input_gradient(true);
  first.forward(random_tensor({4, 3}, rng), true);
  CHECK(first.backward(random_tensor({4, 2}, rng)).numel() == 0);
}
