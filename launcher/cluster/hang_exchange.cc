#include "launcher/cluster/hang_exchange.h"

#include <fmt/format.h>

#include <set>

#include "launcher/supervise/hang_verdict.h"

namespace paddle::launcher {

namespace {

// A process hung whatever its peers do: stopped, unkillable, or quiet outside a collective.
bool hung_on_its_own(const ProcessFinding& f) {
  if (f.state == 'T' || f.state == 't' || f.state == 'D') return true;
  return !f.going && f.page && f.page->phase != common::Phase::kCollective &&
         f.page->phase != common::Phase::kServing && f.page->phase != common::Phase::kFinished;
}

}  // namespace

void HangExchange::heard(const store::ControlStore::Entry& findings, Clock::time_point now) {
  const nlohmann::json value = nlohmann::json::parse(findings.value, nullptr, false);
  if (!value.is_object() || !value.contains("findings") || !value["findings"].is_array()) return;
  if (value["findings"].empty()) {
    pending_.erase(findings.key);  // its processes move again
    return;
  }
  pending_[findings.key] = Pending{value, now};
}

std::optional<std::string> HangExchange::due(size_t nodes, Clock::time_point now) {
  if (pending_.empty()) return std::nullopt;
  if (pending_.size() < nodes) {
    // Ranks that wait in collectives may wait for a node whose processes go on; a process hung
    // on its own is the job's hang once the other nodes have had kGather to report theirs.
    bool on_its_own = false;
    Clock::time_point first = now;
    for (const auto& [key, p] : pending_) {
      first = std::min(first, p.heard);
      for (const nlohmann::json& f : p.value["findings"]) on_its_own = on_its_own || hung_on_its_own(finding_from_json(f));
    }
    if (!on_its_own || now - first < kGather) return std::nullopt;
  }
  std::vector<ProcessFinding> findings;
  double timeout = 0;
  std::string log_dir = "log";
  std::set<int> nodes_heard;
  for (const auto& [key, p] : pending_) {
    const nlohmann::json& value = p.value;
    timeout = std::max(timeout, value.value("timeout", 0.0));
    log_dir = value.value("log_dir", log_dir);
    for (const nlohmann::json& f : value["findings"]) {
      findings.push_back(finding_from_json(f));
      nodes_heard.insert(findings.back().node);
    }
  }
  pending_.clear();
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
  latest_.reset();
}

}  // namespace paddle::launcher
