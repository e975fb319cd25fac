#pragma once
// What the collective and parameter-server trainings of the supervised models (fit_a_line,
// cnn, resnet, recommender) share: loading their data set, the loss of their task, and the
// leader's evaluation on the test set.

#include <functional>

#include "runtime/data/dataset.h"
#include "runtime/models/models.h"
#include "common/environment.h"
#include "runtime/nn/loss.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/workloads/workload.h"

namespace paddle::runtime {

// The data set config.data names (a leading "~/" is env's HOME), cut to its sample limits;
// `facts` learns what the model must be told about it. Throws common::ConfigError for click
// data or images the set lacks.
TrainTestSplit load_supervised_data(const TrainConfig& config, DataFacts& facts, const common::Environment& env);

// The facts load_supervised_data learns, without loading the samples: from the format (UCI
// housing's 13 features), a file's header (Fashion-MNIST's image size) or the small tables
// (MovieLens' users and movies). What a parameter server is told its tables by. Throws as
// load_supervised_data does.
DataFacts supervised_data_facts(const TrainConfig& config, const common::Environment& env);

// The task's loss of `out` on `batch`: square error for regression, softmax cross entropy for
// classification; the gradient is that of grad_scale times the loss (AMP's loss scale).
LossResult task_loss(Task task, const Tensor& out, const Batch& batch, float grad_scale = 1.0f);

// Classifiers: the batch's top-1 and top-5 accuracy, computed when called.
std::function<TopAccuracy()> batch_accuracy(Tensor out, std::vector<int64_t> labels);

// The test loss and the task's metrics (accuracy; or RMSE and the RMSE of predicting the
// training mean) of `net` on data.test in batches of 256, inputs moved to `device`. `prepare`
// runs before each batch's forward (a PS model pulls the batch's rows there).
Evaluation evaluate_supervised(Sequential& net, Task task, const TrainTestSplit& data, const Device& device,
                               const std::function<void(const Batch&)>& prepare = {});

}  // namespace paddle::runtime
