#pragma once
// The launcher's view of environments: the captured one it plans from (common::Environment,
// passed explicitly so that planning is a pure function of its inputs), and EnvList, what a
// launched process gets on top of the inherited environment.

#include <string>
#include <utility>
#include <vector>

#include "common/environment.h"

namespace paddle::launcher {

using EnvMap = common::Environment;
using common::capture_environment;
using common::get_env;

// In the order the "Distributed Envs" table and the dry run show them.
using EnvList = std::vector<std::pair<std::string, std::string>>;

}  // namespace paddle::launcher
