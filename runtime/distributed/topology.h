#pragma once
// Topology: who this process is in a distributed job, read from its environment.
//
// Accepted, in this order of precedence:
//   - PS, launcher or by hand (style 1): TRAINING_ROLE=PSERVER|TRAINER, PADDLE_PSERVERS_IP_PORT_LIST,
//     POD_IP + PADDLE_PORT (servers), PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ID (trainers).
//   - PS, older style (2): PADDLE_TRAINING_ROLE, PADDLE_PSERVER_IPS, PADDLE_PSERVER_PORT,
//     PADDLE_TRAINERS, PADDLE_CURRENT_IP (servers), PADDLE_TRAINER_ID (trainers).
//   - PS, transpiler style (3): PADDLE_TRAINING_ROLE, PADDLE_PSERVER_ENDPOINTS,
//     PADDLE_CURRENT_ENDPOINT (servers), TRAINERS, TRAINER_ID.
//   - Collective (the launcher): PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ENDPOINTS,
//     PADDLE_CURRENT_ENDPOINT.
//   - Nothing set: a single local trainer.
// An incomplete or inconsistent environment throws TopologyError naming the variables.

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/error.h"

namespace paddle::runtime {

using common::Environment;
using common::current_environment;

// The environment does not describe a job: a variable is missing, malformed or inconsistent.
class TopologyError : public common::ConfigError {
 public:
  using common::ConfigError::ConfigError;
};

enum class JobKind { kSingle, kCollective, kParameterServer };
enum class ProcessRole { kTrainer, kServer };

struct Topology {
  JobKind kind = JobKind::kSingle;
  ProcessRole role = ProcessRole::kTrainer;
  std::string style;  // which environment style it came from, for messages

  int trainer_id = 0;   // this trainer's rank (trainers)
  int trainer_num = 1;  // number of trainers
  std::vector<std::string> trainer_endpoints;  // collective: rank order; PS: may be empty
  std::string current_endpoint;                // this process's ip:port, where known

  std::vector<std::string> server_endpoints;  // PS: every server, in order
  int server_index = -1;                      // PS servers: this server's index

  bool is_server() const { return role == ProcessRole::kServer; }
  bool is_worker() const { return role == ProcessRole::kTrainer; }
  bool is_first_worker() const { return is_worker() && trainer_id == 0; }
};

Topology topology_from_environment(const Environment& env);

}  // namespace paddle::runtime
