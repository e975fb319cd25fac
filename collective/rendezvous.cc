#include "rendezvous.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdlib>
#include <thread>

#include "communicator.h"

namespace paddle::collective {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

std::string Rendezvous::who_left() {
  // The peer's connection may close a moment before the store hears of it.
  std::optional<std::string> lost;
  for (int attempt = 0; attempt < 10; ++attempt) {
    lost = store_->lost();
    if (!lost || lost->find_first_not_of(std::to_string(config_.rank) + ",") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!lost)
    return fmt::format("rank 0 ({}), which hosts the rendezvous store, left the job", config_.endpoints.at(0));
  std::vector<std::string> names;
  size_t start = 0;
  while (start < lost->size()) {
    size_t comma = lost->find(',', start);
    if (comma == std::string::npos) comma = lost->size();
    int rank = std::atoi(lost->substr(start, comma - start).c_str());
    if (rank != config_.rank && rank >= 0 && rank < static_cast<int>(config_.endpoints.size()))
      names.push_back(fmt::format("{} ({})", rank, config_.endpoints[rank]));
    start = comma + 1;
  }
  if (names.empty()) return "no rank has left the job";
  return fmt::format("rank(s) {} left the job", fmt::join(names, ", "));
}

std::pair<std::string, int> split_endpoint(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  int port = 0;
  if (colon != std::string::npos) {
    const char* begin = endpoint.data() + colon + 1;
    const char* end = endpoint.data() + endpoint.size();
    auto [ptr, ec] = std::from_chars(begin, end, port);
    if (ec == std::errc() && ptr == end && port > 0 && port < 65536) return {endpoint.substr(0, colon), port};
  }
  throw CollectiveError(fmt::format("'{}' is not an ip:port endpoint", endpoint));
}

std::chrono::milliseconds collective_timeout_from(const char* value) {
  if (value == nullptr || *value == '\0') return std::chrono::seconds(300);
  double seconds = 0;
  try {
    size_t used = 0;
    seconds = std::stod(value, &used);
    if (used != std::string(value).size() || seconds <= 0) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw CollectiveError(fmt::format("PADDLE_COLLECTIVE_TIMEOUT='{}' is not a positive number of seconds", value));
  }
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

Rendezvous::Rendezvous(const RendezvousConfig& config) : config_(config) {
  const int world = static_cast<int>(config.endpoints.size());
  auto [host, port] = split_endpoint(config.endpoints.at(0));
  if (config.rank == 0) {
    try {
      server_ = std::make_unique<KvStoreServer>(host, port);
    } catch (const std::exception& e) {
      throw CollectiveError(fmt::format("rank 0 cannot host the rendezvous store: {}", e.what()));
    }
  }
  store_ = std::make_unique<HttpStore>(host, port, config.timeout);

  const auto start = Clock::now();
  const auto deadline = start + config.timeout;
  auto next_report = start + config.report_interval;
  bool registered = false;
  std::vector<int> missing;
  while (true) {
    missing.clear();
    try {
      if (!registered)
        registered = store_->try_put(fmt::format("rendezvous/rank/{}", config.rank), config.endpoints.at(config.rank));
      if (!registered) throw std::runtime_error("store not reachable");
      if (!presence_) presence_ = store_->announce_presence(std::to_string(config.rank));
      for (int r = 0; r < world; ++r)
        if (!store_->try_get(fmt::format("rendezvous/rank/{}", r))) missing.push_back(r);
    } catch (const std::exception&) {
      missing = {0};  // the store itself (rank 0) is not up yet
    }
    if (missing.empty()) return;
    std::vector<std::string> missing_endpoints;
    for (int r : missing) missing_endpoints.push_back(config.endpoints[r]);
    if (Clock::now() > deadline) {
      throw CollectiveError(fmt::format(
          "rendezvous timed out after {} s on rank {}: rank(s) {} ({}) did not arrive; check their logs",
          config.timeout.count() / 1000, config.rank, fmt::join(missing, ","), fmt::join(missing_endpoints, ",")));
    }
    if (Clock::now() >= next_report) {
      fmt::print(config.report_to, "server not ready, wait 3 sec to retry...\nnot ready endpoints:[{}]\n",
                 fmt::join(missing_endpoints, ", "));
      std::fflush(config.report_to);
      next_report += config.report_interval;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace paddle::collective
