#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "ps/table/update_rule.h"
#include "runtime/distributed/fleet.h"
#include "runtime/train/config/train_config.h"

using namespace paddle::runtime;
using paddle::common::ConfigError;

TEST_CASE("the servers run the program's optimizer; ps.server_optimizer may only repeat it") {
  CHECK(load_train_config("", {"optimizer.type=adam"}).ps.server_optimizer == paddle::common::OptimizerKind::kAdam);
  CHECK(load_train_config("", {"optimizer.type=adagrad", "ps.server_optimizer=adagrad"}).ps.server_optimizer == paddle::common::OptimizerKind::kAdagrad);
  const TrainConfig momentum = load_train_config("", {});
  CHECK(momentum.ps.server_optimizer == paddle::common::OptimizerKind::kMomentum);
  CHECK(momentum.uses_parameter_servers(JobKind::kParameterServer));
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.type=adam", "ps.server_optimizer=sgd"}),
                       "ps.server_optimizer: sgd contradicts optimizer.type: adam; the servers run the program's optimizer, "
                       "so drop ps.server_optimizer or make the two agree",
                       ConfigError);
}

TEST_CASE("config overrides reach nested keys and parse into typed settings") {
  const TrainConfig c = load_train_config("", {"optimizer.lr=0.5", "epochs=3", "model=fit_a_line", "cnn.channels=[4,8]",
                                               "optimizer.type=adam", "ps.mode=geo", "ps.k_steps=5", "device=cpu"});
  CHECK(c.lr_schedule.base_lr == 0.5f);
  CHECK(c.epochs == 3);
  CHECK(c.model.kind == ModelKind::kFitALine);
  CHECK(c.model.cnn.channels[1] == 8);
  CHECK(c.optimizer.kind == OptimizerKind::kAdam);
  CHECK(c.ps.strategy.mode == PsMode::kGeo);
  CHECK(c.device == DevicePreference::kCpu);
  const DistributedStrategy s = c.strategy();
  CHECK(s.ps.mode == PsMode::kGeo);
  CHECK(s.ps.k_steps == 5);
  CHECK(s.a_sync());
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

TEST_CASE("amp: off by default, and when on its keys reach the strategy, which names them as the config does") {
  const TrainConfig d = load_train_config("", {});
  CHECK_FALSE(d.amp.enabled);
  CHECK_FALSE(d.strategy().amp);
  const TrainConfig on = load_train_config("", {"amp.enabled=true"});
  REQUIRE(on.amp.enabled);  // Fleet's amp_configs defaults
  CHECK(on.amp.options.policy.dtype == DType::kFloat16);
  CHECK(on.amp.options.policy.level == AmpLevel::kO1);
  CHECK(on.amp.options.allreduce_dtype == DType::kFloat32);
  CHECK(on.amp.options.scaling.init_loss_scaling == 32768);
  CHECK(on.amp.options.scaling.incr_every_n_steps == 1000);
  CHECK(on.amp.options.scaling.decr_every_n_nan_or_inf == 2);
  CHECK(on.amp.options.scaling.incr_ratio == 2.0f);
  CHECK(on.amp.options.scaling.decr_ratio == 0.5f);
  CHECK(on.amp.options.scaling.use_dynamic_loss_scaling);
  CHECK(on.amp.options.names.enabled == "amp.enabled");

  const TrainConfig c = load_train_config(
      "", {"amp.enabled=true", "amp.dtype=bfloat16", "amp.level=O2", "amp.allreduce_dtype=float16",
           "amp.init_loss_scaling=1024", "amp.incr_every_n_steps=500", "amp.decr_every_n_nan_or_inf=3",
           "amp.incr_ratio=4", "amp.decr_ratio=0.25", "amp.use_dynamic_loss_scaling=false",
           R"(amp.custom_white_list=["elementwise_add"])", R"(amp.custom_black_list=["conv2d"])"});
  const DistributedStrategy s = c.strategy();
  REQUIRE(s.amp);
  CHECK(s.use_bf16());
  CHECK(s.use_pure_fp16());
  CHECK(s.amp->policy.dtype == DType::kBFloat16);
  CHECK(s.amp->policy.level == AmpLevel::kO2);
  CHECK(s.amp->allreduce_dtype == DType::kFloat16);
  CHECK(s.amp->scaling.init_loss_scaling == 1024);
  CHECK(s.amp->scaling.incr_every_n_steps == 500);
  CHECK(s.amp->scaling.decr_every_n_nan_or_inf == 3);
  CHECK(s.amp->scaling.incr_ratio == 4);
  CHECK(s.amp->scaling.decr_ratio == 0.25f);
  CHECK_FALSE(s.amp->scaling.use_dynamic_loss_scaling);
  CHECK(s.amp->policy.custom_white_list == std::vector<std::string>{"elementwise_add"});
  CHECK(s.amp->policy.custom_black_list == std::vector<std::string>{"conv2d"});
  CHECK(s.amp->names.level == "amp.level");
  CHECK(s.amp->names.allreduce_dtype == "amp.allreduce_dtype");
}

TEST_CASE("amp: bad values fail at start with one line naming the key") {
  const auto fails = [](const std::string& item, const char* message) {
    INFO(item);
    CHECK_THROWS_WITH_AS(load_train_config("", {item}), doctest::Contains(message), ConfigError);
  };
  fails("amp.enabled=1", "amp.enabled: 1 is not true or false");
  fails("amp.dtype=fp16", "amp.dtype 'fp16' is not float32, float16 or bfloat16");
  fails("amp.dtype=float32", "amp.dtype: float32 is not float16 or bfloat16");
  fails("amp.level=O3", "amp.level 'O3' is not O1 or O2");
  fails("amp.allreduce_dtype=int8", "amp.allreduce_dtype 'int8'");
  fails("amp.init_loss_scaling=0", "amp.init_loss_scaling: 0 is not positive");
  fails("amp.init_loss_scaling=big", "amp.init_loss_scaling: 'big' is not a number");
  fails("amp.incr_every_n_steps=0", "amp.incr_every_n_steps: 0 is not in [1, 2147483647]");
  fails("amp.decr_every_n_nan_or_inf=1.5", "amp.decr_every_n_nan_or_inf: 1.5 is not an integer");
  fails("amp.incr_ratio=1", "amp.incr_ratio: 1 is not a finite number above 1");
  fails("amp.decr_ratio=2", "amp.decr_ratio: 2 is not between 0 and 1");
  fails("amp.use_dynamic_loss_scaling=maybe", "amp.use_dynamic_loss_scaling: \"maybe\" is not true or false");
  fails("amp.custom_white_list=conv2d", "amp.custom_white_list: \"conv2d\" is not a list");
  fails(R"(amp.custom_white_list=["conv3d"])", "amp.custom_white_list: 'conv3d' is not an op of this runtime");
  fails(R"(amp.custom_black_list=[1])", "amp.custom_black_list: [1] is not a list of strings");
  fails("amp.use_bf16=true", "amp.use_bf16: unknown key (Fleet's name; in a config set amp.dtype to bfloat16)");
  fails("amp.use_pure_fp16=true", "(Fleet's name; in a config set amp.level to O2)");
  fails("amp=true", "amp: is a group of settings (allreduce_dtype, custom_black_list");
  CHECK_THROWS_WITH_AS(
      load_train_config("", {R"(amp.custom_white_list=["relu"])", R"(amp.custom_black_list=["relu"])"}),
      doctest::Contains("amp.custom_white_list: 'relu' is in custom_black_list too"), ConfigError);
}

TEST_CASE("amp: parameter-server training refuses it at Fleet's start, naming amp.enabled") {
  const TrainConfig wide = load_train_config("", {"model=wide_deep", "dataset=criteo", "amp.enabled=true"});
  REQUIRE(wide.uses_parameter_servers(JobKind::kSingle));
  CHECK_THROWS_WITH_AS(Fleet::init(/*is_collective=*/false, wide.strategy(), {}),
                       doctest::Contains("amp.enabled: parameter-server training runs in float32 only"), ConfigError);
  const TrainConfig cnn = load_train_config("", {"amp.enabled=true"});
  CHECK_FALSE(cnn.uses_parameter_servers(JobKind::kCollective));
  CHECK_THROWS_WITH_AS(Fleet::init(/*is_collective=*/true, cnn.strategy(), {}),
                       "amp.enabled: mixed precision needs a CUDA device, and this rank's model is on cpu; turn it off "
                       "to train in float32",
                       ConfigError);
  const TrainConfig o2 = load_train_config("", {"amp.enabled=true", "amp.level=O2"});
  CHECK_THROWS_WITH_AS(Fleet::init(/*is_collective=*/true, o2.strategy(), {}), doctest::Contains("amp.level: O2"),
                       ConfigError);
}

TEST_CASE("sparse tables: ctr accessor, sparse rule, admission and online passes reach the settings") {
  const TrainConfig plain = load_train_config("", {"model=wide_deep", "dataset=criteo"});
  CHECK(plain.ps.sparse.accessor == paddle::ps::SparseTableSpec::Accessor::kPlain);
  CHECK(plain.data.hash_dim == 0);  // feature signs stay whole unless a config folds them
  CHECK_FALSE(plain.ps.online.enabled());
  const TrainConfig c = load_train_config(
      "", {"model=wide_deep", "dataset=criteo", "ps.accessor=ctr", "ps.sparse_rule.type=std_adagrad", "ps.sparse_rule.lr=0.1",
           "ps.ctr.delete_after_unseen_days=7", "ps.admission.type=count", "ps.admission.count=3", "ps.save_dir=/m",
           "ps.online.days=[\"20261101\",\"20261102\"]", "ps.online.passes_per_day=3",
           "ps.online.data_pattern=data/{day}/{pass}"});
  CHECK(c.ps.sparse.accessor == paddle::ps::SparseTableSpec::Accessor::kCtr);
  CHECK(c.ps.sparse.ctr.embedx_rule.kind == paddle::ps::SparseRuleSpec::Kind::kStdAdagrad);
  CHECK(c.ps.sparse.ctr.embed_rule.learning_rate == 0.1f);
  CHECK(c.ps.sparse.ctr.delete_after_unseen_days == 7);
  CHECK(c.ps.sparse.admission.kind == paddle::ps::AdmissionSpec::Kind::kCount);
  CHECK(c.ps.sparse.admission.count == 3);
  CHECK(c.ps.online.days.size() == 2);
  CHECK(c.ps.online.passes_per_day == 3);
}

TEST_CASE("sparse tables and online passes: bad values fail at start naming the key") {
  const std::vector<std::string> wd = {"model=wide_deep", "dataset=criteo"};
  const auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), wd.begin(), wd.end());
    return load_train_config("", more);
  };
  CHECK_THROWS_WITH_AS(with({"ps.accessor=fancy"}), doctest::Contains("ps.accessor 'fancy' is not plain or ctr"), ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.sparse_rule.type=lamb"}), doctest::Contains("ps.sparse_rule.type 'lamb' is not sgd, adagrad, std_adagrad or adam"), ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.admission.type=sometimes"}), doctest::Contains("ps.admission.type 'sometimes' is not always, count or probability"), ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.admission.probability=2"}), doctest::Contains("ps.admission.probability: 2 is above 1"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.online.days=[\"d1\"]", "ps.online.data_pattern=data/all"}),
                       doctest::Contains("ps.online.data_pattern: 'data/all' names neither"), ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.online.days=[\"d1\"]", "ps.online.data_pattern=data/{day}"}),
                       doctest::Contains("needs ps.save_dir"), ConfigError);
  CHECK_THROWS_WITH_AS(with({"ps.online.days=[\"../x\"]", "ps.online.data_pattern=data/{day}", "ps.save_dir=/m"}),
                       doctest::Contains("ps.online.days: '../x' is not a directory name"), ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.online.days=[\"d1\"]", "ps.online.data_pattern=data/{day}", "ps.save_dir=/m"}),
                       doctest::Contains("ps.online: model cnn"), ConfigError);
}

