#include "runtime/train/run/generations.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/file.h"

namespace paddle::runtime {
namespace {

constexpr const char* kFileName = "generations.json";

Generation generation_from_json(const nlohmann::json& entry) {
  Generation g;
  g.generation = entry.at("generation").get<int64_t>();
  g.world_size = entry.at("world_size").get<int>();
  g.from = {entry.at("from_epoch").get<int64_t>(), entry.at("from_step").get<int64_t>()};
  return g;
}

}  // namespace

RunOrigin run_origin(const common::Environment& env, bool resume_asked) {
  RunOrigin origin;
  origin.generation = common::env_int(env, "PADDLE_RESTART_COUNT", 0);
  origin.resuming = resume_asked || origin.generation > 0;
  return origin;
}

nlohmann::json generations_to_json(const std::vector<Generation>& history) {
  nlohmann::json list = nlohmann::json::array();
  for (const Generation& g : history)
    list.push_back({{"generation", g.generation},
                    {"world_size", g.world_size},
                    {"from_epoch", g.from.rounds},
                    {"from_step", g.from.step}});
  return list;
}

std::vector<Generation> read_generations(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    if (!std::filesystem::exists(file)) return {};
    throw common::DataError(fmt::format("{}: cannot open the run's generations", file.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json list = nlohmann::json::parse(text.str());
    if (!list.is_array()) throw common::DataError("not a JSON list");
    std::vector<Generation> history;
    for (const auto& entry : list) history.push_back(generation_from_json(entry));
    return history;
  } catch (const std::exception& e) {
    throw common::DataError(fmt::format("{}: not a list of generations ({}); remove it to start a new history",
                                        file.string(), e.what()));
  }
}

std::vector<Generation> record_generation(const std::string& output_dir, const Generation& now, bool resuming) {
  const std::filesystem::path file = std::filesystem::path(output_dir) / kFileName;
  std::vector<Generation> history;
  if (resuming)
    for (const Generation& g : read_generations(file))
      if (std::pair(g.from.rounds, g.from.step) <= std::pair(now.from.rounds, now.from.step)) history.push_back(g);
  history.push_back(now);
  const auto json = generations_to_json(history);
  common::write_file_atomically(file, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return history;
}

std::string describe_generations(const std::vector<Generation>& history) {
  std::string text;
  for (size_t i = 0; i < history.size(); ++i) {
    const Generation& g = history[i];
    text += fmt::format("{}{} worker(s) from epoch {} (step {}, generation {})", i == 0 ? "" : ", then ",
                        g.world_size, g.from.rounds, g.from.step, g.generation);
  }
  return text;
}

}  // namespace paddle::runtime
