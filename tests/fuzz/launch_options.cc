// Fuzz target: the launcher's command line (launcher/plan/launch_options.h parse_command_line, then
// describe_options as the launcher prints them). The input is argv after the program name, one
// argument per line. Anything wrong must be a common::UsageError naming the flag.

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "launcher/plan/launch_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"paddle-launch"};
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    args.emplace_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  try {
    const auto line = paddle::launcher::parse_command_line(static_cast<int>(args.size()), argv.data());
    if (line.action == paddle::launcher::CommandLine::Action::kRun) paddle::launcher::describe_options(line.options);
  } catch (const paddle::common::UsageError&) {
  }
  return 0;
}
