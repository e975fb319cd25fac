#include "runtime/train/config/config_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/error.h"

namespace paddle::runtime {

using common::ConfigError;
using nlohmann::json;

std::string shown(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : choices.size() > 4 ? ", " : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return choices.size() > 4 ? "one of " + out : out;
}

const json& ConfigReader::at(const std::string& key) const {
  const json* node = &root_;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    node = &node->at(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

int64_t ConfigReader::integer(const std::string& name) const {
  const ConfigKey& key = row(name, KeyType::kInteger);
  const json& v = at(name);
  if (!v.is_number_integer()) throw ConfigError(fmt::format("{}: {} is not an integer", name, shown(v)));
  const int64_t value = v.get<int64_t>();
  const auto min = static_cast<int64_t>(key.min);
  if (std::isfinite(key.max)) {
    const auto max = static_cast<int64_t>(key.max);
    if (value < min || value > max) throw ConfigError(fmt::format("{}: {} is not in [{}, {}]", name, value, min, max));
  } else if (value < min) {
    throw ConfigError(fmt::format("{}: {} is less than {}", name, value, min));
  }
  return value;
}

double ConfigReader::number(const std::string& name) const {
  const ConfigKey& key = row(name, KeyType::kNumber);
  const json& v = at(name);
  if (!v.is_number()) throw ConfigError(fmt::format("{}: {} is not a number", name, shown(v)));
  const double value = v.get<double>();
  if (!(value >= key.min)) throw ConfigError(fmt::format("{}: {} is less than {}", name, value, key.min));
  if (key.above_min && value == key.min)
    throw ConfigError(key.min == 0 ? fmt::format("{}: {} is not positive", name, value)
                                   : fmt::format("{}: {} is not above {}", name, value, key.min));
  if (value > key.max) throw ConfigError(fmt::format("{}: {} is above {}", name, value, key.max));
  return value;
}

bool ConfigReader::boolean(const std::string& name) const {
  row(name, KeyType::kBoolean);
  const json& v = at(name);
  if (!v.is_boolean()) throw ConfigError(fmt::format("{}: {} is not true or false", name, shown(v)));
  return v.get<bool>();
}

std::string ConfigReader::text(const std::string& name) const {
  const KeyType type = config_key(name).type;
  if (type != KeyType::kText && type != KeyType::kChoice)
    throw std::logic_error(fmt::format("config key {} is read as a string, but the key table says otherwise", name));
  const json& v = at(name);
  if (!v.is_string()) throw ConfigError(fmt::format("{}: {} is not a string", name, shown(v)));
  return v.get<std::string>();
}

std::string ConfigReader::choice(const std::string& name) const {
  const ConfigKey& key = row(name, KeyType::kChoice);
  const std::string value = text(name);
  if (std::find(key.choices.begin(), key.choices.end(), value) == key.choices.end())
    throw ConfigError(fmt::format("{} '{}' is not {}", name, value, choices_text(key.choices)));
  return value;
}

std::vector<int64_t> ConfigReader::integers(const std::string& name) const {
  const ConfigKey& key = row(name, KeyType::kIntegers);
  const json& v = list(name);
  std::vector<int64_t> out;
  for (const json& item : v) {
    if (!item.is_number_integer() || item.get<int64_t>() < static_cast<int64_t>(key.min))
      throw ConfigError(fmt::format("{}: {} is not a list of integers >= {}", name, shown(v), key.min));
    out.push_back(item.get<int64_t>());
  }
  return out;
}

std::vector<std::string> ConfigReader::strings(const std::string& name) const {
  row(name, KeyType::kTexts);
  const json& v = list(name);
  std::vector<std::string> out;
  for (const json& item : v) {
    if (!item.is_string()) throw ConfigError(fmt::format("{}: {} is not a list of strings", name, shown(v)));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<float> ConfigReader::numbers(const std::string& name) const {
  row(name, KeyType::kNumbers);
  const json& v = list(name);
  std::vector<float> out;
  for (const json& item : v) {
    if (!item.is_number()) throw ConfigError(fmt::format("{}: {} is not a list of numbers", name, shown(v)));
    out.push_back(item.get<float>());
  }
  return out;
}

const ConfigKey& ConfigReader::row(const std::string& name, KeyType type) {
  const ConfigKey& key = config_key(name);
  if (key.type != type)
    throw std::logic_error(fmt::format("config key {} is read as another type than the key table gives", name));
  return key;
}

const json& ConfigReader::list(const std::string& name) const {
  const json& v = at(name);
  if (!v.is_array()) throw ConfigError(fmt::format("{}: {} is not a list", name, shown(v)));
  return v;
}

}  // namespace paddle::runtime
