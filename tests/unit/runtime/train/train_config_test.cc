#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "runtime/train/train_config.h"

using namespace paddle::runtime;
using paddle::common::ConfigError;

TEST_CASE("config overrides reach nested keys and parse into typed settings") {
  const TrainConfig c = load_train_config("", {"optimizer.lr=0.5", "epochs=3", "model=fit_a_line", "cnn.channels=[4,8]",
                                               "optimizer.type=adam", "ps.mode=geo", "ps.k_steps=5", "device=cpu"});
  CHECK(c.lr_schedule.base_lr == 0.5f);
  CHECK(c.epochs == 3);
  CHECK(c.model.kind == ModelKind::kFitALine);
  CHECK(c.model.cnn.channels[1] == 8);
  CHECK(c.optimizer.kind == OptimizerKind::kAdam);
  CHECK(c.ps.mode == PsMode::kGeo);
  CHECK(c.device == DevicePreference::kCpu);
  const DistributedStrategy s = c.strategy();
  CHECK(s.ps_mode() == PsMode::kGeo);
  CHECK(s.a_sync_configs.k_steps == 5);
  CHECK(s.use_cpu);
  const ShardSpec shard = c.shard(1, 4);
  CHECK(shard.rank == 1);
  CHECK(shard.world == 4);
  CHECK(shard.batch_size == 64);
}

TEST_CASE("unknown keys, wrong types and values out of range fail at start, naming the key") {
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.rate=1"}), doctest::Contains("optimizer.rate: unknown key"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"epochs=many"}), doctest::Contains("'many' is not a number"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("/nonexistent.json", {}), doctest::Contains("cannot open"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"batch_size=0"}), doctest::Contains("batch_size: 0 is less than 1"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"epochs=1.5"}), doctest::Contains("epochs: 1.5 is not an integer"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"shuffle=yes"}), doctest::Contains("shuffle: \"yes\" is not true or false"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"model=mlp"}), doctest::Contains("model 'mlp' is not one of fit_a_line"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"dataset=cifar"}), doctest::Contains("dataset 'cifar'"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.mode=half"}), doctest::Contains("ps.mode 'half' is not sync"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.mode=geo"}), doctest::Contains("ps.k_steps"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.server_optimizer=lamb"}), doctest::Contains("ps.server_optimizer"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.type=lamb"}), doctest::Contains("optimizer.type 'lamb'"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.lr=-1"}), doctest::Contains("optimizer.lr: -1 is less than 0"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"lr_schedule.type=piecewise", "lr_schedule.boundaries=[10]"}),
                       doctest::Contains("piecewise needs 2 values"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"cnn.channels=[4]"}), doctest::Contains("cnn.channels"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"image_shape=[3,32]"}), doctest::Contains("image_shape"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"device=gpu"}), doctest::Contains("device 'gpu' is not auto or cpu"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ctr.test_fraction=1"}), doctest::Contains("ctr.test_fraction"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer=0.5"}),
                       doctest::Contains("--set optimizer: is a group of settings (lr, "), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"epochs=1E99999"}), doctest::Contains("'1E99999' is not a number"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"shuffle=\xff"}), doctest::Contains("shuffle: \"\xef\xbf\xbd\" is not true"),
                       ConfigError);
}

TEST_CASE("a config file that is not JSON is named by file:line") {
  const std::string path = (std::filesystem::temp_directory_path() / "train_config_test_bad.json").string();
  std::ofstream(path) << "{\n  \"model\": \"fit_a_line\",\n  \"epochs\": 3,,\n  \"batch_size\": 20\n}\n";
  try {
    load_train_config(path, {});
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.starts_with("--config " + path + ":3: not valid JSON: syntax error"));
    CHECK(message.find("json.exception") == std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("the shipped configs parse") {
  const std::pair<const char*, ModelKind> configs[] = {{"fashion_mnist", ModelKind::kCnn},
                                                       {"fit_a_line", ModelKind::kFitALine},
                                                       {"recommender", ModelKind::kRecommender},
                                                       {"recommender_ps", ModelKind::kRecommender},
                                                       {"resnet", ModelKind::kResnet},
                                                       {"wide_deep", ModelKind::kWideDeep}};
  for (const auto& [name, kind] : configs) {
    INFO(name);
    const TrainConfig c = load_train_config(std::string(PADDLE_LAUNCH_SOURCE_DIR) + "/configs/" + name + ".json", {});
    CHECK(c.model.kind == kind);
    CHECK(c.uses_parameter_servers(JobKind::kSingle) == (kind == ModelKind::kWideDeep || std::string(name) == "recommender_ps"));
    CHECK(c.uses_parameter_servers(JobKind::kParameterServer));
  }
  CHECK_THROWS_WITH_AS(load_train_config("", {"model=wide_deep", "parallelism=collective"}).uses_parameter_servers(JobKind::kSingle),
                       doctest::Contains("parallelism: model wide_deep trains on parameter servers only"), ConfigError);
}
