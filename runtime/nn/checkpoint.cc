#include "runtime/nn/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "common/checksum.h"
#include "common/file.h"

namespace paddle::runtime {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kFormatName = "PADDLE-LAUNCH-CHECKPOINT ";
constexpr std::string_view kMagicV1 = "PADDLE-LAUNCH-CHECKPOINT 1";
constexpr std::string_view kMagic = "PADDLE-LAUNCH-CHECKPOINT 2";
constexpr size_t kChecksumBytes = 4;

constexpr std::string_view kMasterPrefix = "master/";

// Every tensor of a checkpoint, by name, pointing at live tensors (on any device): a parameter's
// master weights stand in for it where the optimizer has them.
std::vector<std::pair<std::string, Tensor*>> tensors_of(Sequential& model, Optimizer& optimizer) {
  std::vector<std::pair<std::string, Tensor*>> all;
  for (Parameter* p : model.parameters()) {
    const auto master = optimizer.state().find(master_weights_name(p->name));
    all.emplace_back(p->name, master != optimizer.state().end() ? &master->second : &p->value);
  }
  for (auto& [name, t] : model.buffers()) all.emplace_back(name, t);
  for (auto& [name, t] : optimizer.state())
    if (!name.starts_with(kMasterPrefix)) all.emplace_back(name, &t);
  return all;
}

// A 16-bit parameter takes its rounded value from the float32 VALUES loaded for it, which become
// its master weights.
void restore_half_parameters(Sequential& model, Optimizer& optimizer,
                             const std::map<std::string, std::vector<float>>& loaded) {
  for (Parameter* p : model.parameters()) {
    if (!is_half(p->value.dtype())) continue;
    const std::vector<float>& values = loaded.at(p->name);
    p->value.assign(values);
    Tensor& master = optimizer.state()[master_weights_name(p->name)];
    if (master.numel() == p->value.numel()) master.assign(values);
    else master = Tensor::from_values(p->value.shape, values);  // on the host: the first step moves it
  }
}

void append_little_endian(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t read_little_endian(std::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return value;
}

// Cuts the next '\n'-ended line off REST; throws when there is none.
std::string_view take_line(std::string_view& rest, const std::string& file, const char* what) {
  const size_t end = rest.find('\n');
  if (end == std::string_view::npos) throw CheckpointError(fmt::format("{}: truncated in its {}", file, what));
  const std::string_view line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  return line;
}

int64_t non_negative(const nlohmann::json& value, const std::string& file, const std::string& what) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0)
    throw CheckpointError(fmt::format("{}: bad header: {} is {}, not a count", file, what, value.dump()));
  return value.get<int64_t>();
}

// The header's tensor list as (name, count), each count checked against the DATA_BYTES there are.
std::vector<std::pair<std::string, size_t>> tensor_list(const nlohmann::json& header, size_t data_bytes,
                                                        const std::string& file) {
  const auto it = header.find("tensors");
  if (it == header.end() || !it->is_array()) throw CheckpointError(fmt::format("{}: bad header: no tensor list", file));
  std::vector<std::pair<std::string, size_t>> list;
  size_t left = data_bytes;
  for (const auto& t : *it) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("count"))
      throw CheckpointError(fmt::format("{}: bad header: tensor entry {} lacks a name or count", file, list.size()));
    const std::string name = t["name"];
    const auto count = static_cast<uint64_t>(non_negative(t["count"], file, "the count of '" + name + "'"));
    if (count > left / sizeof(float))
      throw CheckpointError(fmt::format("{}: truncated in tensor '{}': it needs {} values, {} bytes are left "
                                        "(a file cut short, or a corrupted header)", file, name, count, left));
    left -= count * sizeof(float);
    list.emplace_back(name, count);
  }
  if (left != 0)
    throw CheckpointError(fmt::format("{}: {} bytes after the last tensor (a corrupted header?)", file, left));
  return list;
}

