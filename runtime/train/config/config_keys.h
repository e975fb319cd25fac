#pragma once
// ConfigKeys: the one table of the `train` program's config keys. Each key has its name
// (dotted: "ps.sparse_rule.lr"), its type, its default, its range or choices, and one line of
// doc. Everything about keys comes from it:
//   default_train_config()  the defaults, as the JSON a config file overlays;
//   merge_train_config()    an unknown key in a file or a --set is an error naming it;
//   ConfigReader            each value's type and range are checked as it is read, and an
//                           error names the key and the value (train_config.cc);
//   config_keys_help()      `train --help-config`.
// Checks that join two keys (ps.storage ssd needs ps.memory_budget_mb) stay with the typed
// reading in train_config.cc.

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace paddle::runtime {

enum class KeyType {
  kInteger,
  kNumber,
  kBoolean,
  kText,
  kChoice,    // one of `choices`
  kIntegers,  // a list; each item in range
  kNumbers,   // a list of numbers
  kTexts,     // a list of strings
};

struct ConfigKey {
  static constexpr double kNoLimit = std::numeric_limits<double>::infinity();

  std::string name;
  KeyType type = KeyType::kText;
  nlohmann::json default_value;
  // Integers and numbers (and a list's items): the value is in [min, max]; with above_min, it
  // must also differ from min ("positive" when min is 0).
  double min = -kNoLimit, max = kNoLimit;
  bool above_min = false;
  std::vector<std::string> choices;
  std::string doc;
};

// Every key, in the order `train --help-config` lists them.
const std::vector<ConfigKey>& config_keys();

// The key named `name`; throws std::out_of_range for a name not in the table (a bug of the caller).
const ConfigKey& config_key(const std::string& name);

// The defaults, as nested JSON objects: every key a config may set.
nlohmann::json default_train_config();

// `train --help-config`: one entry per key with its type, default, range or choices and doc.
std::string config_keys_help();

}  // namespace paddle::runtime
