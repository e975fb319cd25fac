#pragma once
// Parsing what users set: numbers, ports, ip:port endpoints and comma lists. Every parser takes
// `what` (the flag, variable or file:line the text came from) and throws an error naming it, so
// no caller needs atoi's silent zero. The error kind is the caller's: ConfigError for config
// keys and the environment (the default), UsageError for the launcher's flags.
//
//   int port = common::parse_port<common::UsageError>(text, "--start_port");

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace paddle::common {

struct Endpoint {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
  bool operator==(const Endpoint&) const = default;
};

// The conversions, nothing when `text` (all of it) is not one.
std::optional<int64_t> to_int(std::string_view text);
std::optional<double> to_finite_double(std::string_view text);
std::optional<int> to_port(std::string_view text);  // 1..65535
// Spaces and tabs off both ends.
std::string_view trim(std::string_view text);
// Non-empty and only letters, digits, '_', '-' and '.': a job id or host name that is safe in a
// store key or a path (callers that make it one path component also refuse "." and "..").
bool is_plain_name(std::string_view text);

// The whole of `text` as a base-10 integer in [min, max].
template <class Failure = ConfigError>
int64_t parse_int(std::string_view text, std::string_view what, int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
  const auto value = to_int(text);
  if (!value) throw Failure(fmt::format("{}: '{}' is not a whole number", what, text));
  if (*value < min || *value > max) throw Failure(fmt::format("{}: {} is outside {}..{}", what, *value, min, max));
  return *value;
}

// The whole of `text` as a finite number.
template <class Failure = ConfigError>
double parse_double(std::string_view text, std::string_view what) {
  if (auto value = to_finite_double(text)) return *value;
  throw Failure(fmt::format("{}: '{}' is not a number", what, text));
}

// A TCP port, 1..65535.
template <class Failure = ConfigError>
int parse_port(std::string_view text, std::string_view what) {
  if (auto port = to_port(text)) return *port;
  throw Failure(fmt::format("{}: port '{}' is not a number in 1..65535", what, text));
}

// "host:port" (the last colon splits); the host must be non-empty.
template <class Failure = ConfigError>
Endpoint parse_endpoint(std::string_view text, std::string_view what) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    throw Failure(fmt::format("{}: '{}' is not an ip:port endpoint", what, text));
  return Endpoint{std::string(text.substr(0, colon)), parse_port<Failure>(text.substr(colon + 1), what)};
}

// "a, b,c" into its items, each trimmed; an empty item is an error.
template <class Failure = ConfigError>
std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (item.empty()) throw Failure(fmt::format("{}: empty item in '{}'", what, text));
    items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

}  // namespace paddle::common
