#pragma once
// NodeAgent: the launcher's side of a job dispatched over SSH (dispatcher.h), on each host. It
// is `paddle-launch --agent --master=... --rank=I ...`, a node of a multi-node job, plus:
//  - its environment arrives as the first line of stdin, {"env": {"NAME": "VALUE", ...}}, so
//    that no value (a job token) shows on a command line; PADDLE_NIC there becomes --iface;
//  - it writes `nodefile` (its rank) in its workspace, as cluster_train did;
//  - it stops the job, as SIGTERM does, when stdin ends (the dispatcher stopped it, died, or its
//    ssh connection closed) or falls silent for `silence_limit` (the connection hangs): the
//    dispatcher writes a newline every 2 s.

#include <chrono>
#include <string>

#include "launcher/console/launch_log.h"
#include "launcher/plan/environment.h"
#include "launcher/plan/launch_options.h"

namespace paddle::launcher {

class NodeAgent {
 public:
  // Reads the environment line from stdin into `env` (waiting up to 30 s for it), applies it to
  // `options`, and writes ./nodefile. Throws common::ConfigError naming stdin for a bad line.
  NodeAgent(LaunchOptions& options, EnvMap& env);

  // From now on a background thread watches stdin and sends this process SIGTERM when it ends
  // or falls silent, saying why in `log`.
  void watch_dispatcher(LaunchLog& log, std::chrono::seconds silence_limit = std::chrono::seconds(15));
};

}  // namespace paddle::launcher
