#pragma once
// CtrWorkload: wide&deep on click data (Criteo), its parameters on parameter servers (or in
// this process's tables when it runs alone), trained in the strategy's PS mode (ps_workload.h).
// Worker 0 evaluates the log loss and AUC after each pass against the servers' values.

#include "ps/table_spec.h"
#include "runtime/data/batch_loader.h"
#include "runtime/data/criteo.h"
#include "runtime/models/wide_deep.h"
#include "runtime/train/ps_workload.h"

namespace paddle::runtime {

// The tables wide&deep keeps on the servers: dense 0 = the deep layers; sparse 0 = embeddings,
// sparse 1 = wide weights.
inline constexpr uint32_t kDenseTable = 0, kEmbeddingTable = 0, kWideTable = 1;
ps::TableSpecs wide_deep_tables(const TrainConfig& config);

class CtrWorkload : public PsWorkload {
 public:
  CtrWorkload(const TrainConfig& config, Fleet& fleet);
  ~CtrWorkload() override;

  const ps::TableSpecs& tables() const override { return tables_; }
  LogStyle log_style() const override { return LogStyle::kClickRate; }
  std::string describe() const override;
  nlohmann::json identity() const override;
  void begin_epoch(int64_t epoch) override;
  std::optional<StepResult> train_step(int64_t step) override;
  Evaluation evaluate() override;

 private:
  std::vector<float> initial_dense() override { return model_.dense_values(); }

  CtrDataset train_, test_;
  WideDeep model_;
  ps::TableSpecs tables_;
  std::vector<std::vector<size_t>> batches_;  // this epoch's, of this worker
  size_t next_batch_ = 0;
};

}  // namespace paddle::runtime
