#pragma once
// Training wide&deep on click data against a ParameterStore: parameter servers (a PS job's
// worker) or local tables (one process). Each step pulls the batch's sparse rows and the dense
// parameters, runs the model, pushes the gradients (summed per key) and waits at the barrier,
// so the servers apply the average over the workers: the same update as one process with the
// workers' batches together. Also builds a server's share of the tables.

#include <nlohmann/json.hpp>

#include "ps/async_communicator.h"
#include "ps/parameter_store.h"
#include "ps/server.h"

namespace paddle::runtime {

// Table ids: dense 0 = the deep layers; sparse 0 = embeddings, sparse 1 = wide weights.
inline constexpr uint32_t kDenseTable = 0, kEmbeddingTable = 0, kWideTable = 1;

// Trains as `config` says (model wide_deep); `initialize_dense` makes this worker write the
// initial dense parameters (worker 0, unless the servers loaded a checkpoint). Worker `rank`
// of `world` prints "TRAIN ---> pass: P loss: L" lines; worker 0 evaluates AUC after each pass and
// writes OUTPUT_DIR/metrics.json. Returns the metrics (worker 0) or an empty object.
//
// ps.mode: "sync" pushes every step and waits at the barrier; "async" hands each step's
// gradients to `async` (required then) and goes on; "geo" trains ps.k_steps steps on local
// copies with SGD, then adds (local - pulled) / workers to the servers and pulls again.
nlohmann::json train_ctr(const nlohmann::json& config, ps::ParameterStore& store, int rank, int world,
                         bool initialize_dense, ps::AsyncCommunicator* async = nullptr);

// The tables server `index` of `count` holds for `config`'s model.
ps::ServerTables ctr_server_tables(const nlohmann::json& config, int index, int count);

}  // namespace paddle::runtime
