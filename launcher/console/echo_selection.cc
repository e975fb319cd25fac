#include "launcher/console/echo_selection.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::launcher {

EchoSelection EchoSelection::parse(const std::optional<std::string>& log_output, const std::string& prefix) {
  EchoSelection s;
  if (prefix != "auto" && prefix != "true" && prefix != "false")
    throw common::UsageError(fmt::format("--log_output_prefix={}: expected auto, true or false", prefix));
  s.prefix = prefix;
  if (!log_output) return s;
  s.given = true;
  if (*log_output == "all") {
    s.all = true;
    return s;
  }
  for (const std::string& item : common::split_list<common::UsageError>(*log_output, "--log_output")) {
    const bool server = item.starts_with("server"), heter = item.starts_with("heter");
    const std::string_view digits = std::string_view(item).substr(server ? 6 : heter ? 5 : 0);
    const auto number = common::to_int(digits);
    if (!number || *number < 0 || *number > 1000000)
      throw common::UsageError(fmt::format(
          "--log_output={}: '{}' is not a rank, serverN, heterN or all (for example --log_output=0,3,server0)",
          *log_output, item));
    (server ? s.servers : heter ? s.heters : s.ranks).insert(static_cast<int>(*number));
  }
  return s;
}

std::vector<const ProcessSpec*> EchoSelection::pick(const LaunchPlan& plan) const {
  if (!given) return {&plan.echoed_process()};
  std::vector<const ProcessSpec*> chosen;
  for (const ProcessSpec& p : plan.processes)
    if (all || (p.role == Role::kServer        ? servers.contains(p.rank)
                : p.role == Role::kHeterWorker ? heters.contains(p.rank)
                                               : ranks.contains(p.rank)))
      chosen.push_back(&p);
  return chosen;
}

std::string EchoSelection::label(const LaunchPlan& plan, const ProcessSpec& process, size_t shown) const {
  if (prefix == "false" || (prefix == "auto" && shown <= 1 && !shared_console)) return {};
  if (plan.node_count > 1) return fmt::format("[node {} {} {}] ", plan.node_rank, role_name(process.role), process.rank);
  return fmt::format("[{} {}] ", role_name(process.role), process.rank);
}

}  // namespace paddle::launcher
