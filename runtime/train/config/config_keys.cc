// The key table itself: one row per key, grouped as configs group them, each naming its field.
#include "runtime/train/config/config_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "common/optimizer_kind.h"
#include "ps/table/sparse_rule.h"
#include "ps/table_spec.h"
#include "runtime/distributed/distributed_strategy.h"
#include "runtime/nn/optimizer.h"
#include "runtime/train/config/config_reader.h"
#include "runtime/train/config/train_config.h"

namespace paddle::runtime {
namespace {

using nlohmann::json;

constexpr double kIntMax = 2147483647.0;
constexpr double kUint32Max = 4294967295.0;
constexpr double kNoLimit = ConfigKey::kNoLimit;

// A float default as JSON by its shortest decimal form (0.05f shows as 0.05, not 0.0500000007).
json shown_number(double value) { return value; }
json shown_number(float value) { return std::stod(fmt::format("{}", value)); }

// Choice names for the enums whose names live in a function rather than an EnumNames.
struct OptimizerKindNames {
  std::span<const common::OptimizerKind> kinds;
  std::vector<std::string> choices() const { return common::optimizer_kind_names(kinds); }
  std::string_view name(common::OptimizerKind kind) const { return common::optimizer_kind_name(kind); }
  common::OptimizerKind parse(const std::string& text, const std::string&) const {
    return common::optimizer_kind_named(text).value();  // one of choices(): the reader checked
  }
};
struct FloatDTypeNames {
  std::vector<std::string> choices() const { return {"float32", "float16", "bfloat16"}; }
  std::string name(DType dtype) const { return dtype_name(dtype); }
  DType parse(const std::string& text, const std::string& key) const { return parse_float_dtype(text, key); }
};
struct AmpLevelNames {
  std::vector<std::string> choices() const { return {"O1", "O2"}; }
  std::string name(AmpLevel level) const { return level == AmpLevel::kO2 ? "O2" : "O1"; }
  AmpLevel parse(const std::string& text, const std::string& key) const { return parse_amp_level(text, key); }
};

// The type of the field a FIELD accessor reaches.
template <class Field>
using FieldType = std::remove_reference_t<std::invoke_result_t<Field, TrainConfig&>>;

// Builds the rows: each takes its default from the field it sets, in a default TrainConfig.
class KeyTable {
 public:
  template <class Field>
  void integer(std::string name, Field field, double min, std::string doc, double max = kNoLimit) {
    using T = FieldType<Field>;
    add({name, KeyType::kInteger, static_cast<int64_t>(field(defaults_)), min, max, false, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = static_cast<T>(r.integer(name)); }});
  }
  template <class Field>
  void number(std::string name, Field field, double min, std::string doc, double max = kNoLimit) {
    add_number(std::move(name), field, min, max, false, std::move(doc));
  }
  template <class Field>
  void positive(std::string name, Field field, std::string doc) {
    add_number(std::move(name), field, 0, kNoLimit, true, std::move(doc));
  }
  template <class Field>
  void boolean(std::string name, Field field, std::string doc) {
    add({name, KeyType::kBoolean, field(defaults_), -kNoLimit, kNoLimit, false, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = r.boolean(name); }});
  }
  template <class Field>
  void text(std::string name, Field field, std::string doc) {
    add({name, KeyType::kText, field(defaults_), -kNoLimit, kNoLimit, false, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = r.text(name); }});
  }
  // A text key without a field of its own: a check that joins it with another key reads it.
  void joined_text(std::string name, std::string value, std::string doc) {
    add({std::move(name), KeyType::kText, std::move(value), -kNoLimit, kNoLimit, false, {}, std::move(doc), {}});
  }
  // `names` gives the choices, a value's name and the parse: an EnumNames, or one of the above.
  template <class Field, class Names>
  void choice(std::string name, Field field, Names names, std::string doc) {
    add({name, KeyType::kChoice, std::string(names.name(field(defaults_))), -kNoLimit, kNoLimit, false, names.choices(),
         std::move(doc), [name, field, names](const ConfigReader& r, TrainConfig& c) {
           field(c) = names.parse(r.choice(name), name);
         }});
  }
  template <class Field>
  void integers(std::string name, Field field, double min, std::string doc) {
    using T = FieldType<Field>;
    const T& value = field(defaults_);
    add({name, KeyType::kIntegers, json(std::vector<int64_t>(value.begin(), value.end())), min, kNoLimit, false, {},
         std::move(doc), [name, field](const ConfigReader& r, TrainConfig& c) {
           const std::vector<int64_t> items = r.integers(name);
           if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
             field(c) = items;
           } else {  // a fixed count, std::array
             T& out = field(c);
             if (items.size() != out.size())
               throw common::ConfigError(fmt::format("{}: {} is not {} integers", name, shown(r.at(name)), out.size()));
             std::copy(items.begin(), items.end(), out.begin());
           }
         }});
  }
  template <class Field>
  void numbers(std::string name, Field field, std::string doc) {
    add({name, KeyType::kNumbers, field(defaults_), -kNoLimit, kNoLimit, false, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = r.numbers(name); }});
  }
  template <class Field>
  void texts(std::string name, Field field, std::string doc) {
    add({name, KeyType::kTexts, field(defaults_), -kNoLimit, kNoLimit, false, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = r.strings(name); }});
  }

  std::vector<ConfigKey> rows() && { return std::move(rows_); }

 private:
  template <class Field>
  void add_number(std::string name, Field field, double min, double max, bool above_min, std::string doc) {
    using T = FieldType<Field>;
    add({name, KeyType::kNumber, shown_number(field(defaults_)), min, max, above_min, {}, std::move(doc),
         [name, field](const ConfigReader& r, TrainConfig& c) { field(c) = static_cast<T>(r.number(name)); }});
  }
  void add(ConfigKey key) { rows_.push_back(std::move(key)); }

  TrainConfig defaults_;
  std::vector<ConfigKey> rows_;
};

