#include "runtime/train/workloads/layer_ps_workload.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/error.h"
#include "runtime/train/workloads/supervised.h"

namespace paddle::runtime {

LayerPsWorkload::LayerPsWorkload(const TrainConfig& config, Fleet& fleet)
    : PsWorkload(config, fleet) {
  DataFacts facts;
  data_ = load_supervised_data(config, facts, fleet.environment());
  std::mt19937 rng(config.seed);
  model_ = build_model(config.model, facts, rng);
  steps_per_epoch(data_.train.size());
  layer_tables_.emplace(model_.net, model_.embeddings);
  // The servers counted the tables without the model: a count that differs from what was built
  // is a bug of model_table_shapes.
  const ModelTableShapes told = model_table_shapes(config.model, facts);
  if (const ModelTableShapes built = layer_tables_->shapes(); built != told)
    throw std::logic_error(fmt::format("model {}: its tables hold {} dense values, but the servers were told {}",
                                       kModelNames.name(config.model.kind), built.dense, told.dense));
  specs_ = specs_of(config, told);
}

ps::TableSpecs LayerPsWorkload::tables_for(const TrainConfig& config, const DataFacts& facts) {
  return specs_of(config, model_table_shapes(config.model, facts));
}

ps::TableSpecs LayerPsWorkload::specs_of(const TrainConfig& config, const ModelTableShapes& shapes) {
  ps::TableSpecs specs =
      layer_table_specs(shapes, config.seed, config.ps.server_optimizer, config.lr_schedule.base_lr);
  specs.momentum = config.optimizer.momentum;
  specs.weight_decay = config.optimizer.weight_decay;
  return specs;
}

LayerPsWorkload::~LayerPsWorkload() = default;

LogStyle LayerPsWorkload::log_style() const {
  return model_.task == Task::kRegression ? LogStyle::kRegression : LogStyle::kClassifier;
}

std::string LayerPsWorkload::describe() const {
  std::string sparse;
  for (const auto& t : specs_.sparse) sparse += fmt::format("{}{} (dim {})", sparse.empty() ? "" : ", ", t.name, t.dim);
  return fmt::format("model: {}\nparameter servers ({}, lr {}): dense {} values; sparse tables {}\ntrain samples: {}, "
                     "test samples: {}, {} steps per pass",
                     model_.net.describe(), common::optimizer_kind_name(specs_.update_rule), specs_.learning_rate, specs_.dense[0].size, sparse.empty() ? "none" : sparse, data_.train.size(),
                     data_.test.size(), steps_per_epoch(data_.train.size()));
}

nlohmann::json LayerPsWorkload::identity() const {
  return {{"model", std::string(kModelNames.name(config_.model.kind))}, {"dataset", std::string(kDatasetNames.name(config_.data.kind))}, {"device", "cpu"}};
}

void LayerPsWorkload::begin_round(int64_t epoch) {
  loader_.reset();
  loader_ = std::make_unique<BatchLoader>(data_.train, shard_, epoch);
}

std::optional<StepResult> LayerPsWorkload::train_step(int64_t) {
  std::optional<Batch> batch = loader_->next();
  if (!batch) return std::nullopt;
  PsValues values = fetch(layer_tables_->keys(batch->inputs));
  layer_tables_->set_values(values);
  model_.net.zero_grad();
  Tensor out = model_.net.forward(batch->inputs, true);
  LossResult loss = task_loss(model_.task, out, *batch);
  model_.net.backward(loss.grad);
  apply(layer_tables_->gradients(std::move(values.keys)));
  StepResult result{loss.loss, {}};
  if (model_.task == Task::kClassification) result.accuracy = batch_accuracy(std::move(out), std::move(batch->labels));
  return result;
}

Evaluation LayerPsWorkload::evaluate() {
  ps::ParameterStore& store = fleet_.parameter_store();
  return evaluate_supervised(model_.net, model_.task, data_, Device::cpu(), [&](const Batch& b) {
    layer_tables_->set_values(pull_values(store, 1, layer_tables_->keys(b.inputs)));
  });
}

}  // namespace paddle::runtime
