#include "runtime/train/config/online_passes.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/file.h"

namespace paddle::runtime {
namespace {

namespace fs = std::filesystem;

std::string replaced(std::string text, const std::string& name, const std::string& value) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
    text.replace(at, name.size(), value);
  return text;
}

fs::path donefile(const std::string& save_dir) { return fs::path(save_dir) / "donefile.txt"; }

}  // namespace

bool pass_data_ready(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return true;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / "_SUCCESS", ec);
}

std::vector<OnlinePass> online_passes(const OnlineConfig& online, const std::string& save_dir) {
  std::vector<OnlinePass> passes;
  for (const std::string& day : online.days)
    for (int p = 1; p <= online.passes_per_day; ++p) {
      OnlinePass pass;
      pass.index = passes.size();
      pass.day = day;
      pass.pass = p;
      pass.last_of_day = p == online.passes_per_day;
      pass.data = replaced(replaced(online.data_pattern, "{day}", day), "{pass}", std::to_string(p));
      pass.delta_dir = (fs::path(save_dir) / day / std::to_string(p)).string();
      pass.base_dir = (fs::path(save_dir) / day / "base").string();
      passes.push_back(std::move(pass));
    }
  return passes;
}

std::vector<OnlineSave> read_online_saves(const std::string& save_dir) {
  const fs::path file = donefile(save_dir);
  std::vector<OnlineSave> saves;
  std::ifstream in(file);
  if (!in) {
    if (fs::exists(file)) throw common::DataError(fmt::format("{}: cannot read", file.string()));
    return saves;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    OnlineSave s;
    std::string mode, extra;
    if (!(fields >> s.day >> s.pass >> mode >> s.dir) || (fields >> extra) || (mode != "delta" && mode != "base"))
      throw common::DataError(fmt::format("{}:{}: '{}' is not DAY PASS delta|base DIR", file.string(), number, line));
    s.mode = ps::parse_save_mode(mode);
    saves.push_back(std::move(s));
  }
  return saves;
}

void write_online_saves(const std::string& save_dir, const std::vector<OnlineSave>& saves) {
  std::string text;
  for (const OnlineSave& s : saves) text += fmt::format("{} {} {} {}\n", s.day, s.pass, ps::save_mode_name(s.mode), s.dir);
  fs::create_directories(save_dir);
  common::write_file_atomically(donefile(save_dir), text);
}

size_t first_unsaved_pass(const std::vector<OnlinePass>& passes, const std::vector<OnlineSave>& saves) {
  size_t next = 0;
  while (next < passes.size()) {
    const OnlinePass& p = passes[next];
    bool saved = false;
    for (const OnlineSave& s : saves) saved |= s.mode == ps::SaveMode::kDelta && s.day == p.day && s.pass == p.pass;
    // A day's last pass counts as saved only once the day's base is too: shrink and base come after its delta.
    if (saved && p.last_of_day) {
      bool based = false;
      for (const OnlineSave& s : saves) based |= s.mode == ps::SaveMode::kBase && s.day == p.day;
      saved = based;
    }
    if (!saved) break;
    ++next;
  }
  return next;
}

std::vector<OnlineSave> saves_to_load(const std::vector<OnlinePass>& passes, const std::vector<OnlineSave>& saves,
                                      size_t resume_at) {
  if (resume_at == 0) return {};
  // The saves of passes before resume_at, in the order they were made: the donefile's.
  std::vector<OnlineSave> done;
  for (const OnlineSave& s : saves)
    for (size_t i = 0; i < resume_at; ++i)
      if (passes[i].day == s.day && (s.mode == ps::SaveMode::kBase ? passes[i].last_of_day : passes[i].pass == s.pass)) {
        done.push_back(s);
        break;
      }
  size_t from = 0;
  for (size_t i = 0; i < done.size(); ++i)
    if (done[i].mode == ps::SaveMode::kBase) from = i;
  return {done.begin() + static_cast<long>(from), done.end()};
}

}  // namespace paddle::runtime