// The field of a TrainConfig that a row sets: FIELD(ps.sparse.ctr.click_coeff).
#define FIELD(member) [](TrainConfig& c) -> auto& { return c.member; }

std::vector<ConfigKey> make_keys() {
  KeyTable t;
  // What is trained, on what.
  t.choice("model", FIELD(model.kind), kModelNames, "the model to train");
  t.choice("dataset", FIELD(data.kind), kDatasetNames, "the data set it trains on");
  t.text("data_dir", FIELD(data.dir), "the data set's directory; ~/ is the home directory");
  t.integer("train_samples", FIELD(data.train_samples), 0, "training samples used; 0: all");
  t.integer("test_samples", FIELD(data.test_samples), 0, "test samples used; 0: all");
  t.integers("image_shape", FIELD(data.image_shape), 1, "[C,H,W] to resize images to; [] keeps theirs");
  t.integers("cnn.channels", FIELD(model.cnn.channels), 1, "the two convolutions' output channels");
  t.integer("cnn.hidden", FIELD(model.cnn.hidden), 1, "the width of the hidden layer");
  t.integer("resnet.depth", FIELD(model.resnet.depth), 1, "the bottleneck ResNet's layers: 14, 26, 50, 101 or 152", kIntMax);
  t.integer("resnet.width", FIELD(model.resnet.width), 1, "the channels of the first stage");
  t.integer("recommender.id_dim", FIELD(model.recommender.id_dim), 1, "the width of the user and movie id embeddings");
  t.integer("recommender.category_dim", FIELD(model.recommender.category_dim), 1, "the width of the category embeddings");
  t.integer("recommender.bag_dim", FIELD(model.recommender.bag_dim), 1, "the width of the title's bag of words");
  t.integer("recommender.hidden", FIELD(model.recommender.hidden), 1, "the width of each tower's hidden layer");
  t.positive("recommender.scale", FIELD(model.recommender.scale), "the rating scale the cosine similarity is stretched to");
  t.integer("ctr.hash_dim", FIELD(data.hash_dim), 0, "folds feature signs into [0, hash_dim); 0 keeps them whole");
  t.integer("ctr.embedding_dim", FIELD(model.wide_deep.embedding_dim), 1, "the width of wide_deep's sparse embeddings");
  t.integers("ctr.hidden", FIELD(model.wide_deep.hidden), 1, "the widths of wide_deep's deep layers");
  t.number("ctr.test_fraction", FIELD(data.test_fraction), 0, "the tail of click data held out for evaluation; below 1");
  // How it trains.
  t.integer("batch_size", FIELD(batch_size), 1, "samples per step, per worker");
  t.integer("epochs", FIELD(epochs), 0, "passes over the training data");
  t.integer("max_steps", FIELD(max_steps), 0, "stops the run after this many steps; 0: no limit");
  t.integer("seed", FIELD(seed), 0, "seeds the initialization and the shuffles", kUint32Max);
  t.boolean("shuffle", FIELD(shuffle), "shuffles the training data every epoch");
  t.integer("prefetch", FIELD(prefetch), 1, "batches the loader prepares ahead");
  t.choice("optimizer.type", FIELD(optimizer.kind), OptimizerKindNames{optimizer_kinds()},
           "the optimizer; on parameter servers, their dense tables' rule too");
  t.number("optimizer.lr", FIELD(lr_schedule.base_lr), 0, "the base learning rate");
  t.number("optimizer.momentum", FIELD(optimizer.momentum), 0, "momentum: the velocity's decay");
  t.number("optimizer.weight_decay", FIELD(optimizer.weight_decay), 0, "L2 decay added to every gradient");
  t.choice("lr_schedule.type", FIELD(lr_schedule.kind), kLrScheduleNames, "how the learning rate changes");
  t.integers("lr_schedule.boundaries", FIELD(lr_schedule.boundaries), 0, "piecewise: the steps where the rate changes");
  t.numbers("lr_schedule.values", FIELD(lr_schedule.values), "piecewise: the rate before the first boundary and after each");
  t.choice("parallelism", FIELD(parallelism), kParallelismNames,
           "auto: on parameter servers in a PS job and for wide_deep, collectively otherwise");
  t.choice("device", FIELD(device), kDeviceNames, "auto: the rank's GPU where there is one; cpu: the host");
  t.boolean("tf32", FIELD(tf32), "allows TF32 tensor cores on a GPU");
  t.positive("bucket_mb", FIELD(bucket_mb), "collective: the size of a gradient bucket, MB");
  // What it writes.
  t.text("output_dir", FIELD(output_dir), "where the report, checkpoints and TensorBoard files go");
  t.boolean("resume", FIELD(resume), "continues from output_dir's latest checkpoint");
  t.boolean("checkpoint", FIELD(checkpoint), "the leader saves a checkpoint after every epoch");
  t.boolean("tensorboard", FIELD(tensorboard), "writes TensorBoard event files under output_dir/tensorboard");
  t.integer("log_every", FIELD(log_every), 1, "steps between log lines");
  // Mixed precision (Fleet's strategy.amp; needs a GPU).
  t.boolean("amp.enabled", FIELD(amp.enabled), "trains in mixed precision");
  t.choice("amp.dtype", FIELD(amp.options.policy.dtype), FloatDTypeNames{}, "the half type: float16 or bfloat16");
  t.choice("amp.level", FIELD(amp.options.policy.level), AmpLevelNames{}, "O1: listed ops in half; O2: the whole model in half");
  t.choice("amp.allreduce_dtype", FIELD(amp.options.allreduce_dtype), FloatDTypeNames{}, "the type gradients are averaged in");
  t.positive("amp.init_loss_scaling", FIELD(amp.options.scaling.init_loss_scaling), "the first loss scale");
  t.integer("amp.incr_every_n_steps", FIELD(amp.options.scaling.incr_every_n_steps), 1, "finite steps before the scale grows",
            kIntMax);
  t.integer("amp.decr_every_n_nan_or_inf", FIELD(amp.options.scaling.decr_every_n_nan_or_inf), 1,
            "overflowing steps before the scale shrinks", kIntMax);
  t.positive("amp.incr_ratio", FIELD(amp.options.scaling.incr_ratio), "the scale's growth; above 1");
  t.positive("amp.decr_ratio", FIELD(amp.options.scaling.decr_ratio), "the scale's shrink; between 0 and 1");
  t.boolean("amp.use_dynamic_loss_scaling", FIELD(amp.options.scaling.use_dynamic_loss_scaling),
            "adjusts the scale as overflows come and go");
  t.texts("amp.custom_white_list", FIELD(amp.options.policy.custom_white_list), "ops run in half besides the defaults");
  t.texts("amp.custom_black_list", FIELD(amp.options.policy.custom_black_list), "ops kept in float32");
  // Parameter servers.
  t.choice("ps.mode", FIELD(ps.strategy.mode), kPsModeNames, "how gradients reach the servers");
  t.integer("ps.k_steps", FIELD(ps.strategy.k_steps), 0, "geo: local steps between sends", kIntMax);
  t.integer("ps.max_merge_var_num", FIELD(ps.strategy.max_merge_var_num), 1, "async: gradients merged into one send", kIntMax);
  t.integer("ps.send_queue_size", FIELD(ps.strategy.send_queue_size), 1, "async: sends queued before a step waits", kIntMax);
  t.joined_text("ps.server_optimizer", "", "older configs' name for optimizer.type; may only repeat it");
  t.text("ps.init_dir", FIELD(ps.init_dir), "the servers load this save at start");
  t.integer("ps.start_pass", FIELD(ps.start_pass), 0, "the pass a resumed run carries on from");
  t.text("ps.save_dir", FIELD(ps.save_dir), "where the servers save at the end (online: after every pass)");
  t.choice("ps.accessor", FIELD(ps.sparse.accessor), ps::SparseTableSpec::kAccessorNames,
           "sparse rows: plain embeddings, or ctr rows with show/click statistics");
  // One rule for both parts of a ctr row: embed_rule here, copied to embedx_rule (train_config.cc).
  t.choice("ps.sparse_rule.type", FIELD(ps.sparse.ctr.embed_rule.kind), OptimizerKindNames{ps::SparseRuleSpec::kinds()},
           "ctr rows: their optimizer");
  t.positive("ps.sparse_rule.lr", FIELD(ps.sparse.ctr.embed_rule.learning_rate), "ctr rows: the learning rate");
  t.number("ps.sparse_rule.initial_g2sum", FIELD(ps.sparse.ctr.embed_rule.initial_g2sum), 0,
           "adagrad: the initial sum of squared gradients");
  t.number("ps.sparse_rule.initial_range", FIELD(ps.sparse.ctr.embed_rule.initial_range), 0,
           "new rows start uniform in [-range, range]");
  t.number("ps.sparse_rule.min_bound", FIELD(ps.sparse.ctr.embed_rule.min_bound), -kNoLimit, "the smallest weight");
  t.number("ps.sparse_rule.max_bound", FIELD(ps.sparse.ctr.embed_rule.max_bound), -kNoLimit,
           "the largest weight; at least min_bound");
  t.number("ps.ctr.nonclk_coeff", FIELD(ps.sparse.ctr.nonclk_coeff), 0, "a show without a click, in a row's score");
  t.number("ps.ctr.click_coeff", FIELD(ps.sparse.ctr.click_coeff), 0, "a click, in a row's score");
  t.number("ps.ctr.show_click_decay_rate", FIELD(ps.sparse.ctr.show_click_decay_rate), 0,
           "the daily decay of shows and clicks", 1);
  t.number("ps.ctr.delete_threshold", FIELD(ps.sparse.ctr.delete_threshold), 0, "a shrink deletes rows scoring below this");
  t.integer("ps.ctr.delete_after_unseen_days", FIELD(ps.sparse.ctr.delete_after_unseen_days), 0,
            "a shrink deletes rows unseen this many days", kIntMax);
  t.number("ps.ctr.base_threshold", FIELD(ps.sparse.ctr.base_threshold), 0, "a base save keeps rows scoring at least this");
  t.number("ps.ctr.delta_threshold", FIELD(ps.sparse.ctr.delta_threshold), 0,
           "a delta save keeps rows changed at least this much");
  t.choice("ps.admission.type", FIELD(ps.sparse.admission.kind), ps::AdmissionSpec::kNames, "when a new feature gets a row");
  t.integer("ps.admission.count", FIELD(ps.sparse.admission.count), 1, "count: the shows before a feature gets a row",
            kUint32Max);
  t.number("ps.admission.probability", FIELD(ps.sparse.admission.probability), 0,
           "probability: the chance a show gives a new feature a row", 1);
  t.integer("ps.shrink_every_passes", FIELD(ps.sparse.shrink_every_passes), 0,
            "the servers shrink after every this many passes; 0: on request only");
  t.choice("ps.storage", FIELD(ps.sparse.storage), ps::StorageSpec::kNames, "ssd: hot rows in memory, the rest in RocksDB");
  t.number("ps.memory_budget_mb", FIELD(ps.sparse.memory_budget_mb), 0, "ssd: MB of hot rows per server");
  t.text("ps.ssd_dir", FIELD(ps.sparse.ssd_dir), "ssd: where the rows on disk go; empty: output_dir/ps_ssd");
  t.texts("ps.online.days", FIELD(ps.online.days), "online training: the days, in order (directory names); [] is not online");
  t.integer("ps.online.passes_per_day", FIELD(ps.online.passes_per_day), 1, "online: passes in a day", 100000);
  t.text("ps.online.data_pattern", FIELD(ps.online.data_pattern), "online: a pass's data, with {day} and {pass} replaced");
  t.integer("ps.online.wait_seconds", FIELD(ps.online.wait_seconds), 0,
            "online: how long a pass waits for its data; 0: not at all", kIntMax);
  return std::move(t).rows();
}

#undef FIELD

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
