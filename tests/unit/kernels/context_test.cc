#include "kernels/context.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "common/error.h"
#include "kernels/event.h"

namespace kernels = paddle::kernels;

TEST_CASE("the host context is the CPU and has no CUDA handles") {
  const kernels::Context& cpu = kernels::Context::host();
  CHECK_FALSE(cpu.is_cuda());
  CHECK_FALSE(kernels::Context().is_cuda());
  CHECK_THROWS_AS(cpu.cuda(), std::logic_error);
  cpu.synchronize();  // nothing to wait for
  CHECK(kernels::cuda_device_count() >= 0);
}

TEST_CASE("events on the CPU are reached as soon as they are recorded") {
  kernels::Event event(kernels::Context::host());
  event.record();
  event.synchronize();
  CHECK_FALSE(kernels::Context::host().is_cuda());
}

#ifndef PADDLE_LAUNCH_WITH_CUDA
TEST_CASE("asking a build without CUDA for a CUDA context is a configuration error naming the device") {
  CHECK(kernels::cuda_device_count() == 0);
  CHECK_THROWS_WITH_AS(kernels::Context(1, false), doctest::Contains("gpu:1 requested"), paddle::common::ConfigError);
}
#endif
