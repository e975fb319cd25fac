#include "checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

namespace paddle::runtime {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMagic = "PADDLE-LAUNCH-CHECKPOINT 1";

// Every tensor of a checkpoint, by name, pointing at live storage.
std::vector<std::pair<std::string, std::vector<float>*>> tensors_of(Sequential& model, Optimizer& optimizer) {
  std::vector<std::pair<std::string, std::vector<float>*>> all;
  for (Parameter* p : model.parameters()) all.emplace_back(p->name, &p->value.data);
  for (auto& [name, t] : model.buffers()) all.emplace_back(name, &t->data);
  for (auto& [name, v] : optimizer.state()) all.emplace_back(name, &v);
  return all;
}

}  // namespace

void save_checkpoint(const std::string& output_dir, const CheckpointPosition& at, Sequential& model,
                     Optimizer& optimizer, std::string file_name, bool update_latest) {
  fs::create_directories(output_dir);
  nlohmann::json header;
  header["epoch"] = at.epoch;
  header["step"] = at.step;
  header["tensors"] = nlohmann::json::array();
  auto tensors = tensors_of(model, optimizer);
  for (auto& [name, data] : tensors) header["tensors"].push_back({{"name", name}, {"count", data->size()}});
  const std::string name = file_name.empty() ? fmt::format("checkpoint-{}.bin", at.epoch) : file_name;
  const fs::path path = fs::path(output_dir) / name;
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kMagic << "\n" << header.dump() << "\n";
    for (auto& [n, data] : tensors)
      out.write(reinterpret_cast<const char*>(data->data()), static_cast<std::streamsize>(data->size() * sizeof(float)));
    if (!out) throw CheckpointError(fmt::format("{}: write failed", tmp.string()));
  }
  fs::rename(tmp, path);
  if (!update_latest) return;
  const fs::path latest = fs::path(output_dir) / "latest";
  std::ofstream(latest.string() + ".tmp") << name << "\n";
  fs::rename(latest.string() + ".tmp", latest);
}

std::optional<CheckpointPosition> load_latest_checkpoint(const std::string& output_dir, Sequential& model,
                                                         Optimizer& optimizer) {
  const fs::path latest = fs::path(output_dir) / "latest";
  std::ifstream pointer(latest);
  if (!pointer) return std::nullopt;
  std::string name;
  std::getline(pointer, name);
  const fs::path path = fs::path(output_dir) / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(fmt::format("{}: named by {} but missing", path.string(), latest.string()));
  std::string magic, header_line;
  std::getline(in, magic);
  std::getline(in, header_line);
  if (magic != kMagic) throw CheckpointError(fmt::format("{}: not a paddle-launch checkpoint", path.string()));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_line);
  } catch (const std::exception& e) {
    throw CheckpointError(fmt::format("{}: bad header: {}", path.string(), e.what()));
  }
  std::map<std::string, std::vector<float>*> wanted;
  for (auto& [n, data] : tensors_of(model, optimizer)) wanted[n] = data;
  std::map<std::string, std::vector<float>> loaded;
  for (const auto& t : header.at("tensors")) {
    const std::string n = t.at("name");
    const size_t count = t.at("count");
    std::vector<float> values(count);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
    if (!in) throw CheckpointError(fmt::format("{}: truncated in tensor '{}'", path.string(), n));
    loaded[n] = std::move(values);
  }
  for (auto& [n, data] : wanted) {
    auto it = loaded.find(n);
    if (it == loaded.end()) throw CheckpointError(fmt::format("{}: has no tensor '{}' (another model?)", path.string(), n));
    if (it->second.size() != data->size())
      throw CheckpointError(fmt::format("{}: tensor '{}' has {} values, the model {}", path.string(), n,
                                        it->second.size(), data->size()));
    *data = it->second;
  }
  for (auto& [n, values] : loaded)
    if (n.find('/') != std::string::npos && !wanted.count(n)) optimizer.state()[n] = values;  // state not created yet
  CheckpointPosition at{header.at("epoch"), header.at("step")};
  optimizer.set_steps(at.step);
  return at;
}

}  // namespace paddle::runtime
