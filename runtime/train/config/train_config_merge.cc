// The merging of a config file and --set overrides onto the defaults of the key table
// (config_keys.h); an unknown key is an error naming it. The typed reading of the merged
// config is train_config.cc's.
#include "runtime/train/config/config_keys.h"
#include "runtime/train/config/train_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace paddle::runtime {
namespace {

using common::ConfigError;
using nlohmann::json;

// Fleet's spellings of keys a config names otherwise, for the unknown-key error.
std::string renamed_hint(const std::string& key) {
  if (key == "amp.use_pure_fp16") return " (Fleet's name; in a config set amp.level to O2)";
  if (key == "amp.use_bf16") return " (Fleet's name; in a config set amp.dtype to bfloat16)";
  if (key == "amp_configs" || key.starts_with("amp_configs.")) return " (Fleet's name; in a config the group is amp)";
  return "";
}

// The error for a value given where a group of settings (an object) belongs.
std::string group_replaced(const std::string& where, const json& group) {
  std::string keys;
  for (auto it = group.begin(); it != group.end(); ++it) keys += (keys.empty() ? "" : ", ") + it.key();
  return fmt::format("{}: is a group of settings ({}); set those instead", where, keys);
}

void merge(json& into, const json& from, const std::string& where, const std::string& prefix) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (!into.contains(it.key()))
      throw ConfigError(fmt::format("{}: unknown key '{}'{}", where, key, renamed_hint(key)));
    if (into[it.key()].is_object() && it.value().is_object()) merge(into[it.key()], it.value(), where, key);
    else if (into[it.key()].is_object()) throw ConfigError(group_replaced(where + ": " + key, into[it.key()]));
    else into[it.key()] = it.value();
  }
}

// The JSON of the config file PATH; a syntax error names PATH:LINE, as an editor would.
json parse_config_file(const std::string& text, const std::string& path) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line L, column C: REASON".
    const std::string message = e.what();
    const size_t reason = message.find(": ", message.find("column"));
    throw ConfigError(fmt::format("--config {}:{}: not valid JSON: {}", path, line,
                                  reason == std::string::npos ? message : message.substr(reason + 2)));
  } catch (const json::exception& e) {  // a number beyond a double
    throw ConfigError(fmt::format("--config {}: {}", path, e.what()));
  }
}

void apply_override(json& config, const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--set '{}': expected key=value", item));
  const std::string key = item.substr(0, eq), text = item.substr(eq + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception&) {  // not JSON, or a number beyond a double: the text itself
    value = text;
  }
  json* at = &config;
  size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(part))
      throw ConfigError(fmt::format("--set {}: unknown key{}", key, renamed_hint(key)));
    at = &(*at)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (at->is_number() && !value.is_number()) throw ConfigError(fmt::format("--set {}: '{}' is not a number", key, text));
  if (at->is_object()) throw ConfigError(group_replaced("--set " + key, *at));
  *at = value;
}

}  // namespace

json merge_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  json config = default_train_config();
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) throw ConfigError(fmt::format("--config {}: cannot open", path));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const json file = parse_config_file(text, path);
    if (!file.is_object())
      throw ConfigError(fmt::format("--config {}: the file holds {}, not a JSON object of settings ({{\"epochs\": 2, ...}})",
                                    path, file.type_name()));
    merge(config, file, path, "");
  }
  for (const auto& item : overrides) apply_override(config, item);
  return config;
}

}  // namespace paddle::runtime
