#pragma once
// Parsing what users set: numbers, ports and ip:port endpoints. Every parser takes `what` (the
// flag, variable or file:line the text came from) and throws ConfigError naming it, so no
// caller needs atoi's silent zero.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paddle::common {

struct Endpoint {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
  bool operator==(const Endpoint&) const = default;
};

// The whole of `text` as a base-10 integer in [min, max].
int64_t parse_int(std::string_view text, std::string_view what, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
// The whole of `text` as a finite number.
double parse_double(std::string_view text, std::string_view what);
// A TCP port, 1..65535.
int parse_port(std::string_view text, std::string_view what);
// "host:port" (the last colon splits); the host must be non-empty.
Endpoint parse_endpoint(std::string_view text, std::string_view what);
// "a,b,c" into its items; empty items are an error.
std::vector<std::string> split_list(std::string_view text, std::string_view what, char separator = ',');

}  // namespace paddle::common
