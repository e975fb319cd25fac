#include "runtime/train/train_config.h"

#include <fmt/format.h>

#include <fstream>

namespace paddle::runtime {

nlohmann::json default_train_config() {
  return {
      {"model", "cnn"},
      {"dataset", "fashion_mnist"},
      {"data_dir", "/usr/share/datasets/fashion-mnist"},
      {"train_samples", 0},
      {"test_samples", 0},
      {"batch_size", 64},
      {"epochs", 2},
      {"max_steps", 0},
      {"seed", 2024},
      {"shuffle", true},
      {"optimizer", {{"type", "momentum"}, {"lr", 0.01}, {"momentum", 0.9}, {"weight_decay", 0.0}}},
      {"lr_schedule", {{"type", "constant"}, {"boundaries", nlohmann::json::array()}, {"values", nlohmann::json::array()}}},
      {"cnn", {{"channels", {16, 32}}, {"hidden", 128}}},
      {"resnet", {{"depth", 50}, {"width", 64}}},
      {"recommender", {{"id_dim", 32}, {"category_dim", 16}, {"bag_dim", 32}, {"hidden", 200}, {"scale", 5.0}}},
      {"image_shape", nlohmann::json::array()},
      {"ctr", {{"hash_dim", 1000001}, {"embedding_dim", 9}, {"hidden", {512, 256, 128, 32}}, {"test_fraction", 0.2}}},
      {"ps",
       {{"mode", "sync"},
        {"k_steps", 0},
        {"max_merge_var_num", 4},
        {"send_queue_size", 16},
        {"server_optimizer", "sgd"},
        {"init_dir", ""},
        {"start_pass", 0},
        {"save_dir", ""}}},
      {"output_dir", "output"},
      {"resume", false},
      {"checkpoint", true},
      {"log_every", 100},
      {"bucket_mb", 25},
      {"prefetch", 2},
      {"device", "auto"},
      {"tf32", false},
  };
}

namespace {

void merge(nlohmann::json& into, const nlohmann::json& from, const std::string& where, const std::string& prefix) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (!into.contains(it.key())) throw common::ConfigError(fmt::format("{}: unknown key '{}'", where, key));
    if (into[it.key()].is_object() && it.value().is_object()) merge(into[it.key()], it.value(), where, key);
    else into[it.key()] = it.value();
  }
}

}  // namespace

ShardSpec shard_spec(const nlohmann::json& config, int rank, int world) {
  ShardSpec spec;
  spec.batch_size = config.at("batch_size");
  spec.rank = rank;
  spec.world = world;
  spec.seed = config.at("seed");
  spec.shuffle = config.at("shuffle");
  spec.prefetch = config.at("prefetch");
  return spec;
}

nlohmann::json load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  nlohmann::json config = default_train_config();
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) throw common::ConfigError(fmt::format("--config {}: cannot open", path));
    nlohmann::json file;
    try {
      file = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      throw common::ConfigError(fmt::format("--config {}: {}", path, e.what()));
    }
    merge(config, file, path, "");
  }
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw common::ConfigError(fmt::format("--set '{}': expected key=value", item));
    const std::string key = item.substr(0, eq), text = item.substr(eq + 1);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      value = text;
    }
    nlohmann::json* at = &config;
    size_t start = 0;
    while (true) {
      const auto dot = key.find('.', start);
      const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!at->is_object() || !at->contains(part)) throw common::ConfigError(fmt::format("--set {}: unknown key", key));
      at = &(*at)[part];
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (at->is_number() && !value.is_number())
      throw common::ConfigError(fmt::format("--set {}: '{}' is not a number", key, text));
    *at = value;
  }
  return config;
}

}  // namespace paddle::runtime
