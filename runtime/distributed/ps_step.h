#pragma once
// PsStep: how one parameter-server mode moves a batch's parameters and gradients, for any model
// whose parameters live in PS tables (ps/table_spec.h). A workload asks fetch() for the values
// a batch needs, computes the loss and gradients with them, and hands the gradients to apply():
//
//   sync   fetch pulls from the servers; apply pushes and waits at the barrier, where the
//          servers apply the mean over the workers (the same update as one process with the
//          workers' batches together)
//   async  fetch pulls from the servers; apply queues the gradients for the communicator
//          thread, which merges and sends them while training goes on
//   GEO    fetch reads local copies (rows pulled once per window); apply updates them with
//          SGD; every k_steps steps, and at flush, the servers get (local - pulled) / workers
//          (after the window's show and click sums, for tables that keep them) and the copies
//          start over from the servers' values
//
// apply's sparse rows are ps::push_width wide: a table that keeps statistics (the CTR
// accessor) gets each key's show and click before its gradients.

#include <cstdint>
#include <memory>
#include <vector>

#include "ps/table_spec.h"
#include "runtime/distributed/fleet.h"

namespace paddle::runtime {

// Values (or gradients) of a batch's part of the tables: every dense table whole; of every
// sparse table, the rows of the batch's distinct keys, row after row in the order of `keys`.
struct PsValues {
  std::vector<std::vector<float>> dense;     // by dense table id
  std::vector<std::vector<uint64_t>> keys;   // by sparse table id: distinct keys
  std::vector<std::vector<float>> sparse;    // by sparse table id: keys.size() x dim (push_width for gradients)
};

class PsStep {
 public:
  virtual ~PsStep() = default;
  // The dense tables and the rows of `keys` (by sparse table id) as this mode sees them.
  virtual PsValues fetch(std::vector<std::vector<uint64_t>> keys) = 0;
  // One batch's gradients, laid out as fetch's answer (each key once, its gradients summed).
  virtual void apply(PsValues grads) = 0;
  // End of a pass: what the mode still holds reaches the servers.
  virtual void flush() {}
  // The steps applied so far whose gradients the servers have acknowledged (sync: at the
  // barrier; async: the communicator's sends, counted by the fleet since init_worker; GEO: at
  // the window's send). A worker restarted in place trains none of them again.
  virtual uint64_t acknowledged_steps() = 0;
  // The next batch's keys (as fetch takes them), known before this batch computes: the servers
  // read those rows that are on disk into memory meanwhile (ParameterStore::prefetch_sparse).
  // GEO reads its local copies and has nothing to prefetch.
  virtual void prefetch(const std::vector<std::vector<uint64_t>>& /*keys*/) {}
};

// Pulls the values of every dense table (`dense_tables` of them) and of `keys`' rows from `store`.
PsValues pull_values(ps::ParameterStore& store, size_t dense_tables, std::vector<std::vector<uint64_t>> keys);

// The step of the strategy's mode, on `fleet`'s parameter store (after init_worker(tables)).
// `local_lr` is GEO's local SGD rate.
std::unique_ptr<PsStep> make_ps_step(Fleet& fleet, const ps::TableSpecs& tables, float local_lr);

}  // namespace paddle::runtime
