#include "launcher/plan/heter_stages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"
#include "common/parse.h"
#include "launcher/plan/plan_support.h"

namespace paddle::launcher {
namespace {

constexpr const char* kDeviceTypes[] = {"cpu", "gpu", "xpu"};  // what Paddle's role maker accepts

// `text` split at ';' into one item per stage, each trimmed; an empty stage is an error.
std::vector<std::string> split_stages(const std::string& text, std::string_view flag, std::string_view example) {
  std::vector<std::string> stages;
  size_t start = 0;
  while (true) {
    const size_t semicolon = text.find(';', start);
    const std::string_view item = common::trim(std::string_view(text).substr(
        start, semicolon == std::string::npos ? std::string::npos : semicolon - start));
    if (item.empty())
      throw common::UsageError(fmt::format("{}={}: stage {} is empty; give one item per stage, ';' between stages "
                                           "(for example {}={})",
                                           flag, text, stages.size() + 2, flag, example));
    stages.emplace_back(item);
    if (semicolon == std::string::npos) return stages;
    start = semicolon + 1;
  }
}

std::vector<int> stage_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& item : split_stages(text, "--heter_worker_num", "1;2"))
    counts.push_back(static_cast<int>(common::parse_int<common::UsageError>(
        item, fmt::format("--heter_worker_num={}: stage {}", text, counts.size() + 2), 1, 4096)));
  return counts;
}

std::vector<std::string> stage_devices(const LaunchOptions& o, size_t stage_count) {
  const std::string flag = *heter_flag_given(o);
  if (!o.heter_devices)
    throw common::UsageError(fmt::format("{}: a ps-heter job needs --heter_devices, each stage's device type (cpu, gpu "
                                         "or xpu, ';' between stages; for example --heter_devices=gpu)",
                                         flag));
  std::vector<std::string> devices = split_stages(*o.heter_devices, "--heter_devices", "cpu;gpu");
  for (const std::string& device : devices)
    if (std::ranges::find(kDeviceTypes, device) == std::end(kDeviceTypes))
      throw common::UsageError(fmt::format("--heter_devices={}: '{}' is not a device type; each stage's is cpu, gpu "
                                           "or xpu",
                                           *o.heter_devices, device));
  if (devices.size() != stage_count)
    throw common::UsageError(fmt::format("--heter_devices={} gives {} stage(s), but {} gives {}; give one device type "
                                         "per heter stage",
                                         *o.heter_devices, devices.size(),
                                         o.heter_workers ? "--heter_workers" : "--heter_worker_num", stage_count));
  return devices;
}

// The stages of --heter_workers, checked against --heter_worker_num when both are given.
std::vector<std::vector<Endpoint>> listed_stages(const LaunchOptions& o) {
  std::vector<std::vector<Endpoint>> stages;
  for (const std::string& stage : split_stages(*o.heter_workers, "--heter_workers", "10.0.0.1:6172;10.0.0.2:6173"))
    stages.push_back(parse_endpoint_list(stage, "--heter_workers", false));
  if (!o.heter_worker_num) return stages;
  const std::vector<int> counts = stage_counts(*o.heter_worker_num);
  if (counts.size() != stages.size())
    throw common::UsageError(fmt::format("--heter_worker_num={} gives {} stage(s), but --heter_workers gives {}",
                                         *o.heter_worker_num, counts.size(), stages.size()));
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != static_cast<int>(stages[i].size()))
      throw common::UsageError(fmt::format("--heter_worker_num={} disagrees with --heter_workers: stage {} has {} heter "
                                           "worker(s) in one and {} in the other",
                                           *o.heter_worker_num, i + 2, counts[i], stages[i].size()));
  return stages;
}

std::string endpoint_list(const std::vector<Endpoint>& endpoints) {
  std::vector<std::string> items;
  for (const Endpoint& e : endpoints) items.push_back(e.str());
  return join(items);
}

}  // namespace

std::optional<std::string> heter_flag_given(const LaunchOptions& o) {
  if (o.heter_worker_num) return "--heter_worker_num";
  if (o.heter_workers) return "--heter_workers";
  if (o.heter_devices) return "--heter_devices";
  return std::nullopt;
}

