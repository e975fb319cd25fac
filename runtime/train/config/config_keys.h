#pragma once
// ConfigKeys: the one table of the `train` program's config keys. Each key has its name
// (dotted: "ps.sparse_rule.lr"), its type, its range or choices, one line of doc, and the
// TrainConfig field it sets. Its default is that field's in a default TrainConfig, so each
// default is written once, beside the field (train_config.h and the structs it holds).
// Everything about keys comes from the table:
//   default_train_config()  the defaults, as the JSON a config file overlays;
//   merge_train_config()    an unknown key in a file or a --set is an error naming it;
//   parse_train_config()    each row reads its value into its field, checked by ConfigReader
//                           as it is read (an error names the key and the value);
//   config_keys_help()      `train --help-config`.
// Checks that join two keys (ps.storage ssd needs ps.memory_budget_mb) follow the rows'
// reading, in train_config.cc.

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace paddle::runtime {

struct TrainConfig;
class ConfigReader;

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
  // Reads the key's value, checked against this row, into its field. Empty for a key that only
  // a check joining it with another reads (ps.server_optimizer may only repeat optimizer.type).
  std::function<void(const ConfigReader&, TrainConfig&)> read;
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
