#pragma once
// ServerControl: the verbs that steer where a worker's parameters live rather than carry them,
// kept apart from ParameterStore's pushes and pulls as ps-lite keeps control messages apart from
// data. PsClient sends them to every parameter server; LocalParameterStore, the tables of a
// single process, plays the one server itself.

#include <string>

namespace paddle::ps {

class ServerControl {
 public:
  virtual ~ServerControl() = default;
  // Synchronous mode: every worker's pushes of this step are applied when this returns.
  virtual void barrier() = 0;
  // Every server writes its share of the tables into `dir` (ps/checkpoint.h); one worker asks.
  virtual void save(const std::string& dir) = 0;
  // Every server replaces its tables with its share from `dir`; throws naming the file for a
  // missing, truncated or mismatched checkpoint.
  virtual void load(const std::string& dir) = 0;
  // This worker is done: the servers return from run() once every worker has said so.
  virtual void stop_worker() = 0;
};

}  // namespace paddle::ps
