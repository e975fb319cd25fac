#pragma once
// What the system shows of a running process without code of ours in it: its CPU time and state
// (/proc/PID/stat), the size of its log, where the kernel has it wait (/proc/PID/wchan), and its
// threads' stacks: a Python program's by py-spy where it is installed (its frames with the native
// ones between them, in a tenth of a second), any other's native ones by gdb (seconds: it reads
// every library's symbols, 2.8 s of CPU for Paddle's). HangWatch judges the signs; a hang's
// report (hang_report.h) shows the rest.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/supervise/hang_watch.h"

namespace paddle::launcher {

// Nothing when the process is gone (or /proc is not mounted). `page_file`: its progress page
// (common/progress_page.h), read when the process has opened it.
std::optional<ProcessSigns> read_process_signs(pid_t pid, const std::string& log_file, const std::string& page_file = "");

// The kernel function the process sleeps in ("futex_wait_queue", "do_epoll_wait", ...), or "".
std::string kernel_wait_channel(pid_t pid);

// The kernel's stack of the process (/proc/PID/stack, readable by root), or "".
std::string kernel_stack(pid_t pid);

// "in uninterruptible sleep (D) in io_schedule; kernel stack: ...", for a stop's log; "" when gone.
std::string describe_live_state(pid_t pid);

// A tool's stacks, or (`taken` false) a line saying why there are none.
struct Stacks {
  bool taken = false;
  std::string text;
};

// Every thread's native stack from `gdb -p PID -batch`, ended after `timeout` (SIGTERM first, so
// that gdb detaches and leaves the process running); when gdb is not on PATH, cannot attach
// (ptrace refused) or times out, a line saying so instead.
Stacks native_stacks(pid_t pid, std::chrono::seconds timeout);

// A Python process's frames, every Python thread's, with the native frames between them, from
// py-spy (`py-spy dump --native --pid PID`), looked for on `search_path` (PATH and the directory
// of the program's interpreter, where a venv keeps it); nothing for a process that is not a
// Python interpreter; a line saying why when py-spy is not installed or cannot attach.
std::optional<Stacks> python_stacks(pid_t pid, const std::vector<std::string>& search_path, std::chrono::seconds timeout);

}  // namespace paddle::launcher
