#pragma once
// A hang's verdict: from what each quiet process is doing, which one the job waits for. Each
// node's launcher finds its quiet processes (hang_watch.h says when); in a multi-node job it
// sends its findings to the master's launcher, which judges them all together, so that one
// verdict names the culprit wherever it runs. The first rule that names someone holds:
//
//   1. a process stopped (SIGSTOP, state T), held by a tracer (t), or in uninterruptible sleep
//      (D): no signal moves it, and everyone else waits for it;
//   2. ranks wait in a collective that a rank has not entered: that rank, with the phase it is
//      in ("it has not entered allreduce #1,205, in which trainers 0-2 wait; it has been in
//      data loading for 612 s");
//   3. ranks wait in different collectives: the one apart from the rest ("it is in allreduce
//      #1,206: it went past allreduce #1,205, in which trainers 0-2 wait");
//   4. the only quiet process while others go on (a parameter-server worker), or when the rest
//      have finished or only serve;
//   5. for programs without a page, by their stacks (hang_report.h): processes whose stacks
//      show a collective (an allreduce, a barrier, ...) wait in it; one whose stacks show none
//      is what they wait for ("its stacks are in no collective, while trainer 0's wait in one;
//      its Python frame: <module> (train.py:15)");
//   6. the process that went quiet first, by a second or more;
//   otherwise nobody: they went quiet together (a deadlock, or all wait on something else).
//
// The verdict's line, as the console shows it:
//
//   the job made no progress for 30 s: trainer 3 (node 1, local 1, pid 4242) is the culprit:
//   it has not entered allreduce #1,205, in which trainers 0-2 wait; it has been in data loading
//   for 612 s. The others: trainers 0-2 wait in allreduce #1,205 (4.0 MB), quiet 31 s. Each
//   process's state and stacks: log/hang.*.txt on its node
//
// Findings travel as JSON: {"role", "rank", "node", "local", "pid", "state", "wait", "quiet", "going",
// "page": {"phase", "phase_name", "collective", "sequence", "bytes", "in_phase", "steps"},
// "stack_in_collective", "python_frame"}.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/progress_page.h"

namespace paddle::launcher {

// What a process's progress page said when the hang was found (common/progress_page.h).
struct PageFinding {
  common::Phase phase = common::Phase::kStarting;
  std::string collective;  // "allreduce #1,205", or "" before its first
  uint64_t sequence = 0;   // collectives entered
  uint64_t bytes = 0;
  double in_phase = 0;     // seconds
  int64_t steps = 0;
};

struct ProcessFinding {
  std::string role;  // "trainer", "worker", ...
  int rank = 0, node = 0, local = 0, pid = 0;
  char state = '?';  // /proc's state letter
  std::string wait;  // the kernel function it sleeps in, or ""
  double quiet = 0;  // seconds since its last progress
  bool going = false;  // it moved lately: not waiting with the rest (hang_watch.h)
  std::optional<PageFinding> page;  // our runtime's processes
  // From its stacks, where they were taken: whether a thread is in a collective, and its
  // innermost Python frame ("<module> (train.py:15)"), if any.
  std::optional<bool> stack_in_collective;
  std::string python_frame;

  // "trainer 3 (node 1, local 1, pid 4242)"; without the node in a one-node job.
  std::string who(bool with_node) const;
  // "waits in allreduce #1,205 (4.0 MB)", "is in data loading", "waits in a collective, as the
  // stacks show", "is sleeping in do_epoll_wait".
  std::string doing() const;
};

struct JobHangVerdict {
  std::optional<size_t> culprit;  // into the findings
  std::string why;                // "it is stopped (SIGSTOP)", ...
  bool by_timing = false;         // rule 6 named it: stacks, where they can be taken, say more
};

JobHangVerdict judge_hang(const std::vector<ProcessFinding>& findings);

// The console's line; `nodes`: how many nodes the job has (names them past one).
std::string hang_verdict_line(const std::vector<ProcessFinding>& findings, const JobHangVerdict& verdict,
                              double timeout_seconds, const std::string& log_dir, int nodes);

// "trainers 0-2, 5", "trainer 4": ranks of one role, runs of three or more as ranges.
std::string name_ranks(const std::string& role, std::vector<int> ranks);

nlohmann::json to_json(const ProcessFinding& finding);
ProcessFinding finding_from_json(const nlohmann::json& j);

// "stopped (SIGSTOP)", "in uninterruptible sleep (D)", "sleeping", ...: a state letter for people.
std::string describe_process_state(char state);

}  // namespace paddle::launcher
