#include "common/parse.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "common/error.h"

namespace paddle::common {

int64_t parse_int(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw ConfigError(fmt::format("{}: '{}' is not a whole number", what, text));
  if (value < min || value > max)
    throw ConfigError(fmt::format("{}: {} is outside {}..{}", what, value, min, max));
  return value;
}

double parse_double(std::string_view text, std::string_view what) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value))
    throw ConfigError(fmt::format("{}: '{}' is not a number", what, text));
  return value;
}

int parse_port(std::string_view text, std::string_view what) {
  int64_t port = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ec != std::errc() || ptr != end || port < 1 || port > 65535)
    throw ConfigError(fmt::format("{}: port '{}' is not a number in 1..65535", what, text));
  return static_cast<int>(port);
}

Endpoint parse_endpoint(std::string_view text, std::string_view what) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    throw ConfigError(fmt::format("{}: '{}' is not an ip:port endpoint", what, text));
  return Endpoint{std::string(text.substr(0, colon)), parse_port(text.substr(colon + 1), what)};
}

std::vector<std::string> split_list(std::string_view text, std::string_view what, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t next = text.find(separator, start);
    const std::string_view item = text.substr(start, next == std::string_view::npos ? text.npos : next - start);
    if (item.empty()) throw ConfigError(fmt::format("{}: empty entry in '{}'", what, text));
    items.emplace_back(item);
    if (next == std::string_view::npos) return items;
    start = next + 1;
  }
}

}  // namespace paddle::common
