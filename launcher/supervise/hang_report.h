#pragma once
// A hang's files (hang_watch.h, hang_verdict.h): what each local process was doing, in
// LOG_DIR/hang.<rank>.txt (PS roles: hang.<role>.<rank>.txt):
//
//   trainer 3 (local 1, pid 4242): the culprit, it has not entered allreduce #1,205, ...
//   state: sleeping in hrtimer_nanosleep
//   quiet for: 31 s
//   progress: in data loading for 612 s, after step 340, last collective allreduce #1,204
//   last lines of log/workerlog.1: ...
//   native stacks: (gdb's, every thread's; not for a stopped process: attaching would resume it)
//   Python frames: (py-spy's, for a Python program where it is installed)
//
// Taking stacks takes seconds per process: the supervisor writes these off its own thread.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/plan/launch_plan.h"
#include "launcher/supervise/hang_verdict.h"

namespace paddle::launcher {

struct HungProcess {
  const ProcessSpec* spec = nullptr;
  ProcessFinding finding;
  std::string progress;  // the page's description (common::ProgressReading::describe), or ""
};

// The file a process's part of the report goes to.
std::string hang_report_file(const ProcessSpec& spec, const std::string& log_dir);

// What a process's file shows of its stacks, for a verdict on programs without a progress page
// (hang_verdict.h's rule 5): whether a thread is in a collective (an allreduce, a barrier, a
// broadcast, an allgather, ...; nothing when no stack could be taken), and its innermost Python
// frame ("<module> (train.py:15)"), if py-spy gave any.
struct StackClues {
  std::optional<bool> in_collective;
  std::string python_frame;
};
StackClues read_stack_clues(const std::string& hang_file);

// Writes each process's file, stacks taken with `stack_timeout` each; `culprit` (into
// `processes`) is marked with `why`. `search_path`: where py-spy may be (process_signs.h).
void write_hang_reports(const std::vector<HungProcess>& processes, std::optional<size_t> culprit, const std::string& why,
                        const std::string& log_dir, const std::vector<std::string>& search_path,
                        std::chrono::seconds stack_timeout);

// Marks the process of `hang_file` as the culprit, `why`, in the file's first line: for a verdict
// reached from the files' own stacks, after they were written.
void mark_culprit_report(const std::string& hang_file, const ProcessFinding& culprit, const std::string& why);

}  // namespace paddle::launcher
