#pragma once
// Helpers shared by the launcher's unit tests.

#include <string>
#include <vector>

#include "launcher/plan/launch_options.h"
#include "launcher/plan/launch_plan.h"
#include "launcher/plan/port_reservation.h"

namespace paddle::launcher::testing {

// Hands out 30000, 30001, ... and counts what was asked for.
class CountingPorts : public PortSource {
 public:
  std::vector<int> take_free_ports(int count) override {
    std::vector<int> ports;
    for (int i = 0; i < count; ++i) ports.push_back(next_++);
    taken_ += count;
    return ports;
  }
  int taken() const { return taken_; }

 private:
  int next_ = 30000;
  int taken_ = 0;
};

inline LaunchOptions parse(std::vector<std::string> args) {
  std::vector<const char*> argv{"paddle-launch"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data()).options;
}

inline std::string env_value(const ProcessSpec& p, const std::string& name) {
  for (const auto& [k, v] : p.env)
    if (k == name) return v;
  return "<unset>";
}

inline bool has_env(const ProcessSpec& p, const std::string& name) { return env_value(p, name) != "<unset>"; }

inline LaunchPlan plan_for(std::vector<std::string> args, HostFacts host = {}) {
  CountingPorts ports;
  return make_launch_plan(parse(std::move(args)), {"/bin/true"}, host, ports);
}

}  // namespace paddle::launcher::testing
