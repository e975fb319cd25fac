#pragma once
// Text renderings of options and plans: the "Configuration Arguments" block, the
// "Distributed Envs" table of Paddle's launcher, and the --dry_run outputs (table and JSON).

#include <string>

#include "launcher/console/launch_log.h"
#include "launcher/plan/environment.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

// "-----------  Configuration Arguments -----------", sorted "name: value" lines, a dashed line.
std::string configuration_block(const LaunchOptions& options);

// Paddle's pretty_print_envs(envs, ("Distributed Envs", "Value")): a boxed two-column table,
// with a blank line before and after.
std::string distributed_envs_table(const EnvList& env);

std::string dry_run_table(const LaunchPlan& plan);
std::string dry_run_json(const LaunchPlan& plan);

// LOG_DIR/endpoints.log: PADDLE_TRAINER_ENDPOINTS one per line, then a multi-node job's rank
// map. Throws common::UsageError when it can't be written.
void write_endpoints_log(const LaunchPlan& plan, const std::string& rank_map = "");

// Paddle's "Local start N processes ... Distributed Envs" lines for the plan.
void announce_plan(const LaunchPlan& plan, LaunchLog& log);

// The command as a shell would show it, quoting arguments that need it.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace paddle::launcher
