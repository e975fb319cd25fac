#include "common/parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace paddle::common {
namespace {

template <typename T>
std::optional<T> whole(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> to_int(std::string_view text) { return whole<int64_t>(text); }

std::optional<double> to_finite_double(std::string_view text) {
  auto value = whole<double>(text);
  if (value && !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::optional<int> to_port(std::string_view text) {
  auto value = whole<int64_t>(text);
  if (!value || *value < 1 || *value > 65535) return std::nullopt;
  return static_cast<int>(*value);
}

bool is_plain_name(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace paddle::common
