#pragma once
// CtrWorkload: wide&deep on click data (Criteo), its parameters on parameter servers (or in
// this process's tables when it runs alone), trained in the strategy's PS mode (ps_workload.h).
// After each pass every worker evaluates its share of the test set against the servers' values,
// and the shares' AUC counts (runtime/nn/bucketed_auc.h) are summed on the servers, in dense
// table "auc_counts": the AUC and log loss reported are the job's.

#include "ps/key_index.h"
#include "ps/table_spec.h"
#include "runtime/data/batch_loader.h"
#include "runtime/data/criteo.h"
#include "runtime/models/wide_deep.h"
#include "runtime/nn/bucketed_auc.h"
#include "runtime/train/workloads/ps_workload.h"

namespace paddle::runtime {

// The tables wide&deep keeps on the servers: dense 0 = the deep layers, dense 1 = the AUC
// counts of an evaluation; sparse 0 = embeddings, sparse 1 = wide weights.
inline constexpr uint32_t kDenseTable = 0, kMetricsTable = 1, kDenseTables = 2;
inline constexpr uint32_t kEmbeddingTable = 0, kWideTable = 1;
ps::TableSpecs wide_deep_tables(const TrainConfig& config);

class CtrWorkload : public PsWorkload {
 public:
  // Loads data_dir, unless the run is online (ps.online), whose passes bring their own data.
  CtrWorkload(const TrainConfig& config, Fleet& fleet);
  ~CtrWorkload() override;

  // Online: trains and evaluates on the data at `path` from now on, its ctr.test_fraction tail
  // held out. Throws common::DataError naming the path, or common::ConfigError when this worker
  // gets less than a batch of it.
  void use_pass_data(const std::string& path);

  const ps::TableSpecs& tables() const override { return tables_; }
  LogStyle log_style() const override { return LogStyle::kClickRate; }
  std::string describe() const override;
  nlohmann::json identity() const override;
  void begin_round(int64_t epoch) override;
  void skip_batches(int64_t n) override;
  std::optional<StepResult> train_step(int64_t step) override;
  Evaluation evaluate() override;
  bool evaluates_together() const override { return true; }

 private:
  std::vector<float> initial_dense() override { return model_.dense_values(); }
  ps::TableSpecs trained_tables() const override;
  // The sum of every worker's counts (each worker calls it with its own); nothing for worker 0
  // restarted in place after its dead self had zeroed them.
  std::optional<BucketedAuc> job_counts(const BucketedAuc& mine);
  // Moves the ctr.test_fraction tail of train_ into test_.
  void hold_out_test();
  // Whether a sparse table keeps rows on disk (ps.storage: ssd), so that prefetching pays.
  bool on_disk() const {
    for (const ps::SparseTableSpec& s : tables_.sparse)
      if (s.storage.kind == ps::StorageSpec::Kind::kSsd) return true;
    return false;
  }

  CtrDataset train_, test_;
  WideDeep model_;
  ps::TableSpecs tables_;
  std::vector<std::vector<size_t>> batches_;  // this epoch's, of this worker
  size_t next_batch_ = 0;
  ps::KeyIndex key_index_;  // a batch's distinct keys, its memory kept from batch to batch
};

}  // namespace paddle::runtime