TEST_CASE("the key table: its defaults are a valid config, every key is named once, --help-config lists them all") {
  std::set<std::string> names;
  for (const ConfigKey& key : config_keys()) {
    CHECK_MESSAGE(names.insert(key.name).second, key.name);
    CHECK_MESSAGE(!key.doc.empty(), key.name);
    if (key.type == KeyType::kChoice)
      CHECK_MESSAGE(std::count(key.choices.begin(), key.choices.end(), key.default_value.get<std::string>()) == 1, key.name);
    if (key.type == KeyType::kInteger || key.type == KeyType::kNumber) {
      const double value = key.default_value.get<double>();
      CHECK_MESSAGE((value >= key.min && value <= key.max), key.name);
    }
  }
  CHECK_NOTHROW(parse_train_config(default_train_config()));
  const std::string help = config_keys_help();
  for (const std::string& name : names) CHECK_MESSAGE(help.find("\n" + name + "  (") != std::string::npos, name);
  CHECK(help.find("ps.admission.probability  (number, default 1.0, [0, 1])") != std::string::npos);
  CHECK(help.find("ps.mode  (choice, default \"sync\", sync|async|geo)") != std::string::npos);
  CHECK(help.find("batch_size  (integer, default 64, >= 1)") != std::string::npos);
}

