#pragma once
// PrometheusText: metrics in Prometheus' text exposition format (version 0.0.4), the answer of
// the job page's GET /metrics. Each family is written once, HELP and TYPE first, then its
// samples:
//
//   # HELP paddle_loss The loss of the last step the process logged.
//   # TYPE paddle_loss gauge
//   paddle_loss{job="default",node="0",role="trainer",rank="1"} 0.3412
//
// Label values are escaped (backslash, double quote, newline), HELP text too (backslash,
// newline). A family named twice, a bad metric or label name, is a programming error: it throws
// std::logic_error rather than write what Prometheus would refuse.

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace paddle::launcher {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  enum class Type { kGauge, kCounter };

  // Starts a family; its samples follow with sample().
  void family(const std::string& name, Type type, const std::string& help);
  // One sample of the family begun last.
  void sample(const MetricLabels& labels, double value);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string current_;
  std::set<std::string> names_;
};

// A label value or HELP text as the format writes it.
std::string escape_label_value(const std::string& value);
std::string escape_help(const std::string& help);

}  // namespace paddle::launcher
