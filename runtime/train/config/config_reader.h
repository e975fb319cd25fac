#pragma once
// ConfigReader: the typed values of a merged train config (train_config_merge.cc), read by
// dotted key, each checked against its row of the key table (config_keys.h) as it is read:
// its type, its range, its choices. Every failure is a common::ConfigError naming the key and
// the value ("batch_size: 0 is less than 1", "ps.mode 'half' is not sync, async or geo");
// reading a key as another type than its row's is a bug here (std::logic_error).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/train/config/config_keys.h"

namespace paddle::runtime {

class ConfigReader {
 public:
  explicit ConfigReader(const nlohmann::json& root) : root_(root) {}

  // The raw value at a dotted key.
  const nlohmann::json& at(const std::string& key) const;

  int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  bool boolean(const std::string& name) const;
  // A string key, or a choice key's text before its check.
  std::string text(const std::string& name) const;
  // One of the key's choices.
  std::string choice(const std::string& name) const;
  std::vector<int64_t> integers(const std::string& name) const;
  std::vector<std::string> strings(const std::string& name) const;
  std::vector<float> numbers(const std::string& name) const;

 private:
  static const ConfigKey& row(const std::string& name, KeyType type);
  const nlohmann::json& list(const std::string& name) const;

  const nlohmann::json& root_;
};

// VALUE as JSON for a message; invalid UTF-8 (a --set value is raw bytes) shows as U+FFFD
// instead of throwing.
std::string shown(const nlohmann::json& value);

// "a, b or c", or "one of a, b, c, d, e" for a longer list: the end of "KEY 'VALUE' is not ...".
std::string choices_text(const std::vector<std::string>& choices);

}  // namespace paddle::runtime