TEST_CASE("each key's default is its field's in a default TrainConfig, and a value set reaches that field") {
  for (const ConfigKey& key : config_keys()) CHECK_MESSAGE((static_cast<bool>(key.read) != (key.name == "ps.server_optimizer")), key.name);
  const TrainConfig d;
  CHECK(config_key("batch_size").default_value == d.batch_size);
  CHECK(config_key("ps.send_queue_size").default_value == d.ps.strategy.send_queue_size);
  CHECK(config_key("ps.admission.count").default_value == d.ps.sparse.admission.count);
  CHECK(config_key("optimizer.type").default_value == "momentum");
  CHECK(d.optimizer.kind == OptimizerKind::kMomentum);
  CHECK(config_key("ps.sparse_rule.lr").default_value == 0.05);  // a float field, shown by its shortest form
  CHECK(config_key("data_dir").default_value == d.data.dir);

  const TrainConfig c = load_train_config("", {"ps.send_queue_size=3", "ps.sparse_rule.type=adam", "ps.sparse_rule.lr=0.5",
                                               "amp.level=O2", "cnn.channels=[3,5]", "ps.admission.count=7"});
  CHECK(c.ps.strategy.send_queue_size == 3);
  CHECK(c.ps.sparse.ctr.embed_rule.kind == OptimizerKind::kAdam);
  CHECK(c.ps.sparse.ctr.embedx_rule.kind == OptimizerKind::kAdam);  // one rule for both parts of a row
  CHECK(c.ps.sparse.ctr.embedx_rule.learning_rate == 0.5f);
  CHECK(c.amp.options.policy.level == AmpLevel::kO2);
  CHECK(c.model.cnn.channels == std::array<int64_t, 2>{3, 5});
  CHECK(c.ps.sparse.admission.count == 7u);
  CHECK_THROWS_WITH_AS(load_train_config("", {"cnn.channels=[3,5,7]"}), "cnn.channels: [3,5,7] is not 2 integers",
                       ConfigError);
}

