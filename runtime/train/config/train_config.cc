// TrainConfig's parsing (train_config.h): every key of a config read section by section
// through ConfigReader (config_reader.h), which checks each value against its row of the key
// table; the checks that join two keys are here.
#include "runtime/train/config/train_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/optimizer_kind.h"
#include "ps/table/update_rule.h"
#include "runtime/train/config/config_reader.h"

namespace paddle::runtime {
namespace {

using common::ConfigError;
using nlohmann::json;

ModelConfig parse_model(const ConfigReader& r) {
  ModelConfig m;
  m.kind = kModelNames.parse(r.choice("model"), "model");
  const auto channels = r.integers("cnn.channels");
  if (channels.size() != 2)
    throw ConfigError(fmt::format("cnn.channels: {} is not two channel counts", shown(r.at("cnn.channels"))));
  m.cnn.channels = {channels[0], channels[1]};
  m.cnn.hidden = r.integer("cnn.hidden");
  m.resnet.depth = static_cast<int>(r.integer("resnet.depth"));
  m.resnet.width = r.integer("resnet.width");
  RecommenderShape& rec = m.recommender;
  rec.id_dim = r.integer("recommender.id_dim");
  rec.category_dim = r.integer("recommender.category_dim");
  rec.bag_dim = r.integer("recommender.bag_dim");
  rec.hidden = r.integer("recommender.hidden");
  rec.scale = static_cast<float>(r.number("recommender.scale"));
  m.wide_deep.embedding_dim = r.integer("ctr.embedding_dim");
  m.wide_deep.hidden = r.integers("ctr.hidden");
  return m;
}

DataConfig parse_data(const ConfigReader& r) {
  DataConfig d;
  d.kind = kDatasetNames.parse(r.choice("dataset"), "dataset");
  d.dir = r.text("data_dir");
  d.train_samples = static_cast<size_t>(r.integer("train_samples"));
  d.test_samples = static_cast<size_t>(r.integer("test_samples"));
  d.image_shape = r.integers("image_shape");
  if (!d.image_shape.empty() && d.image_shape.size() != 3)
    throw ConfigError(fmt::format("image_shape: {} is not [C,H,W]", shown(r.at("image_shape"))));
  d.test_fraction = r.number("ctr.test_fraction");
  if (d.test_fraction >= 1) throw ConfigError(fmt::format("ctr.test_fraction: {} is not below 1", d.test_fraction));
  d.hash_dim = static_cast<uint64_t>(r.integer("ctr.hash_dim"));
  return d;
}

// The servers' rule: optimizer.type, which ps.server_optimizer (`given`, may be empty) may repeat.
common::OptimizerKind server_rule(const std::string& given, const std::string& optimizer_type) {
  const std::vector<std::string> rules = common::optimizer_kind_names(ps::UpdateRule::kinds());
  if (!given.empty() && std::find(rules.begin(), rules.end(), given) == rules.end())
    throw ConfigError(fmt::format("ps.server_optimizer: '{}' is not {}", given, choices_text(rules)));
  if (!given.empty() && given != optimizer_type)
    throw ConfigError(fmt::format("ps.server_optimizer: {} contradicts optimizer.type: {}; the servers run the program's "
                                  "optimizer, so drop ps.server_optimizer or make the two agree",
                                  given, optimizer_type));
  return common::optimizer_kind_named(optimizer_type).value();  // optimizer.type's choices are kinds' names
}

ps::SparseRuleSpec parse_sparse_rule(const ConfigReader& r) {
  ps::SparseRuleSpec rule = ps::SparseRuleSpec::parse(r.choice("ps.sparse_rule.type"));
  rule.learning_rate = static_cast<float>(r.number("ps.sparse_rule.lr"));
  rule.initial_g2sum = static_cast<float>(r.number("ps.sparse_rule.initial_g2sum"));
  rule.initial_range = static_cast<float>(r.number("ps.sparse_rule.initial_range"));
  rule.min_bound = static_cast<float>(r.number("ps.sparse_rule.min_bound"));
  rule.max_bound = static_cast<float>(r.number("ps.sparse_rule.max_bound"));
  if (rule.max_bound < rule.min_bound)
    throw ConfigError(fmt::format("ps.sparse_rule.max_bound: {} is less than ps.sparse_rule.min_bound {}", rule.max_bound,
                                  rule.min_bound));
  return rule;
}

SparseTablesConfig parse_sparse_tables(const ConfigReader& r) {
  SparseTablesConfig t;
  t.accessor = ps::SparseTableSpec::kAccessorNames.parse(r.choice("ps.accessor"), "ps.accessor");

  ps::CtrAccessorSpec& ctr = t.ctr;
  ctr.nonclk_coeff = static_cast<float>(r.number("ps.ctr.nonclk_coeff"));
  ctr.click_coeff = static_cast<float>(r.number("ps.ctr.click_coeff"));
  ctr.show_click_decay_rate = static_cast<float>(r.number("ps.ctr.show_click_decay_rate"));
  ctr.delete_threshold = static_cast<float>(r.number("ps.ctr.delete_threshold"));
  ctr.delete_after_unseen_days = static_cast<int>(r.integer("ps.ctr.delete_after_unseen_days"));
  ctr.base_threshold = static_cast<float>(r.number("ps.ctr.base_threshold"));
  ctr.delta_threshold = static_cast<float>(r.number("ps.ctr.delta_threshold"));
  ctr.embed_rule = ctr.embedx_rule = parse_sparse_rule(r);
  t.rule = r.choice("ps.sparse_rule.type");
  t.admission.kind = ps::AdmissionSpec::kNames.parse(r.choice("ps.admission.type"), "ps.admission.type");
  t.admission.count = static_cast<uint32_t>(r.integer("ps.admission.count"));
  t.admission.probability = static_cast<float>(r.number("ps.admission.probability"));
  t.shrink_every_passes = r.integer("ps.shrink_every_passes");
  t.storage = ps::StorageSpec::kNames.parse(r.choice("ps.storage"), "ps.storage");

  t.memory_budget_mb = r.number("ps.memory_budget_mb");
  if (t.storage == ps::StorageSpec::Kind::kSsd && t.memory_budget_mb == 0)
    throw ConfigError("ps.memory_budget_mb: ps.storage ssd needs a memory budget for the hot rows (MB per server)");
  t.ssd_dir = r.text("ps.ssd_dir");
  if (t.ssd_dir.empty()) t.ssd_dir = (std::filesystem::path(r.text("output_dir")) / "ps_ssd").string();
  return t;
}

OnlineConfig parse_online(const ConfigReader& r) {
  OnlineConfig o;
  o.days = r.strings("ps.online.days");
  o.passes_per_day = static_cast<int>(r.integer("ps.online.passes_per_day"));
  o.data_pattern = r.text("ps.online.data_pattern");
  o.wait_seconds = r.integer("ps.online.wait_seconds");
  if (o.enabled() && o.data_pattern.find("{day}") == std::string::npos && o.data_pattern.find("{pass}") == std::string::npos)
    throw ConfigError(fmt::format("ps.online.data_pattern: '{}' names neither {{day}} nor {{pass}}, so every pass would "
                                  "read the same data (example: data/{{day}}/{{pass}})",
                                  o.data_pattern));
  for (const auto& day : o.days)
    if (day.empty() || day.find('/') != std::string::npos || day == "." || day == "..")
      throw ConfigError(fmt::format("ps.online.days: '{}' is not a directory name", day));
  return o;
}

PsConfig parse_ps(const ConfigReader& r) {
  PsConfig ps;
  PsStrategy& s = ps.strategy;
  s.mode = kPsModeNames.parse(r.choice("ps.mode"), "ps.mode");
  s.k_steps = static_cast<int>(r.integer("ps.k_steps"));
  if (s.mode == PsMode::kGeo && s.k_steps == 0) throw ConfigError("ps.k_steps: ps.mode geo needs k_steps > 0");
  s.max_merge_var_num = static_cast<int>(r.integer("ps.max_merge_var_num"));
  s.send_queue_size = static_cast<int>(r.integer("ps.send_queue_size"));
  ps.server_optimizer = server_rule(r.text("ps.server_optimizer"), r.choice("optimizer.type"));
  ps.init_dir = r.text("ps.init_dir");
  ps.start_pass = r.integer("ps.start_pass");
  ps.save_dir = r.text("ps.save_dir");
  ps.sparse = parse_sparse_tables(r);
  ps.online = parse_online(r);
  if (ps.online.enabled() && ps.save_dir.empty())
    throw ConfigError("ps.online: an online run saves a delta after every pass and resumes from them, so it needs ps.save_dir");
  return ps;
}

// The amp group's keys are checked whether or not amp.enabled turns it on.
std::optional<AmpOptions> parse_amp(const ConfigReader& r) {
  AmpOptions a;
  a.names = kConfigAmpNames;
  a.policy.dtype = parse_float_dtype(r.choice("amp.dtype"), "amp.dtype");
  if (!is_half(a.policy.dtype)) throw ConfigError("amp.dtype: float32 is not float16 or bfloat16");
  a.policy.level = parse_amp_level(r.choice("amp.level"), "amp.level");
  a.policy.custom_white_list = r.strings("amp.custom_white_list");
  a.policy.custom_black_list = r.strings("amp.custom_black_list");
  check_amp_policy(a.policy, "amp");
  a.allreduce_dtype = parse_float_dtype(r.choice("amp.allreduce_dtype"), "amp.allreduce_dtype");
  LossScalingOptions& l = a.scaling;
  l.init_loss_scaling = static_cast<float>(r.number("amp.init_loss_scaling"));
  l.incr_every_n_steps = static_cast<int>(r.integer("amp.incr_every_n_steps"));
  l.decr_every_n_nan_or_inf = static_cast<int>(r.integer("amp.decr_every_n_nan_or_inf"));
  l.incr_ratio = static_cast<float>(r.number("amp.incr_ratio"));
  l.decr_ratio = static_cast<float>(r.number("amp.decr_ratio"));
  l.use_dynamic_loss_scaling = r.boolean("amp.use_dynamic_loss_scaling");
  check_loss_scaling(l, "amp");
  if (!r.boolean("amp.enabled")) return std::nullopt;
  return a;
}

}  // namespace


TrainConfig parse_train_config(const json& merged) {
  const ConfigReader r(merged);
  TrainConfig c;
  c.model = parse_model(r);
  c.data = parse_data(r);
  c.batch_size = static_cast<size_t>(r.integer("batch_size"));
  c.epochs = r.integer("epochs");
  c.max_steps = r.integer("max_steps");
  c.seed = static_cast<uint32_t>(r.integer("seed"));
  c.shuffle = r.boolean("shuffle");
  c.prefetch = static_cast<size_t>(r.integer("prefetch"));
  c.optimizer.kind = parse_optimizer_kind(r.choice("optimizer.type"));
  c.optimizer.momentum = static_cast<float>(r.number("optimizer.momentum"));
  c.optimizer.weight_decay = static_cast<float>(r.number("optimizer.weight_decay"));
  c.lr_schedule.kind = kLrScheduleNames.parse(r.choice("lr_schedule.type"), "lr_schedule.type");
  c.lr_schedule.base_lr = static_cast<float>(r.number("optimizer.lr"));
  c.lr_schedule.boundaries = r.integers("lr_schedule.boundaries");
  c.lr_schedule.values = r.numbers("lr_schedule.values");
  c.lr_schedule.epochs = std::max<int64_t>(1, c.epochs);
  c.lr_schedule.validate();
  c.ps = parse_ps(r);
  if (c.ps.online.enabled() && c.model.kind != ModelKind::kWideDeep)
    throw ConfigError(fmt::format("ps.online: model {} trains on a fixed data set; online passes are for model wide_deep",
                                  kModelNames.name(c.model.kind)));
  c.output_dir = r.text("output_dir");
  c.resume = r.boolean("resume");
  c.checkpoint = r.boolean("checkpoint");
  c.tensorboard = r.boolean("tensorboard");
  c.log_every = r.integer("log_every");
  c.bucket_mb = r.number("bucket_mb");
  c.device = kDeviceNames.parse(r.choice("device"), "device");
  c.tf32 = r.boolean("tf32");
  c.amp = parse_amp(r);
  c.parallelism = kParallelismNames.parse(r.choice("parallelism"), "parallelism");
  return c;
}

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_train_config(merge_train_config(path, overrides));
}

ShardSpec TrainConfig::shard(int rank, int world) const {
  ShardSpec spec;
  spec.batch_size = batch_size;
  spec.rank = rank;
  spec.world = world;
  spec.seed = seed;
  spec.shuffle = shuffle;
  spec.prefetch = prefetch;
  return spec;
}

bool TrainConfig::uses_parameter_servers(JobKind kind) const {
  const bool ps_only = model.kind == ModelKind::kWideDeep;
  bool ps = false;
  switch (parallelism) {
    case Parallelism::kAuto: ps = ps_only || kind == JobKind::kParameterServer; break;
    case Parallelism::kParameterServer: ps = true; break;
    case Parallelism::kCollective:
      if (ps_only) throw ConfigError("parallelism: model wide_deep trains on parameter servers only");
      break;
  }
  return ps;
}

DistributedStrategy TrainConfig::strategy() const {
  DistributedStrategy s;
  s.fuse_grad_size_in_MB = bucket_mb;
  s.tf32 = tf32;
  s.use_cpu = device == DevicePreference::kCpu;
  s.ps = ps.strategy;
  s.amp = amp;
  return s;
}

}  // namespace paddle::runtime