bool wants_heter(const LaunchOptions& o) {
  const std::optional<std::string> flag = heter_flag_given(o);
  if (flag && o.run_mode == "ps")
    throw common::UsageError(fmt::format("--run_mode=ps conflicts with {}, a ps-heter flag; use --run_mode=ps-heter or "
                                         "drop --run_mode",
                                         *flag));
  return o.run_mode == "ps-heter" || (o.run_mode.empty() && flag);
}

int HeterStages::count() const {
  int n = 0;
  for (const HeterStage& s : stages) n += static_cast<int>(s.endpoints.size());
  return n;
}

std::vector<Endpoint> HeterStages::endpoints() const {
  std::vector<Endpoint> all;
  for (const HeterStage& s : stages) all.insert(all.end(), s.endpoints.begin(), s.endpoints.end());
  return all;
}

HeterStages plan_heter_stages(const LaunchOptions& o, int server_count, int worker_count, std::optional<int> start,
                              PortSource& ports) {
  HeterStages heter;
  if (!wants_heter(o)) return heter;
  if (!o.heter_worker_num && !o.heter_workers)
    throw common::UsageError(fmt::format("{}: a ps-heter job needs its heter workers: --heter_worker_num (a count per "
                                         "stage, on 127.0.0.1) or --heter_workers (ip:port lists per stage)",
                                         o.run_mode == "ps-heter" ? "--run_mode=ps-heter" : *heter_flag_given(o)));
  std::vector<std::vector<Endpoint>> listed;
  std::vector<int> counts;
  if (o.heter_workers) {
    listed = listed_stages(o);
    for (const auto& stage : listed) counts.push_back(static_cast<int>(stage.size()));
  } else {
    counts = stage_counts(*o.heter_worker_num);
  }
  const std::vector<std::string> devices = stage_devices(o, counts.size());
  int before = server_count + worker_count;  // the stage's offset from the start port
  for (size_t i = 0; i < counts.size(); ++i) {
    HeterStage stage{static_cast<int>(i) + 2, devices[i], {}};
    if (o.heter_workers) {
      stage.endpoints = listed[i];
      for (size_t j = 0; j < stage.endpoints.size(); ++j)
        if (!stage.endpoints[j].port)
          stage.endpoints[j].port = start.value_or(kDefaultPsPort) + before + static_cast<int>(j);
    } else {
      for (int port : allocate_ports(start, before, counts[i], ports)) stage.endpoints.push_back({"127.0.0.1", port});
    }
    before += counts[i];
    heter.stages.push_back(std::move(stage));
  }
  const std::vector<Endpoint> all = heter.endpoints();
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (all[i] == all[j])
        throw common::UsageError(fmt::format("--heter_workers: endpoint {} is listed twice", all[i].str()));
  return heter;
}

StageVariables stage_variables(const HeterStages& heter, int stage, int worker_count, const std::string& worker_list) {
  const int stage_num = static_cast<int>(heter.stages.size()) + 1;
  // Stage s's endpoints, s counted from 1 (the workers); "" past the last.
  const auto stage_list = [&](int s) {
    if (s == 1) return worker_list;
    if (s < 1 || s > stage_num) return std::string();
    return endpoint_list(heter.stages[static_cast<size_t>(s - 2)].endpoints);
  };
  std::vector<int> per_stage{worker_count};
  for (const HeterStage& s : heter.stages) per_stage.push_back(static_cast<int>(s.endpoints.size()));
  StageVariables v;
  v.previous = stage == 1 ? "" : stage_list(stage - 1);
  v.next = stage_list(stage + 1);
  v.all = endpoint_list(heter.endpoints());
  v.device = stage == 1 ? "cpu" : heter.stages.at(static_cast<size_t>(stage - 2)).device;
  v.stage_id = std::to_string(stage);
  v.stage_num = std::to_string(stage_num);
  v.stage_trainers = fmt::format("[{}]", fmt::join(per_stage, ", "));
  return v;
}

}  // namespace paddle::launcher