TEST_CASE("the key table's ranges are the checks: each bound refused just past it, accepted on it") {
  CHECK_THROWS_WITH_AS(load_train_config("", {"seed=4294967296"}), "seed: 4294967296 is not in [0, 4294967295]", ConfigError);
  CHECK(load_train_config("", {"seed=4294967295"}).seed == 4294967295u);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.ctr.show_click_decay_rate=1.5"}),
                       "ps.ctr.show_click_decay_rate: 1.5 is above 1", ConfigError);
  CHECK(load_train_config("", {"ps.ctr.show_click_decay_rate=1"}).ps.sparse.ctr.show_click_decay_rate == 1.0f);
  CHECK_THROWS_WITH_AS(load_train_config("", {"bucket_mb=0"}), "bucket_mb: 0 is not positive", ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"resnet.depth=3000000000"}), "resnet.depth: 3000000000 is not in [1, 2147483647]",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.sparse_rule.max_bound=-20"}),
                       "ps.sparse_rule.max_bound: -20 is less than ps.sparse_rule.min_bound -10", ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"ps.server_optimizer=lamb"}),
                       "ps.server_optimizer: 'lamb' is not sgd, momentum, adagrad or adam", ConfigError);
}

TEST_CASE("every choice the key table lists parses, and the servers' rules are the program's optimizers") {
  for (const ConfigKey& key : config_keys()) {
    if (key.type != KeyType::kChoice) continue;
    for (const std::string& choice : key.choices) {
      std::vector<std::string> set{key.name + "=" + choice};
      if (key.name == "model" && choice == "wide_deep") set.push_back("dataset=criteo");
      if (key.name == "ps.storage" && choice == "ssd") set.push_back("ps.memory_budget_mb=1");
      if (key.name == "ps.mode" && choice == "geo") set.push_back("ps.k_steps=1");
      if (key.name == "lr_schedule.type" && choice == "piecewise") set.push_back("lr_schedule.values=[0.1]");
      if (key.name == "amp.dtype" && choice == "float32") continue;  // a half type only: refused by name above
      std::string error;
      try {
        load_train_config("", set);
      } catch (const ConfigError& e) {
        error = e.what();
      }
      CHECK_MESSAGE(error.empty(), std::string(set[0] + ": " + error));
    }
  }
  std::vector<paddle::common::OptimizerKind> program(optimizer_kinds().begin(), optimizer_kinds().end()),
      servers(paddle::ps::UpdateRule::kinds().begin(), paddle::ps::UpdateRule::kinds().end());
  std::sort(program.begin(), program.end());
  std::sort(servers.begin(), servers.end());
  CHECK(program == servers);  // optimizer.type is the servers' rule too
}
