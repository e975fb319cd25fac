#pragma once
// What the ClusterLink unit tests share besides the fake store: a node's registration, and a
// launcher log that writes nowhere.

#include <cstdio>
#include <memory>
#include <string>

#include "launcher/console/launch_log.h"
#include "launcher/plan/rank_map.h"

namespace paddle::launcher::testing {

// Node IP's registration: host-IP, one endpoint IP:6170.
inline NodeRegistration registration(const std::string& ip) {
  NodeRegistration n;
  n.ip = ip;
  n.hostname = "host-" + ip;
  n.endpoints = {ip + ":6170"};
  return n;
}

// A LaunchLog into /dev/null, for a link whose lines the test does not read.
struct QuietLog {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> null{std::fopen("/dev/null", "w")};
  LaunchLog log{null.get()};
};

}  // namespace paddle::launcher::testing
