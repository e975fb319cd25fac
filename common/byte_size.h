#pragma once
// A count of bytes for people: "56 B", "12.5 KB", "4.0 MB" (binary units, one decimal).

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace paddle::common {

inline std::string byte_size(uint64_t bytes) {
  if (bytes >= 1024 * 1024) return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1024 * 1024));
  if (bytes >= 1024) return fmt::format("{:.1f} KB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

}  // namespace paddle::common
