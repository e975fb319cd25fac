#pragma once
// Training wide&deep on click data against a ParameterStore: parameter servers (a PS job's
// worker) or local tables (one process). Each step pulls the batch's sparse rows and the dense
// parameters, runs the model, pushes the gradients (summed per key) and waits at the barrier,
// so the servers apply the average over the workers: the same update as one process with the
// workers' batches together. The model describes its tables; Fleet and ps/ build them.

#include <nlohmann/json.hpp>

#include "ps/table_spec.h"
#include "runtime/distributed/fleet.h"

namespace paddle::runtime {

// Table ids: dense 0 = the deep layers; sparse 0 = embeddings, sparse 1 = wide weights.
inline constexpr uint32_t kDenseTable = 0, kEmbeddingTable = 0, kWideTable = 1;

// Trains as `config` says (model wide_deep) as worker `fleet.worker_index()` of
// `fleet.worker_num()`, against the parameter store init_worker() gave `fleet`. Worker 0 writes
// the initial dense parameters (unless the servers loaded a checkpoint, ps.init_dir), evaluates
// AUC after each pass and writes OUTPUT_DIR/metrics.json and dense.json; every worker prints
// "TRAIN ---> pass: P loss: L" lines. Returns the metrics (worker 0) or an empty object.
//
// The mode is the strategy's (ps_strategy): sync pushes every step and waits at the barrier;
// async hands each step's gradients to the communicator thread and goes on; GEO trains
// k_steps steps on local copies with SGD, then adds (local - pulled) / workers to the servers
// and pulls again.
nlohmann::json train_ctr(const nlohmann::json& config, Fleet& fleet);

// The tables wide&deep keeps on the servers: dense 0 = the deep layers; sparse 0 = embeddings,
// sparse 1 = wide weights.
ps::TableSpecs wide_deep_tables(const nlohmann::json& config);

// Fleet's strategy for ps.mode (sync, async, geo with ps.k_steps); ConfigError naming the key.
DistributedStrategy ps_strategy(const nlohmann::json& config);

}  // namespace paddle::runtime
