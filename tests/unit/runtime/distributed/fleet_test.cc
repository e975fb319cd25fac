#include "runtime/distributed/fleet.h"

#include <doctest/doctest.h>

#include <random>

#include "common/error.h"
#include "runtime/nn/layers.h"

using namespace paddle::runtime;
using paddle::common::ConfigError;

namespace {

DistributedStrategy amp_on_cpu(AmpOptions amp = {}) {
  DistributedStrategy s;
  s.use_cpu = true;
  s.amp = amp;
  return s;
}

}  // namespace

TEST_CASE("strategy.amp: amp_configs has Fleet's defaults and bad values fail at init naming amp_configs.KEY") {
  const AmpOptions d;
  CHECK(d.scaling.init_loss_scaling == 32768);
  CHECK(d.scaling.incr_every_n_steps == 1000);
  CHECK(d.scaling.decr_every_n_nan_or_inf == 2);
  CHECK(d.scaling.incr_ratio == 2.0f);
  CHECK(d.scaling.decr_ratio == 0.5f);
  CHECK(d.scaling.use_dynamic_loss_scaling);
  CHECK(d.policy.dtype == DType::kFloat16);
  CHECK(d.policy.level == AmpLevel::kO1);
  CHECK(d.allreduce_dtype == DType::kFloat32);
  CHECK_FALSE(DistributedStrategy{}.amp);
  CHECK_FALSE(amp_on_cpu().use_pure_fp16());
  CHECK_FALSE(amp_on_cpu().use_bf16());

  AmpOptions bad;
  bad.scaling.decr_ratio = 1.5f;
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(bad), {}),
                       doctest::Contains("amp_configs.decr_ratio: 1.5 is not between 0 and 1"), ConfigError);
  bad = {};
  bad.scaling.incr_every_n_steps = 0;
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(bad), {}), doctest::Contains("amp_configs.incr_every_n_steps"),
                       ConfigError);
  bad = {};
  bad.policy.custom_white_list = {"gelu"};
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(bad), {}), doctest::Contains("amp_configs.custom_white_list: 'gelu'"),
                       ConfigError);
  bad = {};
  bad.allreduce_dtype = DType::kInt64;
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(bad), {}), doctest::Contains("amp_configs.allreduce_dtype"),
                       ConfigError);
}

TEST_CASE("strategy.amp: init refuses what this build cannot run, in one line: the CPU, O2, half all-reduce, parameter servers") {
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(), {}),
                       "strategy.amp: mixed precision needs a CUDA device, and this rank's model is on cpu; turn it "
                       "off to train in float32",
                       ConfigError);
  AmpOptions o2;
  o2.policy.level = AmpLevel::kO2;
  CHECK(amp_on_cpu(o2).use_pure_fp16());
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(o2), {}), doctest::Contains("amp_configs.use_pure_fp16: O2"),
                       ConfigError);
  AmpOptions half_reduce;
  half_reduce.allreduce_dtype = DType::kBFloat16;
  CHECK_THROWS_WITH_AS(Fleet::init(true, amp_on_cpu(half_reduce), {}),
                       doctest::Contains("amp_configs.allreduce_dtype: bfloat16 all-reduce is not built yet"), ConfigError);
  CHECK_THROWS_WITH_AS(Fleet::init(false, amp_on_cpu(), {}),
                       doctest::Contains("strategy.amp: parameter-server training runs in float32 only"), ConfigError);
}

TEST_CASE("strategy: the PS mode by Paddle's spellings, and its options checked at init") {
  DistributedStrategy s;
  CHECK_FALSE(s.a_sync());
  CHECK(s.ps.mode == PsMode::kSync);
  s.set_a_sync(true);
  CHECK(s.ps.mode == PsMode::kAsync);
  CHECK(s.a_sync());
  s.set_a_sync(true, 4);
  CHECK(s.ps.mode == PsMode::kGeo);
  CHECK(s.ps.k_steps == 4);
  s.set_a_sync(false);
  CHECK(s.ps.mode == PsMode::kSync);

  DistributedStrategy geo;
  geo.ps.mode = PsMode::kGeo;
  CHECK_THROWS_WITH_AS(Fleet::init(false, geo, {}), doctest::Contains("a_sync_configs.k_steps: 0 is not a positive"),
                       ConfigError);
  DistributedStrategy queue;
  queue.ps.send_queue_size = 0;
  CHECK_THROWS_WITH_AS(Fleet::init(false, queue, {}), "a_sync_configs.send_queue_size: 0 is less than 1", ConfigError);
}

TEST_CASE("without amp the optimizer's loss scale is 1 and a step is plain") {
  std::mt19937 rng(1);
  Sequential net;
  net.add(std::make_unique<Linear>(3, 2, rng, "fc"));
  DistributedStrategy plain;
  plain.use_cpu = true;
  auto fp32 = Fleet::init(true, plain, {});
  DistributedModel model32 = fp32->distributed_model(net);
  DistributedOptimizer opt = fp32->distributed_optimizer(make_optimizer({}), model32);
  CHECK(opt.loss_scale() == 1.0f);
  CHECK(opt.scaler() == nullptr);
  for (Parameter* p : model32.parameters()) std::ranges::fill(p->grad.values(), 1.0f);
  const float before = model32.parameters()[0]->value.values()[0];
  CHECK(opt.step(0.5f));
  CHECK(model32.parameters()[0]->value.values()[0] == before - 0.5f);
}
