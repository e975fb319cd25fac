#include "launcher/supervise/failure_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "launcher/console/log_echo.h"
#include "launcher/supervise/root_cause.h"

namespace paddle::launcher {
namespace {

std::string indent(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (!out.empty()) out += "\n";
    out += "    | " + text.substr(start, end - start);
    start = end + 1;
  }
  return out;
}

// "trainer 0", "trainers 0, 2 and 3", "server 1 and workers 0 and 2".
std::string name_processes(const std::vector<const ProcessSpec*>& processes) {
  std::vector<std::string> groups;
  for (Role role : {Role::kServer, Role::kTrainer, Role::kWorker, Role::kHeterWorker}) {
    std::vector<std::string> ranks;
    for (const ProcessSpec* p : processes)
      if (p->role == role) ranks.push_back(std::to_string(p->rank));
    if (ranks.empty()) continue;
    std::string list = ranks.back();
    if (ranks.size() > 1) list = fmt::format("{} and {}", fmt::join(ranks.begin(), ranks.end() - 1, ", "), list);
    groups.push_back(fmt::format("{}{} {}", role_name(role), ranks.size() > 1 ? "s" : "", list));
  }
  std::string text = groups.empty() ? "" : groups.back();
  if (groups.size() > 1) text = fmt::format("{} and {}", fmt::join(groups.begin(), groups.end() - 1, ", "), text);
  return text;
}

}  // namespace

void report_failure(const std::vector<ProcessSlot>& slots, size_t first, LaunchLog& log) {
  std::vector<const ProcessSlot*> own;  // the failures that were not our stops, in the order they came
  const auto ended_by_us = [](const ProcessSlot& s) {
    return WIFSIGNALED(*s.status) && WTERMSIG(*s.status) == s.signal_sent;
  };
  for (const auto& s : slots)
    if (s.status && !succeeded(*s.status) && !ended_by_us(s)) own.push_back(&s);
  std::sort(own.begin(), own.end(),
            [](const ProcessSlot* a, const ProcessSlot* b) { return a->exit_order < b->exit_order; });
  const auto account = [](const ProcessSlot& s) { return RootCause::read(s.spec->error_file); };
  const auto side_effect = [&](const ProcessSlot& s) {
    const auto a = account(s);
    return a && a->record.peer;
  };
  const ProcessSlot* root = &slots[first];
  if (side_effect(*root))
    for (const ProcessSlot* s : own)
      if (!side_effect(*s)) {
        root = s;
        break;
      }
  std::vector<const ProcessSpec*> side;  // named in rank order: the order they failed in is chance
  for (const ProcessSlot* s : own)
    if (s != root && side_effect(*s)) side.push_back(s->spec);
  std::sort(side.begin(), side.end(), [](const ProcessSpec* a, const ProcessSpec* b) {
    return std::pair(a->role, a->rank) < std::pair(b->role, b->rank);
  });
  const ProcessSpec& first_failed = *slots[first].spec;
  std::string not_the_cause;
  if (root != &slots[first])
    not_the_cause = side.size() == 1 ? " (the first to fail, but not the cause)"
                                     : fmt::format(" ({} {} was the first to fail, but not the cause)",
                                                   role_name(first_failed.role), first_failed.rank);

  const ProcessSlot& r = *root;
  const auto cause = account(r);
  const std::string tail = last_lines(r.spec->log_file, 20);
  log.error(fmt::format("failed process: {} {} (local {}, endpoint {}) ended with {}{}; log: {}{}",
                        role_name(r.spec->role), r.spec->rank, r.spec->local_index, r.spec->endpoint,
                        describe_wait_status(*r.status),
                        cause ? fmt::format("; root cause ({}):\n{}", r.spec->error_file, indent(cause->describe()))
                              : "",
                        r.spec->log_file, tail.empty() ? " (empty)" : ", last lines:\n" + indent(tail)));
  if (!side.empty())
    log.error(fmt::format("{} {} ended with {}; {} then failed on the lost peer{}", role_name(r.spec->role),
                          r.spec->rank, describe_wait_status(*r.status), name_processes(side), not_the_cause));
}

}  // namespace paddle::launcher