nlohmann::json parse_header(std::string_view line, const std::string& file) {
  nlohmann::json header = nlohmann::json::parse(line, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    throw CheckpointError(fmt::format("{}: bad header: line 2 is not a JSON object", file));
  return header;
}

std::string read_whole_file(const fs::path& path, const fs::path& latest) {
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path))
    throw CheckpointError(fmt::format("{}: named by {} but missing", path.string(), latest.string()));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw CheckpointError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  return std::move(bytes).str();
}

void load_into(CheckpointContents contents, const std::string& file, Sequential& model, Optimizer& optimizer) {
  std::map<std::string, Tensor*> wanted;
  for (auto& [n, t] : tensors_of(model, optimizer)) wanted[n] = t;
  std::map<std::string, std::vector<float>> loaded(std::make_move_iterator(contents.tensors.begin()),
                                                   std::make_move_iterator(contents.tensors.end()));
  for (auto& [n, t] : wanted) {
    auto it = loaded.find(n);
    if (it == loaded.end()) throw CheckpointError(fmt::format("{}: has no tensor '{}' (another model?)", file, n));
    if (static_cast<int64_t>(it->second.size()) != t->numel())
      throw CheckpointError(fmt::format("{}: tensor '{}' has {} values, the model {}", file, n, it->second.size(),
                                        t->numel()));
    t->assign(it->second);
  }
  restore_half_parameters(model, optimizer, loaded);
  for (auto& [n, values] : loaded)  // optimizer state not created yet: the first step moves it to its device
    if (n.find('/') != std::string::npos && !wanted.count(n))
      optimizer.state()[n] = Tensor::from_values({static_cast<int64_t>(values.size())}, values);
  optimizer.set_steps(contents.at.step);
}

// The epoch in a checkpoint's file name "checkpoint-EPOCH.bin"; nullopt for any other name.
std::optional<int64_t> checkpoint_epoch(const std::string& name) {
  constexpr std::string_view kPrefix = "checkpoint-", kSuffix = ".bin";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix) || name.size() == kPrefix.size() + kSuffix.size())
    return std::nullopt;
  const std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) return std::nullopt;
  return std::stoll(digits);
}

// Checkpoint files of OUTPUT_DIR older than epoch BEFORE (all of them without it), newest first.
std::vector<std::string> checkpoints_before(const std::string& output_dir, std::optional<int64_t> before) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto epoch = checkpoint_epoch(name); epoch && (!before || *epoch < *before)) found.emplace_back(*epoch, name);
  }
  std::ranges::sort(found, std::greater<>());
  std::vector<std::string> names;
  for (auto& [epoch, name] : found) names.push_back(std::move(name));
  return names;
}

}  // namespace

std::string master_weights_name(const std::string& param) { return std::string(kMasterPrefix) + param; }

