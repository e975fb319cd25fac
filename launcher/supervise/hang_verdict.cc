#include "launcher/supervise/hang_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/byte_size.h"

namespace paddle::launcher {
namespace {

using common::Phase;

bool serving(const ProcessFinding& f) {
  return f.page && (f.page->phase == Phase::kServing || f.page->phase == Phase::kFinished);
}

bool quiet(const ProcessFinding& f) { return !f.going && !serving(f); }

bool in_collective(const ProcessFinding& f) { return f.page && f.page->phase == Phase::kCollective; }

std::string ranks_of(const std::vector<ProcessFinding>& findings, const std::vector<size_t>& which) {
  std::vector<int> ranks;
  for (size_t i : which) ranks.push_back(findings[i].rank);
  return name_ranks(which.empty() ? "trainer" : findings[which.front()].role, ranks);
}

std::optional<JobHangVerdict> stopped_or_unkillable(const std::vector<ProcessFinding>& findings) {
  for (char state : {'T', 't', 'D'})
    for (size_t i = 0; i < findings.size(); ++i)
      if (findings[i].state == state) {
        std::string why = "it is " + describe_process_state(state);
        if (state == 'D' && !findings[i].wait.empty()) why += " in " + findings[i].wait;
        return JobHangVerdict{i, why};
      }
  return std::nullopt;
}

// The collective the others wait in, where `waiting` are in different ones: the one most are in;
// between as many, the earliest: the rank past it went on without the others.
uint64_t common_sequence(const std::vector<ProcessFinding>& findings, const std::vector<size_t>& waiting) {
  std::map<uint64_t, size_t> count;
  for (size_t i : waiting) ++count[findings[i].page->sequence];
  return std::ranges::max_element(count, [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

std::optional<JobHangVerdict> collective_left_waiting(const std::vector<ProcessFinding>& findings) {
  std::vector<size_t> waiting, elsewhere;
  for (size_t i = 0; i < findings.size(); ++i) {
    const ProcessFinding& f = findings[i];
    if (in_collective(f) && quiet(f)) waiting.push_back(i);
    else if (f.page && quiet(f) && !common::waits_on_others(f.page->phase)) elsewhere.push_back(i);
  }
  if (waiting.empty()) return std::nullopt;
  const uint64_t sequence = common_sequence(findings, waiting);
  std::vector<size_t> at, apart;
  for (size_t i : waiting) (findings[i].page->sequence == sequence ? at : apart).push_back(i);
  const std::string label = findings[at.front()].page->collective;
  const std::string wait = at.size() == 1 ? "waits" : "wait";
  if (!elsewhere.empty()) {
    const size_t c = *std::ranges::max_element(elsewhere, [&](size_t a, size_t b) {
      return findings[a].page->in_phase < findings[b].page->in_phase;
    });
    return JobHangVerdict{c, fmt::format("it has not entered {}, in which {} {}; it has been in {} for {:.0f} s", label,
                                         ranks_of(findings, at), wait, common::phase_name(findings[c].page->phase),
                                         findings[c].page->in_phase)};
  }
  if (!apart.empty()) {
    const size_t c = *std::ranges::max_element(apart, [&](size_t a, size_t b) {
      return findings[a].page->sequence < findings[b].page->sequence;
    });
    const PageFinding& p = *findings[c].page;
    return JobHangVerdict{c, fmt::format("it is in {}: it {} {}, in which {} {}", p.collective,
                                         p.sequence > sequence ? "went past" : "has not reached", label,
                                         ranks_of(findings, at), wait)};
  }
  return std::nullopt;
}

// Programs without a page, by their stacks: those in a collective wait for one that is in none.
std::optional<JobHangVerdict> stacks_left_waiting(const std::vector<ProcessFinding>& findings, const std::vector<size_t>& still) {
  std::vector<size_t> waiting, elsewhere;
  for (size_t i : still) {
    if (!findings[i].stack_in_collective) continue;
    (*findings[i].stack_in_collective ? waiting : elsewhere).push_back(i);
  }
  if (waiting.empty() || elsewhere.empty()) return std::nullopt;
  const size_t c = elsewhere.front();
  const ProcessFinding& f = findings[c];
  return JobHangVerdict{c, fmt::format("its stacks are in no collective, while {}'s wait in one{}", ranks_of(findings, waiting),
                                       f.python_frame.empty() ? "" : "; its Python frame: " + f.python_frame)};
}

}  // namespace

std::string describe_process_state(char state) {
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "in uninterruptible sleep (D)";
    case 'T': return "stopped (SIGSTOP)";
    case 't': return "stopped by a tracer";
    case 'Z': return "a zombie";
    case 'I': return "idle";
  }
  return fmt::format("in state {}", state);
}

std::string ProcessFinding::who(bool with_node) const {
  return fmt::format("{} {} ({}local {}, pid {})", role, rank, with_node ? fmt::format("node {}, ", node) : "", local, pid);
}

std::string ProcessFinding::doing() const {
  if (state == 'T' || state == 't' || state == 'D')
    return "is " + describe_process_state(state) + (state == 'D' && !wait.empty() ? " in " + wait : "");
  if (page && page->phase == Phase::kCollective) return fmt::format("waits in {} ({})", page->collective, common::byte_size(page->bytes));
  if (page && common::waits_on_others(page->phase)) return "waits in " + common::phase_name(page->phase);
  if (page) return "is in " + common::phase_name(page->phase);
  if (stack_in_collective.value_or(false)) return "waits in a collective, as the stacks show";
  return "is " + describe_process_state(state) + (wait.empty() ? "" : " in " + wait);
}

std::string name_ranks(const std::string& role, std::vector<int> ranks) {
  std::ranges::sort(ranks);
  std::string runs;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!runs.empty()) runs += ", ";
    if (j - i >= 2) runs += fmt::format("{}-{}", ranks[i], ranks[j]);
    else if (j == i + 1) runs += fmt::format("{}, {}", ranks[i], ranks[j]);
    else runs += std::to_string(ranks[i]);
    i = j + 1;
  }
  return fmt::format("{}{} {}", role, ranks.size() == 1 ? "" : "s", runs);
}

JobHangVerdict judge_hang(const std::vector<ProcessFinding>& findings) {
  if (auto v = stopped_or_unkillable(findings)) return *v;
  if (auto v = collective_left_waiting(findings)) return *v;
  std::vector<size_t> still;
  size_t going = 0;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (quiet(findings[i])) still.push_back(i);
    else if (!serving(findings[i])) ++going;
  }
  if (still.size() == 1 && going > 0) {
    const ProcessFinding& f = findings[still.front()];
    return JobHangVerdict{still.front(), fmt::format("it {} while the others go on", f.doing())};
  }
  if (still.size() == 1 && findings.size() == 1) return JobHangVerdict{still.front(), "it is the only process left"};
  if (still.size() == 1) return JobHangVerdict{still.front(), fmt::format("it {}, and nothing else is left to run", findings[still.front()].doing())};
  if (auto v = stacks_left_waiting(findings, still)) return *v;
  std::ranges::sort(still, [&](size_t a, size_t b) { return findings[a].quiet > findings[b].quiet; });
  if (still.size() > 1 && findings[still[0]].quiet - findings[still[1]].quiet >= 1)
    return JobHangVerdict{still[0],
                          fmt::format("it went quiet {:.0f} s before the others, which wait for it",
                                      findings[still[0]].quiet - findings[still[1]].quiet),
                          true};
  return {};
}

