#pragma once
// JobFailure: why one generation of a job ended, in the form every node prints: the node, the
// process or launcher at fault, its exit status and the last lines of its log. In a multi-node
// job the first report at the master is the job's root cause (cluster_link.h).

#include <nlohmann/json.hpp>

#include <string>

namespace paddle::launcher {

// Why a generation of the job ended, as every node prints it.
struct JobFailure {
  // From the most to the least likely root cause, when several nodes report at once: a process
  // that lost its peer fails too, but after the one that died. A node joining an elastic job
  // ends the generation only to admit it.
  enum class Cause {
    kLauncherLost = 0,
    kLauncherSignalled = 1,
    kProcessSignalled = 2,
    kProcessFailed = 3,
    kNodeJoined = 4,
    kProcessHung = 5,  // alive, but no process made progress for --hang_timeout (hang_watch.h)
  };

  Cause cause = Cause::kProcessFailed;
  int node_rank = -1;  // -1: a node not (yet) in the rank map
  std::string ip, hostname;
  std::string what;  // "trainer 3 (local 1) exited with status 17", "launcher lost: ..."
  int exit_status = 1;  // what every launcher exits with when the job gives up
  std::string log_file, tail;
  // The process's own account of its failure, from its error record
  // (launcher/supervise/root_cause.h): "TYPE: message", what caused it, the top frames. Empty
  // when it left none.
  std::string own_account;
  // A lost or signalled launcher ends the job: a restart could not bring the node back.
  bool stops_job() const { return cause == Cause::kLauncherLost || cause == Cause::kLauncherSignalled; }

  nlohmann::json to_json() const;
  static JobFailure from_json(const std::string& text);
  // "node 1 (10.0.0.2, host-b): trainer 3 ...; log: F, last lines:\n..."
  std::string describe() const;
};

}  // namespace paddle::launcher
