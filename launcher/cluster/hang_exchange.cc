#include "launcher/cluster/hang_exchange.h"

#include <fmt/format.h>

#include <set>

#include "launcher/supervise/hang_verdict.h"

namespace paddle::launcher {

void HangExchange::heard(const ControlStore::Entry& findings, Clock::time_point now) {
  const nlohmann::json value = nlohmann::json::parse(findings.value, nullptr, false);
  if (!value.is_object() || !value.contains("findings") || !value["findings"].is_array()) return;
  pending_[findings.key] = value;
  if (!first_heard_) first_heard_ = now;
}

std::optional<std::string> HangExchange::due(size_t nodes, Clock::time_point now) {
  if (pending_.empty() || (pending_.size() < nodes && now - *first_heard_ < kGather)) return std::nullopt;
  std::vector<ProcessFinding> findings;
  double timeout = 0;
  std::string log_dir = "log";
  std::set<int> nodes_heard;
  for (const auto& [key, value] : pending_) {
    timeout = std::max(timeout, value.value("timeout", 0.0));
    log_dir = value.value("log_dir", log_dir);
    for (const nlohmann::json& f : value["findings"]) {
      findings.push_back(finding_from_json(f));
      nodes_heard.insert(findings.back().node);
    }
  }
  pending_.clear();
  first_heard_.reset();
  const JobHangVerdict verdict = judge_hang(findings);
  nlohmann::json out = {{"number", ++verdicts_},
                        {"line", hang_verdict_line(findings, verdict, timeout, log_dir, static_cast<int>(std::max<size_t>(nodes, 2)))},
                        {"culprit", verdict.culprit.has_value()}};
  out["summary"] = verdict.culprit ? fmt::format("{} made no progress for {:.0f} s: {}",
                                                 findings[*verdict.culprit].who(true), timeout, verdict.why)
                                   : fmt::format("no process made progress for {:.0f} s (on {} node(s))", timeout,
                                                 nodes_heard.size());
  return out.dump();
}

void HangExchange::verdict_seen(const std::string& value) {
  nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
  if (v.is_object() && v.contains("line")) latest_ = std::move(v);
}

void HangExchange::begin() {
  pending_.clear();
  first_heard_.reset();
  latest_.reset();
}

}  // namespace paddle::launcher
