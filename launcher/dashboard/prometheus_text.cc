#include "launcher/dashboard/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <stdexcept>

namespace paddle::launcher {
namespace {

bool valid_metric_name(const std::string& name) {
  static const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
  return std::regex_match(name, kName);
}

bool valid_label_name(const std::string& name) {
  static const std::regex kName("[a-zA-Z_][a-zA-Z0-9_]*");
  return std::regex_match(name, kName) && !name.starts_with("__");
}

// Go's strconv formatting as Prometheus reads it: NaN, +Inf, -Inf, else the shortest exact form.
std::string value_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void PrometheusText::family(const std::string& name, Type type, const std::string& help) {
  if (!valid_metric_name(name)) throw std::logic_error(fmt::format("'{}' is not a Prometheus metric name", name));
  if (!names_.insert(name).second) throw std::logic_error(fmt::format("metric family {} written twice", name));
  current_ = name;
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                       type == Type::kCounter ? "counter" : "gauge");
}

void PrometheusText::sample(const MetricLabels& labels, double value) {
  if (current_.empty()) throw std::logic_error("a Prometheus sample before its family");
  text_ += current_;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (!valid_label_name(labels[i].first))
        throw std::logic_error(fmt::format("'{}' is not a Prometheus label name", labels[i].first));
      text_ += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape_label_value(labels[i].second));
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += value_text(value);
  text_ += '\n';
}

}  // namespace paddle::launcher
