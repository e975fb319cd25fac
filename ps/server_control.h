#pragma once
// ServerControl: the verbs that steer where a worker's parameters live rather than carry them,
// kept apart from ParameterStore's pushes and pulls as ps-lite keeps control messages apart from
// data. PsClient sends them to every parameter server; LocalParameterStore, the tables of a
// single process, plays the one server itself.

#include <cstdint>
#include <string>
#include <vector>

#include "ps/table/save_mode.h"
#include "ps/table/table_reports.h"

namespace paddle::ps {

class ServerControl {
 public:
  virtual ~ServerControl() = default;
  // Synchronous mode: every worker's pushes of this step are applied when this returns.
  virtual void barrier() = 0;
  // The barriers the job has completed, as the servers numbered them: after barrier(), the one
  // it passed; after rejoin(), those completed before it.
  virtual uint64_t barriers_completed() const = 0;
  // This worker was restarted in place (its launcher's --ps_worker_restarts): what its dead self
  // left at its last barrier is settled (ps/client/barrier_rejoin.h: counted where it reached
  // every server, dropped where it reached only some), and barriers_completed() then says how
  // many barriers the job has completed. Throws naming the servers when a barrier applied its
  // step on some servers only.
  virtual void rejoin() = 0;
  // Every server writes its share of the tables into `dir` (ps/table/checkpoint.h), the sparse rows
  // `mode` selects (ps/table/save_mode.h); one worker asks. save(dir) saves all. A class implementing
  // save(dir, mode) says `using ServerControl::save;` to keep save(dir).
  void save(const std::string& dir) { save(dir, SaveMode::kAll); }
  virtual void save(const std::string& dir, SaveMode mode) = 0;
  // Every server loads its share from `dir` (an all or base save replaces its tables, a delta
  // upserts its rows); throws naming the file for a missing, truncated or mismatched checkpoint.
  virtual void load(const std::string& dir) = 0;
  // Every server shrinks its sparse tables (ps/table/sparse_table.h shrink) and logs it; one report
  // per server, in server order.
  virtual std::vector<ShrinkReport> shrink() = 0;
  // Every server's table memory, in server order.
  virtual std::vector<ServerMemory> memory() = 0;
  // This worker is done: the servers return from run() once every worker has said so.
  virtual void stop_worker() = 0;
};

}  // namespace paddle::ps
