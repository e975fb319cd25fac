#include "runtime/nn/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>

#include "common/file.h"

namespace paddle::runtime {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMagic = "PADDLE-LAUNCH-CHECKPOINT 1";

// Every tensor of a checkpoint, by name, pointing at live tensors (on any device).
std::vector<std::pair<std::string, Tensor*>> tensors_of(Sequential& model, Optimizer& optimizer) {
  std::vector<std::pair<std::string, Tensor*>> all;
  for (Parameter* p : model.parameters()) all.emplace_back(p->name, &p->value);
  for (auto& [name, t] : model.buffers()) all.emplace_back(name, t);
  for (auto& [name, t] : optimizer.state()) all.emplace_back(name, &t);
  return all;
}

}  // namespace

void save_checkpoint(const std::string& output_dir, const CheckpointPosition& at, Sequential& model,
                     Optimizer& optimizer, std::string file_name, bool update_latest) {
  nlohmann::json header;
  header["epoch"] = at.epoch;
  header["step"] = at.step;
  header["tensors"] = nlohmann::json::array();
  auto tensors = tensors_of(model, optimizer);
  for (auto& [name, t] : tensors) header["tensors"].push_back({{"name", name}, {"count", t->numel()}});
  const std::string name = file_name.empty() ? fmt::format("checkpoint-{}.bin", at.epoch) : file_name;
  const fs::path path = fs::path(output_dir) / name;
  std::ostringstream out;
  out << kMagic << "\n" << header.dump() << "\n";
  for (auto& [n, t] : tensors) {
    const std::vector<float> values = t->to_vector();
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  common::write_file_atomically(path, out.view());
  if (update_latest) common::write_file_atomically(fs::path(output_dir) / "latest", name + "\n");
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
  std::map<std::string, Tensor*> wanted;
  for (auto& [n, t] : tensors_of(model, optimizer)) wanted[n] = t;
  std::map<std::string, std::vector<float>> loaded;
  for (const auto& t : header.at("tensors")) {
    const std::string n = t.at("name");
    const size_t count = t.at("count");
    std::vector<float> values(count);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
    if (!in) throw CheckpointError(fmt::format("{}: truncated in tensor '{}'", path.string(), n));
    loaded[n] = std::move(values);
  }
  for (auto& [n, t] : wanted) {
    auto it = loaded.find(n);
    if (it == loaded.end()) throw CheckpointError(fmt::format("{}: has no tensor '{}' (another model?)", path.string(), n));
    if (static_cast<int64_t>(it->second.size()) != t->numel())
      throw CheckpointError(fmt::format("{}: tensor '{}' has {} values, the model {}", path.string(), n,
                                        it->second.size(), t->numel()));
    t->assign(it->second);
  }
  for (auto& [n, values] : loaded)  // optimizer state not created yet: the first step moves it to its device
    if (n.find('/') != std::string::npos && !wanted.count(n))
      optimizer.state()[n] = Tensor::from_values({static_cast<int64_t>(values.size())}, values);
  CheckpointPosition at{header.at("epoch"), header.at("step")};
  optimizer.set_steps(at.step);
  return at;
}

}  // namespace paddle::runtime
