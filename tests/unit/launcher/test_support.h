#pragma once
// Helpers shared by the launcher's unit tests.

#include <string>
#include <vector>

#include "common/error.h"
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

// A CPU machine with `cores` cores, at `ip` and on loopback.
inline HostFacts cpu_host(const std::string& ip = "192.0.2.7", unsigned cores = 8) {
  HostFacts h;
  h.local_addresses = {"127.0.0.1", ip};
  h.cpu_cores = cores;
  return h;
}

// The one line planning `args` on `host` refuses with, or "no error".
inline std::string plan_error(std::vector<std::string> args, HostFacts host = cpu_host()) {
  try {
    plan_for(std::move(args), host);
  } catch (const common::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace paddle::launcher::testing
