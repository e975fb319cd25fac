#include "launcher/supervise/hang_report.h"

#include <fmt/format.h>

#include <fstream>

#include "launcher/console/log_echo.h"
#include "launcher/supervise/process_signs.h"

namespace paddle::launcher {
namespace {

std::string who(const HungProcess& p) {
  return fmt::format("{} {} (local {}, pid {})", role_name(p.spec->role), p.spec->rank, p.spec->local_index, p.pid);
}

std::string doing(const HungProcess& p) {
  std::string state = describe_process_state(p.signs.state);
  if (p.signs.state == 'S' || p.signs.state == 'D')
    if (const std::string wait = kernel_wait_channel(p.pid); !wait.empty()) state += " in " + wait;
  return state;
}

}  // namespace

std::string hang_report_file(const ProcessSpec& spec, const std::string& log_dir) {
  return spec.role == Role::kTrainer ? fmt::format("{}/hang.{}.txt", log_dir, spec.rank)
                                     : fmt::format("{}/hang.{}.{}.txt", log_dir, role_name(spec.role), spec.rank);
}

std::string report_hang(const std::vector<HungProcess>& processes, const HangVerdict& verdict,
                        std::chrono::milliseconds timeout, const std::string& log_dir, std::chrono::seconds stack_timeout) {
  for (size_t i = 0; i < processes.size(); ++i) {
    const HungProcess& p = processes[i];
    std::ofstream out(hang_report_file(*p.spec, log_dir), std::ios::trunc);
    out << fmt::format("{}{}\n", who(p), verdict.culprit == i ? ": the culprit, " + verdict.why : "");
    out << fmt::format("state: {}\nquiet for: {:.0f} s (no CPU time and no output)\ncpu ticks: {}\nlog bytes: {}\n",
                       doing(p), p.quiet_seconds, p.signs.cpu_ticks, p.signs.log_bytes);
    out << fmt::format("\nlast lines of {}:\n{}\n", p.spec->log_file, last_lines(p.spec->log_file, 10));
    out << "native stacks:\n";
    if (p.signs.state == 'T' || p.signs.state == 't') out << "not taken: attaching gdb would resume a stopped process\n";
    else out << native_stacks(p.pid, stack_timeout);
  }
  std::string line = fmt::format("the job made no progress for {} s here (no process used CPU time or wrote output): ",
                                 timeout.count() / 1000);
  if (verdict.culprit) {
    const HungProcess& c = processes[*verdict.culprit];
    line += fmt::format("{} is the culprit: {}", who(c), verdict.why);
  } else {
    line += "no process stands out: they went quiet together";
  }
  for (size_t i = 0; i < processes.size(); ++i)
    if (verdict.culprit != i)
      line += fmt::format("; {} {}, quiet {:.0f} s", who(processes[i]), doing(processes[i]), processes[i].quiet_seconds);
  return line + fmt::format("; each process's state and stacks: {}/hang.*.txt", log_dir);
}

}  // namespace paddle::launcher
