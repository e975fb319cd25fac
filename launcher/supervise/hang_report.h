#pragma once
// A hang's report (--hang_timeout): what each local process was doing when the job stopped making
// progress, in LOG_DIR/hang.<rank>.txt (PS roles: hang.<role>.<rank>.txt), and the one verdict the
// console shows, naming the culprit first:
//
//   the job made no progress for 30 s: trainer 1 (local 1, pid 4242) is the culprit: it is stopped
//   (SIGSTOP); trainer 0 (pid 4241) sleeping in do_epoll_wait, quiet 31 s; stacks in log/hang.*.txt
//
// Each file holds the process's state, seconds since its last progress, where the kernel has it
// wait, its log's last lines and its threads' native stacks (not for a stopped process: attaching
// gdb would resume it).

#include <chrono>
#include <string>
#include <vector>

#include "launcher/plan/launch_plan.h"
#include "launcher/supervise/hang_watch.h"

namespace paddle::launcher {

struct HungProcess {
  const ProcessSpec* spec = nullptr;
  pid_t pid = -1;
  ProcessSigns signs;
  double quiet_seconds = 0;
};

// The file a process's part of the report goes to.
std::string hang_report_file(const ProcessSpec& spec, const std::string& log_dir);

// Writes each process's file (stacks taken with `stack_timeout` each) and returns the verdict line.
std::string report_hang(const std::vector<HungProcess>& processes, const HangVerdict& verdict,
                        std::chrono::milliseconds timeout, const std::string& log_dir, std::chrono::seconds stack_timeout);

}  // namespace paddle::launcher
