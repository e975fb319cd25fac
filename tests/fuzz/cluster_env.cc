// Fuzz target: the launcher's readers of a cluster's environment: the schedulers' variables
// (launcher/plan/scheduler_env.h detect_scheduler: Slurm node lists, Open MPI, Kubernetes jobs) and
// the start port (launcher/plan/plan_support.h explicit_start_port). The input is the environment,
// one NAME=VALUE per line. Anything wrong must be a common::Error naming the variable. Nothing
// here resolves a host name, so no input reaches the network.

#include <cstdint>
#include <string>

#include "common/error.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/plan_support.h"
#include "launcher/plan/scheduler_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paddle::launcher::EnvMap env;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  try {
    paddle::launcher::detect_scheduler(env);
  } catch (const paddle::common::Error&) {
  }
  try {
    paddle::launcher::explicit_start_port(paddle::launcher::LaunchOptions{}, env);
  } catch (const paddle::common::Error&) {
  }
  return 0;
}
