#pragma once
// TrainConfig: a training run's settings, parsed once into typed fields. The source is a JSON
// file (configs/*.json) overlaid on the defaults, then `--set key=value` overrides (dotted keys
// reach into objects: --set optimizer.lr=0.1). A field's initializer here (or in the struct it
// is) is its key's default; every key, with its type, range and field, is a row of one table
// (config_keys.h, `train --help-config`). Unknown keys, values of the wrong type and values out
// of range fail at start with a common::ConfigError naming the key.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/data/batch_loader.h"
#include "runtime/distributed/distributed_strategy.h"
#include "ps/table_spec.h"
#include "runtime/distributed/topology.h"
#include "runtime/models/model_config.h"
#include "common/enum_names.h"
#include "runtime/nn/lr_schedule.h"
#include "runtime/nn/optimizer.h"
#include "runtime/train/config/config_keys.h"

namespace paddle::runtime {

enum class DatasetKind { kUciHousing, kFashionMnist, kMovieLens, kCriteo, kCriteoSlot };
inline constexpr common::EnumNames<DatasetKind, 5> kDatasetNames{{{{DatasetKind::kUciHousing, "uci_housing"},
                                                                  {DatasetKind::kFashionMnist, "fashion_mnist"},
                                                                  {DatasetKind::kMovieLens, "movielens"},
                                                                  {DatasetKind::kCriteo, "criteo"},
                                                                  {DatasetKind::kCriteoSlot, "criteo_slot"}}}};
// How the workers share the model: "auto" trains on parameter servers in a PS job (launched
// with --server_num or --servers) and for models that only train that way (wide_deep), and
// collectively otherwise; "ps" keeps the tables in this process when it runs alone.
enum class Parallelism { kAuto, kCollective, kParameterServer };
inline constexpr common::EnumNames<Parallelism, 3> kParallelismNames{
    {{{Parallelism::kAuto, "auto"}, {Parallelism::kCollective, "collective"}, {Parallelism::kParameterServer, "ps"}}}};
// Where a collective model runs: the rank's device (its GPU with NCCL), or the host.
enum class DevicePreference { kAuto, kCpu };
inline constexpr common::EnumNames<DevicePreference, 2> kDeviceNames{
    {{{DevicePreference::kAuto, "auto"}, {DevicePreference::kCpu, "cpu"}}}};

struct DataConfig {
  DatasetKind kind = DatasetKind::kFashionMnist;
  std::string dir = "/usr/share/datasets/fashion-mnist";  // "~/" is the home directory
  size_t train_samples = 0;          // 0: all
  size_t test_samples = 0;           // 0: all
  std::vector<int64_t> image_shape;  // [C,H,W] to resize images to; empty keeps theirs
  double test_fraction = 0.2;        // click data: the tail held out for evaluation
  // Click data: ctr.hash_dim > 0 folds the 64-bit feature signs into [0, hash_dim), for configs
  // that ask for a hashed vocabulary; 0 (the default) keeps them whole.
  uint64_t hash_dim = 0;
};

// Streaming training (ps.online), PaddleRec's online trainer: for each day, passes 1 to
// passes_per_day, each on the files of data_pattern with {day} and {pass} replaced (a file or a
// directory). After every pass the servers save a delta to ps.save_dir/DAY/PASS; after a day's
// last pass they shrink and save a base to ps.save_dir/DAY/base. A run started again carries on
// at the first pass not saved (ps.save_dir/donefile.txt lists the saves).
struct OnlineConfig {
  std::vector<std::string> days;  // empty: not an online run
  int passes_per_day = 1;
  std::string data_pattern;
  // How long a worker waits for a pass's data to arrive (online_passes.h pass_data_ready), saying
  // so every few seconds; 0: data not there is an error at once.
  int64_t wait_seconds = 0;
  bool enabled() const { return !days.empty(); }
};

// The sparse tables' value layout and upkeep (ps/table_spec.h): ps.accessor "plain" rows are the
// embedding and the program's optimizer state; "ctr" rows keep show/click statistics and train
// with ps.sparse_rule; ps.admission decides when a new feature gets a row (either accessor).
struct SparseTablesConfig {
  ps::SparseTableSpec::Accessor accessor = ps::SparseTableSpec::Accessor::kPlain;
  ps::CtrAccessorSpec ctr;
  ps::AdmissionSpec admission{.count = 1};
  int64_t shrink_every_passes = 0;  // 0: only when the program (or an online day's end) asks
  // ps.storage: memory, or ssd (hot rows in ps.memory_budget_mb MB per server, the rest in
  // RocksDB under ps.ssd_dir, default output_dir/ps_ssd; ps/table/disk_tier.h).
  ps::StorageSpec::Kind storage = ps::StorageSpec::Kind::kMemory;
  double memory_budget_mb = 0;  // may be a fraction (tests)
  std::string ssd_dir;
};

struct PsConfig {
  PsStrategy strategy;  // ps.mode, ps.k_steps, ps.send_queue_size, ps.max_merge_var_num
  // The servers' update rule (ps/table/update_rule.h): the program's optimizer.type (with its lr,
  // momentum and weight decay), as Paddle's servers run the program's optimizer. ps.server_optimizer, kept for
  // older configs, may repeat it; a different value is an error naming both keys.
  common::OptimizerKind server_optimizer = common::OptimizerKind::kMomentum;
  std::string init_dir;                  // servers load this checkpoint at start
  int64_t start_pass = 0;                // the pass a resumed run carries on from
  std::string save_dir;                  // worker 0 has the servers save here at the end
  SparseTablesConfig sparse;
  OnlineConfig online;
};

// Mixed precision (Fleet's strategy.amp), the config's "amp" group: amp.enabled, amp.dtype,
// amp.level, amp.allreduce_dtype, the op lists and the loss-scaling keys under Fleet's
// amp_configs names (amp.init_loss_scaling, ...). Fleet checks what this build can run of it
// (a GPU, O1, a float32 all-reduce; not on parameter servers), naming the amp.* key.
struct AmpConfig {
  bool enabled = false;
  AmpOptions options = [] {
    AmpOptions o;
    o.names = kConfigAmpNames;  // its errors name amp.* keys
    return o;
  }();
};

struct TrainConfig {
  ModelConfig model;
  DataConfig data;
  size_t batch_size = 64;  // per worker
  int64_t epochs = 2;
  int64_t max_steps = 0;  // 0: no limit
  uint32_t seed = 2024;
  bool shuffle = ShardSpec{}.shuffle;    // the loader's defaults (batch_loader.h)
  size_t prefetch = ShardSpec{}.prefetch;
  OptimizerConfig optimizer{.kind = OptimizerKind::kMomentum};
  LrSchedule lr_schedule;  // base_lr is optimizer.lr; steps_per_epoch is set once the data is loaded
  PsConfig ps;
  std::string output_dir = "output";
  bool resume = false;
  bool checkpoint = true;
  bool tensorboard = true;  // event files under output_dir/tensorboard/ (the leader's, and each server's)
  int64_t log_every = 100;
  double bucket_mb = DistributedStrategy{}.fuse_grad_size_in_MB;
  DevicePreference device = DevicePreference::kAuto;
  bool tf32 = DistributedStrategy{}.tf32;
  AmpConfig amp;

  Parallelism parallelism = Parallelism::kAuto;

  // Whether this process trains on parameter servers, in a job of `kind`. Throws
  // common::ConfigError when the model cannot train the way "parallelism" asks.
  bool uses_parameter_servers(JobKind kind) const;
  // How worker `rank` of `world` cuts the data.
  ShardSpec shard(int rank, int world) const;
  // The Fleet strategy these settings ask for (bucket size, TF32, device, PS mode, AMP).
  DistributedStrategy strategy() const;
};

// The names configs use: "cnn", "uci_housing", ... (for reports and messages).

// Defaults, overlaid with the file at `path` (if not empty), then with each "key=value"
// override. Values parse as JSON when they can (numbers, true/false, lists), else as strings.
nlohmann::json merge_train_config(const std::string& path, const std::vector<std::string>& overrides);

// The typed settings of a merged config; throws common::ConfigError naming the key at fault.
TrainConfig parse_train_config(const nlohmann::json& merged);

// merge_train_config, then parse_train_config.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace paddle::runtime
