#pragma once
// LayerPsWorkload: a supervised model (models.h) trained on parameter servers: its embedding
// tables as sparse tables keyed by id, its other parameters as one dense table
// (distributed/layer_tables.h), in the strategy's PS mode (ps_workload.h). The recommender's
// ids become keys on the servers; a model without embeddings trains its dense vector alone.
// Worker 0 evaluates against the servers' values after each round. A server is told its tables
// by tables_for(), which builds no model and loads no data.

#include <memory>
#include <optional>

#include "runtime/data/batch_loader.h"
#include "runtime/distributed/layer_tables.h"
#include "runtime/models/models.h"
#include "runtime/train/workloads/ps_workload.h"

namespace paddle::runtime {

class LayerPsWorkload : public PsWorkload {
 public:
  LayerPsWorkload(const TrainConfig& config, Fleet& fleet);
  ~LayerPsWorkload() override;

  // The tables of config's model on a data set of `facts` (supervised.h
  // supervised_data_facts): the servers' and the workers' alike.
  static ps::TableSpecs tables_for(const TrainConfig& config, const DataFacts& facts);

  const ps::TableSpecs& tables() const override { return specs_; }
  LogStyle log_style() const override;
  std::string describe() const override;
  nlohmann::json identity() const override;
  void begin_round(int64_t epoch) override;
  std::optional<StepResult> train_step(int64_t step) override;
  Evaluation evaluate() override;

 private:
  // The tables of a model of `shapes`, with config's seed and the servers' rule.
  static ps::TableSpecs specs_of(const TrainConfig& config, const ModelTableShapes& shapes);
  std::vector<float> initial_dense() override { return layer_tables_->dense_values(); }

  TrainTestSplit data_;
  Model model_;
  std::optional<LayerTables> layer_tables_;
  ps::TableSpecs specs_;
  std::unique_ptr<BatchLoader> loader_;
};

}  // namespace paddle::runtime
