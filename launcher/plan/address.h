#pragma once
// Node addresses and endpoints: strict IPv4 parsing of the lists users type (--ips, --servers,
// --workers), and the IPv4 addresses of this machine's interfaces.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/parse.h"

namespace paddle::launcher {

struct Endpoint {
  std::string ip;
  std::optional<int> port;  // absent where a list allows it (worker entries)

  std::string str() const;  // "ip:port", or "ip" without a port
  bool operator==(const Endpoint&) const = default;
};

bool is_ipv4(std::string_view text);

// The launcher's flags are usage: common's parsers with UsageError.
// Splits a comma list, trimming blanks around items; an empty item is an error naming `what`.
inline std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  return common::split_list<common::UsageError>(text, what);
}

// "a,b,c" of IPv4 addresses, in the order given. Throws common::UsageError naming `flag` for an
// invalid or duplicated address.
std::vector<std::string> parse_ip_list(std::string_view text, std::string_view flag);

// "ip:port,..." lists. `port_required` decides whether a bare "ip" is accepted.
// Throws common::UsageError naming `flag` for a bad address, a port out of 1..65535 or a duplicate.
std::vector<Endpoint> parse_endpoint_list(std::string_view text, std::string_view flag,
                                          bool port_required);

// Port number in 1..65535 from text; throws common::UsageError naming `what`.
inline int parse_port(std::string_view text, std::string_view what) {
  return common::parse_port<common::UsageError>(text, what);
}

struct LocalInterface {
  std::string name;  // "eth0"
  std::string ip;
};

// The IPv4 addresses of this machine's interfaces that are up, in interface order.
std::vector<LocalInterface> local_ipv4_interfaces();
std::vector<std::string> local_ipv4_addresses();

// The local address this machine's routes would send from to reach `ip`; nothing without a route.
std::optional<std::string> route_source_address(const std::string& ip);

bool is_loopback(const std::string& ip);

// This machine's host name ("?" when it has none), for messages.
std::string host_name();

}  // namespace paddle::launcher