std::string hang_verdict_line(const std::vector<ProcessFinding>& findings, const JobHangVerdict& verdict,
                              double timeout_seconds, const std::string& log_dir, int nodes) {
  const bool with_node = nodes > 1;
  std::string line = fmt::format("the job made no progress for {:.0f} s: ", timeout_seconds);
  if (verdict.culprit) line += fmt::format("{} is the culprit: {}", findings[*verdict.culprit].who(with_node), verdict.why);
  else line += "no process stands out: they went quiet together";
  // The others, grouped by what they do.
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (verdict.culprit == i || !quiet(findings[i])) continue;
    const std::string key = findings[i].role + "\n" + findings[i].doing();
    auto it = std::ranges::find_if(groups, [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {i}});
    else it->second.push_back(i);
  }
  std::string others;
  for (const auto& [key, members] : groups) {
    double longest = 0;
    for (size_t i : members) longest = std::max(longest, findings[i].quiet);
    const std::string names = members.size() == 1 ? findings[members.front()].who(with_node) : ranks_of(findings, members);
    std::string doing = findings[members.front()].doing();
    if (members.size() > 1 && doing.starts_with("waits ")) doing = "wait " + doing.substr(6);
    if (members.size() > 1 && doing.starts_with("is ")) doing = "are " + doing.substr(3);
    others += fmt::format("{}{} {}, quiet {:.0f} s", others.empty() ? "" : "; ", names, doing, longest);
  }
  if (!others.empty()) line += ". The others: " + others;
  return line + fmt::format(". Each process's state and stacks: {}/hang.*.txt{}", log_dir, with_node ? " on its node" : "");
}

nlohmann::json to_json(const ProcessFinding& f) {
  nlohmann::json j = {{"role", f.role}, {"rank", f.rank},   {"node", f.node},
                      {"local", f.local}, {"pid", f.pid},   {"state", std::string(1, f.state)},
                      {"wait", f.wait}, {"quiet", f.quiet}, {"going", f.going},
                      {"python_frame", f.python_frame}};
  if (f.stack_in_collective) j["stack_in_collective"] = *f.stack_in_collective;
  if (f.page)
    j["page"] = {{"phase", static_cast<uint32_t>(f.page->phase)}, {"phase_name", common::phase_name(f.page->phase)},
                 {"collective", f.page->collective},              {"sequence", f.page->sequence},
                 {"bytes", f.page->bytes},                        {"in_phase", f.page->in_phase},
                 {"steps", f.page->steps}};
  return j;
}

ProcessFinding finding_from_json(const nlohmann::json& j) {
  ProcessFinding f;
  f.role = j.value("role", "trainer");
  f.rank = j.value("rank", 0);
  f.node = j.value("node", 0);
  f.local = j.value("local", 0);
  f.pid = j.value("pid", 0);
  const std::string state = j.value("state", "?");
  f.state = state.empty() ? '?' : state[0];
  f.wait = j.value("wait", "");
  f.quiet = j.value("quiet", 0.0);
  f.going = j.value("going", false);
  f.python_frame = j.value("python_frame", "");
  if (j.contains("stack_in_collective") && j["stack_in_collective"].is_boolean())
    f.stack_in_collective = j["stack_in_collective"].get<bool>();
  if (j.contains("page") && j["page"].is_object()) {
    const nlohmann::json& p = j["page"];
    PageFinding page;
    page.phase = static_cast<Phase>(p.value("phase", 0u));
    page.collective = p.value("collective", "");
    page.sequence = p.value("sequence", uint64_t{0});
    page.bytes = p.value("bytes", uint64_t{0});
    page.in_phase = p.value("in_phase", 0.0);
    page.steps = p.value("steps", int64_t{0});
    f.page = page;
  }
  return f;
}

}  // namespace paddle::launcher
