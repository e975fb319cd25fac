// TrainConfig's parsing (train_config.h): each row of the key table (config_keys.h) reads its
// key into its field, checked by ConfigReader (config_reader.h); the checks that join two keys,
// and the settings that follow from others, are here.
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

// The servers' rule: optimizer.type, which ps.server_optimizer (`given`, may be empty) may repeat.
void check_server_rule(const std::string& given, common::OptimizerKind optimizer) {
  const std::string optimizer_type(common::optimizer_kind_name(optimizer));
  const std::vector<std::string> rules = common::optimizer_kind_names(ps::UpdateRule::kinds());
  if (!given.empty() && std::find(rules.begin(), rules.end(), given) == rules.end())
    throw ConfigError(fmt::format("ps.server_optimizer: '{}' is not {}", given, choices_text(rules)));
  if (!given.empty() && given != optimizer_type)
    throw ConfigError(fmt::format("ps.server_optimizer: {} contradicts optimizer.type: {}; the servers run the program's "
                                  "optimizer, so drop ps.server_optimizer or make the two agree",
                                  given, optimizer_type));
}

void check_data(const DataConfig& d, const ConfigReader& r) {
  if (!d.image_shape.empty() && d.image_shape.size() != 3)
    throw ConfigError(fmt::format("image_shape: {} is not [C,H,W]", shown(r.at("image_shape"))));
  if (d.test_fraction >= 1) throw ConfigError(fmt::format("ctr.test_fraction: {} is not below 1", d.test_fraction));
}

void join_sparse_tables(SparseTablesConfig& t, const std::string& output_dir) {
  ps::SparseRuleSpec& rule = t.ctr.embed_rule;
  if (rule.max_bound < rule.min_bound)
    throw ConfigError(fmt::format("ps.sparse_rule.max_bound: {} is less than ps.sparse_rule.min_bound {}", rule.max_bound,
                                  rule.min_bound));
  t.ctr.embedx_rule = rule;
  if (t.storage == ps::StorageSpec::Kind::kSsd && t.memory_budget_mb == 0)
    throw ConfigError("ps.memory_budget_mb: ps.storage ssd needs a memory budget for the hot rows (MB per server)");
  if (t.ssd_dir.empty()) t.ssd_dir = (std::filesystem::path(output_dir) / "ps_ssd").string();
}

void check_online(const OnlineConfig& o) {
  if (o.enabled() && o.data_pattern.find("{day}") == std::string::npos && o.data_pattern.find("{pass}") == std::string::npos)
    throw ConfigError(fmt::format("ps.online.data_pattern: '{}' names neither {{day}} nor {{pass}}, so every pass would "
                                  "read the same data (example: data/{{day}}/{{pass}})",
                                  o.data_pattern));
  for (const auto& day : o.days)
    if (day.empty() || day.find('/') != std::string::npos || day == "." || day == "..")
      throw ConfigError(fmt::format("ps.online.days: '{}' is not a directory name", day));
}

void join_ps(PsConfig& ps, const TrainConfig& c, const ConfigReader& r) {
  if (ps.strategy.mode == PsMode::kGeo && ps.strategy.k_steps == 0)
    throw ConfigError("ps.k_steps: ps.mode geo needs k_steps > 0");
  check_server_rule(r.text("ps.server_optimizer"), c.optimizer.kind);
  ps.server_optimizer = c.optimizer.kind;
  join_sparse_tables(ps.sparse, c.output_dir);
  check_online(ps.online);
  if (ps.online.enabled() && ps.save_dir.empty())
    throw ConfigError("ps.online: an online run saves a delta after every pass and resumes from them, so it needs ps.save_dir");
  if (ps.online.enabled() && c.model.kind != ModelKind::kWideDeep)
    throw ConfigError(fmt::format("ps.online: model {} trains on a fixed data set; online passes are for model wide_deep",
                                  kModelNames.name(c.model.kind)));
}

// The amp group's keys are checked whether or not amp.enabled turns it on.
void check_amp(const AmpOptions& a) {
  if (!is_half(a.policy.dtype)) throw ConfigError("amp.dtype: float32 is not float16 or bfloat16");
  check_amp_policy(a.policy, "amp");
  check_loss_scaling(a.scaling, "amp");
}

}  // namespace

TrainConfig parse_train_config(const json& merged) {
  const ConfigReader r(merged);
  TrainConfig c;
  for (const ConfigKey& key : config_keys())
    if (key.read) key.read(r, c);
  // The checks that join two keys, and the settings that follow from others.
  check_data(c.data, r);
  c.lr_schedule.epochs = std::max<int64_t>(1, c.epochs);
  c.lr_schedule.validate();
  join_ps(c.ps, c, r);
  check_amp(c.amp.options);
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
  if (amp.enabled) s.amp = amp.options;
  return s;
}

}  // namespace paddle::runtime
