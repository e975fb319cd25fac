// ClusterLink itself: the settings' names, the store every step uses (the master's HTTP store
// or etcd), the watch's thread, and the keys an earlier run left. The steps: cluster_link.h.
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "launcher/cluster/cluster_link_detail.h"
#include "store/etcd_store.h"
#include "store/master_store.h"
#include "launcher/cluster/open_file_limit.h"

namespace paddle::launcher {
namespace {

std::unique_ptr<store::ControlStore> open_store(const ClusterSettings& s) {
  if (!s.etcd.empty()) {
    try {
      return std::make_unique<store::EtcdStore>(s.etcd, s.job_id, s.node_ip, s.dead_after);
    } catch (const common::PeerError& e) {
      throw common::PeerError(fmt::format("--master=etcd://: {}", e.what()));
    }
  }
  if (s.host_master) ensure_master_open_files(s.nnodes);
  try {
    return std::make_unique<store::MasterStore>(s.master_ip, s.master_port, s.host_master, s.job_id, s.node_ip, s.dead_after, s.token);
  } catch (const common::PeerError&) {
    throw;
  } catch (const std::exception& e) {
    throw common::UsageError(fmt::format("--master: this node ({}) hosts the master, but {}", s.node_ip, e.what()));
  }
}

}  // namespace

std::string ClusterLink::generation_key(int generation, const std::string& suffix) const {
  return cluster_link_detail::generation_key(settings_.job_id, generation, suffix);
}

std::string ClusterSettings::master_url() const {
  if (etcd.empty()) return fmt::format("{}:{}", master_ip, master_port);
  std::vector<std::string> names;
  for (const auto& e : etcd) names.push_back(e.to_string());
  return fmt::format("etcd://{}", fmt::join(names, ","));
}

std::string ClusterSettings::master_name() const {
  return etcd.empty() ? "the master " + master_url() : "etcd " + master_url().substr(std::string("etcd://").size());
}

ClusterLink::ClusterLink(ClusterSettings settings, LaunchLog& log, std::shared_ptr<MemberLists> member_lists)
    : ClusterLink(settings, log, open_store(settings), std::move(member_lists)) {}

ClusterLink::ClusterLink(ClusterSettings settings, LaunchLog& log, std::unique_ptr<store::ControlStore> store,
                         std::shared_ptr<MemberLists> member_lists)
    : settings_(std::move(settings)),
      log_(log),
      store_(std::move(store)),
      member_lists_(std::move(member_lists)),
      judge_(*store_, {settings_.job_id, settings_.node_ip, settings_.nnodes, settings_.elastic(),
                       settings_.heartbeat_interval, settings_.dead_after, settings_.settle_time}) {
  if (store_->hosted_here()) {
    log_.info(fmt::format("hosting the job's master store on {}:{} (job {})", settings_.master_ip, settings_.master_port,
                          settings_.job_id));
    if (auto warning = listen_queue_warning(settings_.nnodes)) log_.warning(*warning);
  }
  if (settings_.stop_signals != nullptr)
    on_stop_signal_.emplace(settings_.stop_signals->stop_token(), std::function<void()>([this] { store_->stop_waiting(); }));
  if (!settings_.etcd.empty()) clear_stale_state();
  thread_.start("cluster-watch", [this](std::stop_token stop) { watch(stop); }, [this] {
    {
      std::lock_guard lock(mutex_);
      wake_.notify_all();
    }
    store_->stop_waiting();  // the watch may be waiting in the store
  });
}

ClusterLink::~ClusterLink() { thread_.stop(); }

void ClusterLink::throw_if_stopped(const std::function<std::string()>& waiting_for) const {
  if (stop_requested()) settings_.stop_signals->throw_if_stopped(waiting_for());
}

std::shared_ptr<const std::vector<RankedNode>> ClusterLink::members_now() const {
  std::lock_guard lock(mutex_);
  return members_;
}

bool ClusterLink::stop_requested() const {
  return settings_.stop_signals != nullptr && settings_.stop_signals->first() != 0;
}

void ClusterLink::clear_stale_state() {
  // Keys of this job id that no live launcher made are an earlier run's, which ended without
  // cleaning up (its launchers killed, or cut off when the job stopped): they would fail or
  // confuse this run. With no live launcher but this one, every key is such.
  const std::vector<std::string> alive = store_->alive_nodes();
  const bool alone =
      std::none_of(alive.begin(), alive.end(), [&](const std::string& ip) { return ip != settings_.node_ip; });
  const std::vector<store::ControlStore::Entry> entries = store_->range(key("g"));
  if (entries.empty()) return;
  if (alone) {
    store_->remove_prefix(key("g"));
  } else {
    // Others are alive: fresh launchers of this run, or the members of a live one. A generation
    // is live while a member's own registration (leased: it ends with its launcher) is there as
    // the member list holds it; a fresh launcher at a member's address registers anew, with new
    // endpoints. Registrations are left alone: a fresh launcher's is this run's, an old one expires.
    std::map<std::string, std::string> values;
    for (const auto& e : entries) values[e.key] = e.value;
    bool stale = false;
    for (const auto& e : entries) {
      constexpr std::string_view kMembers = "members";
      if (!e.key.ends_with(kMembers)) continue;
      const std::string generation_prefix = e.key.substr(0, e.key.size() - kMembers.size());
      try {
        for (const NodeRegistration& member : decode_member_list(e.value)) {
          auto it = values.find(generation_prefix + "node." + member.ip);
          if (it != values.end() && NodeRegistration::from_json(it->second).to_json() == member.to_json()) return;
        }
      } catch (const std::exception&) {  // not a member list this build reads: nobody's now
      }
      stale = true;
    }
    if (!stale) return;  // registrations only: this run meeting now
    for (const auto& e : entries)
      if (e.key.find(".node.") == std::string::npos) store_->remove_prefix(e.key);
  }
  store_->remove_prefix(key("generation"));
  log_.info(fmt::format("{}: removed the keys an earlier run of job {} left (no launcher of it is alive)",
                        store_->describe(), settings_.job_id));
}

}  // namespace paddle::launcher