void save_checkpoint(const std::string& output_dir, const CheckpointPosition& at, Sequential& model,
                     Optimizer& optimizer, std::string file_name, bool update_latest) {
  nlohmann::json header;
  header["epoch"] = at.rounds;
  header["step"] = at.step;
  if (!at.history.is_null()) header["history"] = at.history;
  header["tensors"] = nlohmann::json::array();
  auto tensors = tensors_of(model, optimizer);
  for (auto& [name, t] : tensors) header["tensors"].push_back({{"name", name}, {"count", t->numel()}});
  const std::string name = file_name.empty() ? fmt::format("checkpoint-{}.bin", at.rounds) : file_name;
  std::string out = fmt::format("{}\n{}\n", kMagic, header.dump());
  for (auto& [n, t] : tensors) {
    const std::vector<float> values = t->to_vector();
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  append_little_endian(out, common::crc32(out));
  common::write_file_atomically(fs::path(output_dir) / name, out);
  if (update_latest) common::write_file_atomically(fs::path(output_dir) / "latest", name + "\n");
}

CheckpointContents parse_checkpoint(std::string_view bytes, const std::string& file) {
  std::string_view rest = bytes;
  const std::string_view magic = take_line(rest, file, "first line");
  if (magic.starts_with(kFormatName) && magic != kMagic && magic != kMagicV1)
    throw CheckpointVersionError(fmt::format("{}: format version {}, this build reads versions 1 and 2 (written by a newer "
                                      "paddle-launch?)",
                                      file, magic.substr(kFormatName.size(), 16)));
  if (magic != kMagic && magic != kMagicV1)
    throw CheckpointError(fmt::format("{}: not a paddle-launch checkpoint (first line is not \"{}\")", file, kMagic));
  const bool has_checksum = magic == kMagic;
  const nlohmann::json header = parse_header(take_line(rest, file, "header"), file);
  if (has_checksum && rest.size() < kChecksumBytes)
    throw CheckpointError(fmt::format("{}: truncated before its checksum", file));
  const std::string_view data = rest.substr(0, rest.size() - (has_checksum ? kChecksumBytes : 0));
  CheckpointContents contents;
  contents.at.rounds = non_negative(header.contains("epoch") ? header["epoch"] : nlohmann::json(), file, "epoch");
  contents.at.step = non_negative(header.contains("step") ? header["step"] : nlohmann::json(), file, "step");
  if (header.contains("history")) {
    if (!header["history"].is_array())
      throw CheckpointError(fmt::format("{}: bad header: history is not a list", file));
    contents.at.history = header["history"];
  }
  const auto list = tensor_list(header, data.size(), file);
  if (has_checksum) {
    const uint32_t stored = read_little_endian(rest.substr(data.size()));
    const uint32_t computed = common::crc32(bytes.substr(0, bytes.size() - kChecksumBytes));
    if (stored != computed)
      throw CheckpointError(fmt::format("{}: checksum mismatch (stored {:08x}, computed {:08x}): the file is corrupted",
                                        file, stored, computed));
  }
  size_t offset = 0;
  for (const auto& [name, count] : list) {
    std::vector<float> values(count);
    if (count > 0) std::memcpy(values.data(), data.data() + offset, count * sizeof(float));
    offset += count * sizeof(float);
    contents.tensors.emplace_back(name, std::move(values));
  }
  return contents;
}

std::optional<LoadedCheckpoint> load_latest_checkpoint(const std::string& output_dir, Sequential& model,
                                                       Optimizer& optimizer) {
  const fs::path latest = fs::path(output_dir) / "latest";
  std::ifstream pointer(latest);
  if (!pointer) return std::nullopt;
  std::string named;
  std::getline(pointer, named);
  LoadedCheckpoint loaded;
  std::optional<int64_t> newest_epoch = checkpoint_epoch(named);
  std::vector<std::string> candidates;
  if (named.empty() || named.find('/') != std::string::npos)
    loaded.refused.push_back(
        fmt::format("{}: names no checkpoint file in {} ('{}')", latest.string(), output_dir, named));
  else
    candidates.push_back(named);
  for (const std::string& older : checkpoints_before(output_dir, newest_epoch))
    if (older != named) candidates.push_back(older);
  for (const std::string& name : candidates) {
    const fs::path path = fs::path(output_dir) / name;
    std::optional<CheckpointContents> contents;
    try {
      contents = parse_checkpoint(read_whole_file(path, latest), path.string());
    } catch (const CheckpointVersionError&) {
      throw;
    } catch (const CheckpointError& damaged) {
      loaded.refused.push_back(damaged.what());
      continue;
    }
    loaded.at = contents->at;
    loaded.file = name;
    load_into(std::move(*contents), path.string(), model, optimizer);
    return loaded;
  }
  std::string refused;
  for (const std::string& r : loaded.refused) refused += (refused.empty() ? "" : "; ") + r;
  if (loaded.refused.size() == 1) throw CheckpointError(refused);
  throw CheckpointError(fmt::format("{}: no whole checkpoint left to resume from: {}", output_dir, refused));
}

}  // namespace paddle::runtime
