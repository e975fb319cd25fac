#include "launcher/supervise/root_cause.h"

#include <boost/process/child.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/process/search_path.hpp>
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <regex>

#include "launcher/supervise/close_on_exec.h"

namespace paddle::launcher {
namespace bp = boost::process;

namespace {

// addr2line's "function at file:line" for each offset of one module, in order; empty when it
// cannot be run or does not answer within a few seconds.
std::vector<std::string> addr2line(const std::string& module, const std::vector<std::string>& offsets) {
  const auto program = bp::search_path("addr2line");
  if (program.empty()) return {};
  std::vector<std::string> args = {"-C", "-f", "-p", "-e", module};
  args.insert(args.end(), offsets.begin(), offsets.end());
  try {
    bp::ipstream out;
    bp::child child(program, args, bp::std_out > out, bp::std_err > bp::null, bp::std_in < bp::null,
                     bp::extend::on_exec_setup = [](auto&) { close_inherited_descriptors_on_exec(); });
    std::vector<std::string> names;
    for (std::string line; names.size() < offsets.size() && std::getline(out, line);) names.push_back(line);
    if (!child.wait_for(std::chrono::seconds(5))) child.terminate();
    return names.size() == offsets.size() ? names : std::vector<std::string>{};
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

std::vector<std::string> name_frames(const std::vector<std::string>& frames) {
  static const std::regex kRaw(R"(#(\d+) (\S+)\+0x([0-9a-f]+))");
  std::vector<std::string> named = frames;
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> by_module;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(frames[i], m, kRaw)) continue;
    // A return address points past its call: name the call (but not frame 0, the fault itself).
    unsigned long offset = std::stoul(m[3], nullptr, 16);
    if (std::stoi(m[1]) > 0 && offset > 0) --offset;
    by_module[m[2]].emplace_back(i, fmt::format("0x{:x}", offset));
  }
  for (const auto& [module, entries] : by_module) {
    std::vector<std::string> offsets;
    for (const auto& e : entries) offsets.push_back(e.second);
    const auto names = addr2line(module, offsets);
    if (names.size() != entries.size()) continue;
    for (size_t k = 0; k < entries.size(); ++k) {
      if (names[k].starts_with("??")) continue;
      const std::string& frame = frames[entries[k].first];
      named[entries[k].first] = frame.substr(0, frame.find(' ')) + " " + names[k];
    }
  }
  return named;
}

std::optional<RootCause> RootCause::read(const std::string& error_file) {
  auto record = common::read_error_record(error_file);
  if (!record) return std::nullopt;
  return RootCause{std::move(*record), error_file};
}

std::string RootCause::describe(size_t max_frames) const {
  std::string text = record.headline();
  std::vector<std::string> frames(record.frames.begin(),
                                  record.frames.begin() + std::min(max_frames, record.frames.size()));
  if (record.kind == "python") {
    // The traceback's last lines are where it raised; its title, its ^^^ markers and its last
    // line (the headline again) say nothing more.
    std::vector<std::string> lines;
    for (const std::string& line : record.frames) {
      const bool marker = line.find_first_not_of(" ^~") == std::string::npos;
      if (!marker && !line.starts_with("Traceback (") && line != record.type + ": " + record.what) lines.push_back(line);
    }
    frames.assign(lines.end() - static_cast<long>(std::min(max_frames, lines.size())), lines.end());
  } else {
    // The innermost frames of the C and C++ runtimes are the failure's machinery (the signal's
    // return, abort, raise, the throw): the first frame worth reading is the caller of those.
    std::vector<std::string> own = record.frames;
    const auto machinery = [](const std::string& f) {
      return f.find("/libc.so") != std::string::npos || f.find("/libstdc++.so") != std::string::npos ||
             f.find("/libgcc_s.so") != std::string::npos;
    };
    size_t first = 0;
    while (first < own.size() && machinery(own[first])) ++first;
    if (first == own.size()) first = 0;
    own.erase(own.begin(), own.begin() + static_cast<long>(first));
    own.resize(std::min(max_frames, own.size()));
    frames = name_frames(own);
  }
  for (size_t i = 0; i < frames.size(); ++i) text += fmt::format("\n{}{}", i == 0 ? "at " : "   ", frames[i]);
  return text;
}

}  // namespace paddle::launcher
