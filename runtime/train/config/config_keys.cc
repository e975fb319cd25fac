// The key table itself: one row per key, grouped as configs group them.
#include "runtime/train/config/config_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/optimizer_kind.h"
#include "ps/table/sparse_rule.h"
#include "ps/table_spec.h"
#include "runtime/distributed/distributed_strategy.h"
#include "runtime/nn/optimizer.h"
#include "runtime/train/config/train_config.h"

namespace paddle::runtime {
namespace {

using nlohmann::json;

constexpr double kIntMax = 2147483647.0;
constexpr double kUint32Max = 4294967295.0;

ConfigKey integer(std::string name, int64_t value, double min, std::string doc, double max = ConfigKey::kNoLimit) {
  return {std::move(name), KeyType::kInteger, value, min, max, false, {}, std::move(doc)};
}
ConfigKey number(std::string name, double value, double min, std::string doc, double max = ConfigKey::kNoLimit) {
  return {std::move(name), KeyType::kNumber, value, min, max, false, {}, std::move(doc)};
}
ConfigKey positive(std::string name, double value, std::string doc) {
  return {std::move(name), KeyType::kNumber, value, 0, ConfigKey::kNoLimit, true, {}, std::move(doc)};
}
ConfigKey boolean(std::string name, bool value, std::string doc) {
  return {std::move(name), KeyType::kBoolean, value, -ConfigKey::kNoLimit, ConfigKey::kNoLimit, false, {}, std::move(doc)};
}
ConfigKey text(std::string name, std::string value, std::string doc) {
  return {std::move(name), KeyType::kText, std::move(value), -ConfigKey::kNoLimit, ConfigKey::kNoLimit, false, {}, std::move(doc)};
}
ConfigKey choice(std::string name, std::string value, std::vector<std::string> choices, std::string doc) {
  return {std::move(name), KeyType::kChoice, std::move(value), -ConfigKey::kNoLimit, ConfigKey::kNoLimit, false,
          std::move(choices), std::move(doc)};
}
ConfigKey integers(std::string name, json value, double min, std::string doc) {
  return {std::move(name), KeyType::kIntegers, std::move(value), min, ConfigKey::kNoLimit, false, {}, std::move(doc)};
}
ConfigKey numbers(std::string name, std::string doc) {
  return {std::move(name), KeyType::kNumbers, json::array(), -ConfigKey::kNoLimit, ConfigKey::kNoLimit, false, {}, std::move(doc)};
}
ConfigKey texts(std::string name, std::string doc) {
  return {std::move(name), KeyType::kTexts, json::array(), -ConfigKey::kNoLimit, ConfigKey::kNoLimit, false, {}, std::move(doc)};
}

std::vector<ConfigKey> make_keys() {
  return {
      // What is trained, on what.
      choice("model", "cnn", kModelNames.choices(), "the model to train"),
      choice("dataset", "fashion_mnist", kDatasetNames.choices(),
             "the data set it trains on"),
      text("data_dir", "/usr/share/datasets/fashion-mnist", "the data set's directory; ~/ is the home directory"),
      integer("train_samples", 0, 0, "training samples used; 0: all"),
      integer("test_samples", 0, 0, "test samples used; 0: all"),
      integers("image_shape", json::array(), 1, "[C,H,W] to resize images to; [] keeps theirs"),
      integers("cnn.channels", {16, 32}, 1, "the two convolutions' output channels"),
      integer("cnn.hidden", 128, 1, "the width of the hidden layer"),
      integer("resnet.depth", 50, 1, "the bottleneck ResNet's layers: 14, 26, 50, 101 or 152", kIntMax),
      integer("resnet.width", 64, 1, "the channels of the first stage"),
      integer("recommender.id_dim", 32, 1, "the width of the user and movie id embeddings"),
      integer("recommender.category_dim", 16, 1, "the width of the category embeddings"),
      integer("recommender.bag_dim", 32, 1, "the width of the title's bag of words"),
      integer("recommender.hidden", 200, 1, "the width of each tower's hidden layer"),
      positive("recommender.scale", 5.0, "the rating scale the cosine similarity is stretched to"),
      integer("ctr.hash_dim", 0, 0, "folds feature signs into [0, hash_dim); 0 keeps them whole"),
      integer("ctr.embedding_dim", 9, 1, "the width of wide_deep's sparse embeddings"),
      integers("ctr.hidden", {512, 256, 128, 32}, 1, "the widths of wide_deep's deep layers"),
      number("ctr.test_fraction", 0.2, 0, "the tail of click data held out for evaluation; below 1"),
      // How it trains.
      integer("batch_size", 64, 1, "samples per step, per worker"),
      integer("epochs", 2, 0, "passes over the training data"),
      integer("max_steps", 0, 0, "stops the run after this many steps; 0: no limit"),
      integer("seed", 2024, 0, "seeds the initialization and the shuffles", kUint32Max),
      boolean("shuffle", true, "shuffles the training data every epoch"),
      integer("prefetch", 2, 1, "batches the loader prepares ahead"),
      choice("optimizer.type", "momentum", common::optimizer_kind_names(optimizer_kinds()),
             "the optimizer; on parameter servers, their dense tables' rule too"),
      number("optimizer.lr", 0.01, 0, "the base learning rate"),
      number("optimizer.momentum", 0.9, 0, "momentum: the velocity's decay"),
      number("optimizer.weight_decay", 0.0, 0, "L2 decay added to every gradient"),
      choice("lr_schedule.type", "constant", kLrScheduleNames.choices(), "how the learning rate changes"),
      integers("lr_schedule.boundaries", json::array(), 0, "piecewise: the steps where the rate changes"),
      numbers("lr_schedule.values", "piecewise: the rate before the first boundary and after each"),
      choice("parallelism", "auto", kParallelismNames.choices(),
             "auto: on parameter servers in a PS job and for wide_deep, collectively otherwise"),
      choice("device", "auto", kDeviceNames.choices(), "auto: the rank's GPU where there is one; cpu: the host"),
      boolean("tf32", false, "allows TF32 tensor cores on a GPU"),
      positive("bucket_mb", 25, "collective: the size of a gradient bucket, MB"),
      // What it writes.
      text("output_dir", "output", "where the report, checkpoints and TensorBoard files go"),
      boolean("resume", false, "continues from output_dir's latest checkpoint"),
      boolean("checkpoint", true, "the leader saves a checkpoint after every epoch"),
      boolean("tensorboard", true, "writes TensorBoard event files under output_dir/tensorboard"),
      integer("log_every", 100, 1, "steps between log lines"),
      // Mixed precision (Fleet's strategy.amp; needs a GPU).
      boolean("amp.enabled", false, "trains in mixed precision"),
      choice("amp.dtype", "float16", {"float32", "float16", "bfloat16"}, "the half type: float16 or bfloat16"),
      choice("amp.level", "O1", {"O1", "O2"}, "O1: listed ops in half; O2: the whole model in half"),
      choice("amp.allreduce_dtype", "float32", {"float32", "float16", "bfloat16"}, "the type gradients are averaged in"),
      positive("amp.init_loss_scaling", 32768.0, "the first loss scale"),
      integer("amp.incr_every_n_steps", 1000, 1, "finite steps before the scale grows", kIntMax),
      integer("amp.decr_every_n_nan_or_inf", 2, 1, "overflowing steps before the scale shrinks", kIntMax),
      positive("amp.incr_ratio", 2.0, "the scale's growth; above 1"),
      positive("amp.decr_ratio", 0.5, "the scale's shrink; between 0 and 1"),
      boolean("amp.use_dynamic_loss_scaling", true, "adjusts the scale as overflows come and go"),
      texts("amp.custom_white_list", "ops run in half besides the defaults"),
      texts("amp.custom_black_list", "ops kept in float32"),
      // Parameter servers.
      choice("ps.mode", "sync", kPsModeNames.choices(), "how gradients reach the servers"),
      integer("ps.k_steps", 0, 0, "geo: local steps between sends", kIntMax),
      integer("ps.max_merge_var_num", 4, 1, "async: gradients merged into one send", kIntMax),
      integer("ps.send_queue_size", 16, 1, "async: sends queued before a step waits", kIntMax),
      text("ps.server_optimizer", "", "older configs' name for optimizer.type; may only repeat it"),
      text("ps.init_dir", "", "the servers load this save at start"),
      integer("ps.start_pass", 0, 0, "the pass a resumed run carries on from"),
      text("ps.save_dir", "", "where the servers save at the end (online: after every pass)"),
      choice("ps.accessor", "plain", ps::SparseTableSpec::kAccessorNames.choices(), "sparse rows: plain embeddings, or ctr rows with show/click statistics"),
      choice("ps.sparse_rule.type", "adagrad", common::optimizer_kind_names(ps::SparseRuleSpec::kinds()),
             "ctr rows: their optimizer"),
      positive("ps.sparse_rule.lr", 0.05, "ctr rows: the learning rate"),
      number("ps.sparse_rule.initial_g2sum", 3.0, 0, "adagrad: the initial sum of squared gradients"),
      number("ps.sparse_rule.initial_range", 0.0001, 0, "new rows start uniform in [-range, range]"),
      number("ps.sparse_rule.min_bound", -10.0, -ConfigKey::kNoLimit, "the smallest weight"),
      number("ps.sparse_rule.max_bound", 10.0, -ConfigKey::kNoLimit, "the largest weight; at least min_bound"),
      number("ps.ctr.nonclk_coeff", 0.1, 0, "a show without a click, in a row's score"),
      number("ps.ctr.click_coeff", 1.0, 0, "a click, in a row's score"),
      number("ps.ctr.show_click_decay_rate", 0.98, 0, "the daily decay of shows and clicks", 1),
      number("ps.ctr.delete_threshold", 0.8, 0, "a shrink deletes rows scoring below this"),
      integer("ps.ctr.delete_after_unseen_days", 30, 0, "a shrink deletes rows unseen this many days", kIntMax),
      number("ps.ctr.base_threshold", 1.5, 0, "a base save keeps rows scoring at least this"),
      number("ps.ctr.delta_threshold", 0.25, 0, "a delta save keeps rows changed at least this much"),
      choice("ps.admission.type", "always", ps::AdmissionSpec::kNames.choices(), "when a new feature gets a row"),
      integer("ps.admission.count", 1, 1, "count: the shows before a feature gets a row", kUint32Max),
      number("ps.admission.probability", 1.0, 0, "probability: the chance a show gives a new feature a row", 1),
      integer("ps.shrink_every_passes", 0, 0, "the servers shrink after every this many passes; 0: on request only"),
      choice("ps.storage", "memory", ps::StorageSpec::kNames.choices(), "ssd: hot rows in memory, the rest in RocksDB"),
      number("ps.memory_budget_mb", 0, 0, "ssd: MB of hot rows per server"),
      text("ps.ssd_dir", "", "ssd: where the rows on disk go; empty: output_dir/ps_ssd"),
      texts("ps.online.days", "online training: the days, in order (directory names); [] is not online"),
      integer("ps.online.passes_per_day", 1, 1, "online: passes in a day", 100000),
      text("ps.online.data_pattern", "", "online: a pass's data, with {day} and {pass} replaced"),
      integer("ps.online.wait_seconds", 0, 0, "online: how long a pass waits for its data; 0: not at all", kIntMax),
  };
}

std::string type_name(const ConfigKey& key) {
  switch (key.type) {
    case KeyType::kInteger: return "integer";
    case KeyType::kNumber: return "number";
    case KeyType::kBoolean: return "true|false";
    case KeyType::kText: return "string";
    case KeyType::kChoice: return "choice";
    case KeyType::kIntegers: return "list of integers";
    case KeyType::kNumbers: return "list of numbers";
    case KeyType::kTexts: return "list of strings";
  }
  return "?";
}

std::string bound(double value, bool integral) {
  return integral ? fmt::format("{}", static_cast<int64_t>(value)) : fmt::format("{}", value);
}

std::string range_of(const ConfigKey& key) {
  if (key.type == KeyType::kChoice) {
    std::string all;
    for (const auto& c : key.choices) all += (all.empty() ? "" : "|") + c;
    return all;
  }
  const bool integral = key.type == KeyType::kInteger || key.type == KeyType::kIntegers;
  const bool low = std::isfinite(key.min), high = std::isfinite(key.max);
  if (!low && !high) return "";
  const std::string item = key.type == KeyType::kIntegers ? "each " : "";
  if (low && high) return fmt::format("{}[{}, {}]", item, bound(key.min, integral), bound(key.max, integral));
  return fmt::format("{}{} {}", item, key.above_min ? ">" : ">=", bound(key.min, integral));
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = make_keys();
  return keys;
}

const ConfigKey& config_key(const std::string& name) {
  for (const ConfigKey& key : config_keys())
    if (key.name == name) return key;
  throw std::out_of_range("config key '" + name + "' is not in the key table");
}

json default_train_config() {
  json config = json::object();
  for (const ConfigKey& key : config_keys()) {
    std::string pointer = "/" + key.name;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    config[json::json_pointer(pointer)] = key.default_value;
  }
  return config;
}

std::string config_keys_help() {
  std::string out =
      "train's config keys: set them in a JSON file (--config FILE; dotted keys are nested objects) or with\n"
      "--set key=value. Each key: its type, default and range, then what it does.\n\n";
  for (const ConfigKey& key : config_keys()) {
    const std::string range = range_of(key);
    out += fmt::format("{}  ({}, default {}{})\n    {}\n", key.name, type_name(key), key.default_value.dump(),
                       range.empty() ? "" : ", " + range, key.doc);
  }
  return out;
}

}  // namespace paddle::runtime
