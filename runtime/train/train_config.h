#pragma once
// TrainConfig: a training run's settings, from a JSON file (configs/*.json) with `--set key=value`
// overrides (dotted keys reach into objects: --set optimizer.lr=0.1). Unknown keys are errors.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/data/batch_loader.h"

namespace paddle::runtime {

// The built-in defaults: the Fashion-MNIST CNN.
nlohmann::json default_train_config();

// Defaults, overlaid with the file (if any), then with each "key=value" override. Values parse
// as JSON when they can (numbers, true/false, lists), else as strings. Throws common::ConfigError naming
// the file, key or value at fault.
nlohmann::json load_train_config(const std::string& path, const std::vector<std::string>& overrides);

// How rank `rank` of `world` cuts the data: batch_size, seed, shuffle and prefetch of `config`.
ShardSpec shard_spec(const nlohmann::json& config, int rank, int world);

}  // namespace paddle::runtime
