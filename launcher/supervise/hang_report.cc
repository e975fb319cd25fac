#include "launcher/supervise/hang_report.h"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "common/file.h"

#include "launcher/console/log_echo.h"
#include "launcher/supervise/process_signs.h"

namespace paddle::launcher {

namespace {

std::string culprit_line(const ProcessFinding& f, bool culprit, const std::string& why) {
  return fmt::format("{}{}\n", f.who(false), culprit ? ": the culprit, " + why : "");
}

}  // namespace

std::string hang_report_file(const ProcessSpec& spec, const std::string& log_dir) {
  return spec.role == Role::kTrainer ? fmt::format("{}/hang.{}.txt", log_dir, spec.rank)
                                     : fmt::format("{}/hang.{}.{}.txt", log_dir, role_name(spec.role), spec.rank);
}

void write_hang_reports(const std::vector<HungProcess>& processes, std::optional<size_t> culprit, const std::string& why,
                        const std::string& log_dir, const std::vector<std::string>& search_path,
                        std::chrono::seconds stack_timeout) {
  for (size_t i = 0; i < processes.size(); ++i) {
    const HungProcess& p = processes[i];
    const ProcessFinding& f = p.finding;
    std::ofstream out(hang_report_file(*p.spec, log_dir), std::ios::trunc);
    out << culprit_line(f, culprit == i, why);
    out << fmt::format("state: {}{}\nquiet for: {:.0f} s\n", describe_process_state(f.state),
                       f.wait.empty() ? "" : " in " + f.wait, f.quiet);
    if (!p.progress.empty()) out << fmt::format("progress: {}\n", p.progress);
    out << fmt::format("\nlast lines of {}:\n{}\n", p.spec->log_file, last_lines(p.spec->log_file, 10));
    const bool stopped = f.state == 'T' || f.state == 't', unkillable = f.state == 'D';
    out << "native stacks:\n";
    std::optional<Stacks> python;
    if (stopped) out << "not taken: attaching a debugger would resume a stopped process\n";
    else if (unkillable) out << "not taken: a debugger cannot attach to a process in uninterruptible sleep\n";
    else if (python = python_stacks(f.pid, search_path, stack_timeout); python && python->taken)
      out << "between the Python frames below (py-spy dump --native)\n";
    else out << native_stacks(f.pid, stack_timeout).text;
    if (const std::string stack = kernel_stack(f.pid); !stack.empty()) out << "\nkernel stack:\n" << stack;
    if (python) out << "\nPython frames:\n" << python->text;
  }
}

void mark_culprit_report(const std::string& hang_file, const ProcessFinding& culprit, const std::string& why) {
  const std::optional<std::string> text = common::read_file(hang_file);
  if (!text) return;
  const size_t first = text->find('\n');
  common::write_file_atomically(hang_file, culprit_line(culprit, true, why) +
                                               (first == std::string::npos ? "" : text->substr(first + 1)));
}

StackClues read_stack_clues(const std::string& hang_file) {
  StackClues clues;
  const std::string text = common::read_file(hang_file).value_or("");
  const size_t native = text.find("\nnative stacks:\n");
  if (native == std::string::npos) return clues;
  const std::string stacks = text.substr(native);
  const size_t python = stacks.find("\nPython frames:\n");
  const bool have_native = stacks.find("\n#0 ") != std::string::npos || stacks.find("\n#1 ") != std::string::npos;
  std::string frames;
  if (python != std::string::npos) {
    std::istringstream lines(stacks.substr(python + 16));
    // A Python frame names its file and line; a native one between them (--native) its library.
    static const std::regex frame(R"(^\s+(\S.*\((\S+\.py|<\S+>):\d+\))\s*$)");
    static const std::regex native_frame(R"(^\s+\S.*\(\S+\)\s*$)");
    std::smatch m;
    for (std::string line; std::getline(lines, line);)
      if (std::regex_match(line, m, frame)) {
        if (clues.python_frame.empty()) clues.python_frame = m[1];
        frames += line + "\n";
      } else if (std::regex_match(line, native_frame)) {
        frames += line + "\n";
      }
  }
  if (!have_native && frames.empty()) return clues;
  static const std::regex collective(R"(all_?reduce|barrier|broadcast|all_?gather|reduce_?scatter|all_?to_?all)",
                                     std::regex::icase);
  // Idle OpenMP workers wait at their pool's barrier in every process: not a collective.
  std::istringstream all((python == std::string::npos ? stacks : stacks.substr(0, python)) + frames);
  bool in_collective = false;
  for (std::string line; std::getline(all, line);)
    if (line.find("omp") == std::string::npos && line.find("pthread_barrier") == std::string::npos &&
        line.find("kmp_") == std::string::npos && std::regex_search(line, collective))
      in_collective = true;
  clues.in_collective = in_collective;
  return clues;
}

}  // namespace paddle::launcher
