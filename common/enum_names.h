#pragma once
// EnumNames: an enum's values and the one name each goes by in configs, flags and messages,
// written once beside the enum. A config key takes its choices from it, and its reading parses
// with it, so a name is never spelled twice.
//
//   enum class PsMode { kSync, kAsync, kGeo };
//   inline constexpr common::EnumNames<PsMode, 3> kPsModeNames{{{
//       {PsMode::kSync, "sync"}, {PsMode::kAsync, "async"}, {PsMode::kGeo, "geo"}}}};
//
//   kPsModeNames.find("async")             // PsMode::kAsync; nothing for another name
//   kPsModeNames.parse("gossip", "ps.mode")  // throws ConfigError: ps.mode 'gossip' is not one of sync, async, geo
//   kPsModeNames.name(PsMode::kGeo)        // "geo"
//   kPsModeNames.choices()                 // {"sync", "async", "geo"}: a config key's choices

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace paddle::common {

template <typename Enum, size_t N>
struct EnumNames {
  std::array<std::pair<Enum, std::string_view>, N> names;

  constexpr std::optional<Enum> find(std::string_view name) const {
    for (const auto& [value, text] : names)
      if (text == name) return value;
    return std::nullopt;
  }

  // The value named `name`; a ConfigError naming `what` (the key or flag) and every name otherwise.
  Enum parse(std::string_view name, std::string_view what) const {
    if (auto value = find(name)) return *value;
    throw ConfigError(fmt::format("{} '{}' is not one of {}", what, name, fmt::join(choices(), ", ")));
  }

  // The name of `value`; std::logic_error for a value the table leaves out (a bug).
  std::string_view name(Enum value) const {
    for (const auto& [v, text] : names)
      if (v == value) return text;
    throw std::logic_error("EnumNames: a value without a name");
  }

  // Every name, in the table's order.
  std::vector<std::string> choices() const {
    std::vector<std::string> all;
    for (const auto& [value, text] : names) all.emplace_back(text);
    return all;
  }
};

}  // namespace paddle::common
