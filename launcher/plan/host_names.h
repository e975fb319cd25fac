#pragma once
// Host names wherever the launcher takes an address: --ips, --host, --master, --servers,
// --workers (--trainers), --heter_workers, PADDLE_MASTER, POD_IP and the schedulers' node lists.
// Each is turned into its IPv4 address with the system resolver (getaddrinfo: /etc/hosts, then
// DNS) before planning, so that every node plans, ranks and compares nodes by address however
// an address was spelled: PaddleJob's pod 0 sees PADDLE_MASTER as its own IP, the others as
// `<job>-worker-0:<port>`, and all of them agree which node hosts the master.
//
// A name that does not resolve yet is waited for, since a pod's service record appears only
// once that pod is ready: up to the rendezvous timeout, saying once which name it waits for,
// and stopping at once on a signal.

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

struct LaunchOptions;

// The IPv4 address a name stands for now, if any. system_lookup() asks getaddrinfo.
using HostLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> system_lookup(const std::string& name);
// `host` when it is an IPv4 address, else system_lookup's answer, at once (no wait).
std::optional<std::string> resolve_ipv4(const std::string& host);

class HostNameResolver {
 public:
  struct Settings {
    HostLookup lookup = system_lookup;
    std::chrono::milliseconds patience{300000};  // for all the names together
    std::chrono::milliseconds poll{500};
    std::stop_token stop;                        // a signal ends the wait, and then
    std::function<void(const std::string& waiting_for)> stopped;  // throws the caller's Stopped
    std::function<void(const std::string&)> say;  // the "waiting for" line; stderr when empty
  };
  explicit HostNameResolver(Settings settings);

  // `text` when it is an IPv4 address, else the address its name resolves to. Throws
  // common::UsageError naming `what` when the name is malformed or still unknown at the deadline;
  // a stop requested while it waits throws what `stopped` throws.
  std::string address(const std::string& text, std::string_view what);
  // "host:port" -> "ip:port", "host" -> "ip" (where a port may be left out).
  std::string endpoint(const std::string& text, std::string_view what);
  // A comma list of either, each item resolved; ';' between stages is kept.
  std::string list(const std::string& text, std::string_view what);

  // The names resolved so far, as "name=ip", for the launch log.
  const std::vector<std::string>& resolved() const { return resolved_; }

 private:
  Settings settings_;
  std::chrono::steady_clock::time_point deadline_;
  std::vector<std::string> resolved_;
};

// Rewrites every address the options and the environment hold (see the top of this file) to
// its IPv4 address. etcd:// masters are left to the etcd client, which resolves them itself.
void resolve_host_names(LaunchOptions& options, EnvMap& env, HostNameResolver& resolver);

}  // namespace paddle::launcher
