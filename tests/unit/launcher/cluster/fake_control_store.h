#pragma once
// FakeControlStore: an in-memory ControlStore (store/control_store.h) for the
// cluster's unit tests: keys with revisions, and the liveness a test says. Its waits wait for a
// write as the real stores' do, so that a ClusterLink's watch over it sleeps rather than spins.
//
// Safe to call from several threads through its methods; a test sets the public fields before
// a ClusterLink's thread uses the store, or, single-threaded, at any time (the judge's tests).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "store/control_store.h"

namespace paddle::launcher::testing {

class FakeControlStore : public store::ControlStore {
 public:
  void put(const std::string& key, const std::string& value) override {
    answer();
    std::lock_guard lock(mutex_);
    write(key, value);
  }
  void put_while_alive(const std::string& key, const std::string& value) override { put(key, value); }
  std::optional<std::string> get(const std::string& key) override {
    answer();
    std::lock_guard lock(mutex_);
    ++gets;
    return value_of(key);
  }
  std::string add_if_absent(const std::string& key, const std::string& value) override {
    answer();
    std::lock_guard lock(mutex_);
    ++adds;
    if (!values.count(key)) write(key, value);
    return values[key].value;
  }
  std::vector<Entry> range(const std::string& prefix) override {
    answer();
    if (ranges_unanswered) throw common::PeerError("the fake store has ended");
    std::lock_guard lock(mutex_);
    std::vector<Entry> entries;
    for (const auto& [key, e] : values)
      if (key.starts_with(prefix)) entries.push_back(e);
    return entries;
  }
  void remove_prefix(const std::string& prefix) override {
    std::lock_guard lock(mutex_);
    std::erase_if(values, [&](const auto& kv) { return kv.first.starts_with(prefix); });
  }
  std::optional<std::string> wait_for(const std::string& key, std::chrono::milliseconds wait) override {
    answer();
    std::unique_lock lock(mutex_);
    written_.wait_for(lock, wait, [&] { return stopped_ || values.count(key) > 0; });
    return value_of(key);
  }
  Changes watch(const std::vector<std::string>& prefixes, int64_t after, std::chrono::milliseconds wait) override {
    answer();
    std::unique_lock lock(mutex_);
    written_.wait_for(lock, wait, [&] { return stopped_ || !written_after(prefixes, after).empty(); });
    return {revision, written_after(prefixes, after)};
  }
  void stop_waiting() override {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    written_.notify_all();
  }

  // Writes KEY as another launcher would, whether or not this one can reach the store.
  void put_as_is(const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    write(key, value);
  }

  // Counts IP's launcher gone, with WHY, while the link's threads may be asking.
  void lose(const std::string& ip, const std::string& why) {
    std::lock_guard lock(mutex_);
    lost[ip] = why;
  }

  void heartbeat() override {
    answer();
    if (lease_ended) throw store::LeaseEnded("this node's lease at the fake store ended");
  }
  std::map<std::string, std::string> gone(const std::vector<std::string>& ips) override {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::string> out;
    for (const auto& [ip, why] : lost)
      if (std::find(ips.begin(), ips.end(), ip) != ips.end()) out[ip] = why;
    return out;
  }
  std::vector<std::string> silent(std::chrono::milliseconds) override {
    std::lock_guard lock(mutex_);
    return {quiet.begin(), quiet.end()};
  }
  std::vector<std::string> alive_nodes() override {
    std::lock_guard lock(mutex_);
    return alive;
  }
  bool judges() override { return judging; }
  bool hosted_here() const override { return hosting; }
  std::string describe() const override { return "the fake store"; }

  std::map<std::string, Entry> values;
  int64_t revision = 0;
  std::map<std::string, std::string> lost;  // ip -> why
  std::set<std::string> quiet;              // silent ips
  std::vector<std::string> alive;           // what alive_nodes() says
  int gets = 0;                             // questions asked with get()
  int adds = 0;                             // writes asked with add_if_absent()
  bool judging = true;                      // what judges() says: false plays a node that does not judge
  bool hosting = true;                      // what hosted_here() says
  // While set, every call throws common::PeerError, as a store this launcher cannot reach (or
  // whose answers it cannot hear: a paused launcher); ranges_unanswered: range() alone.
  std::atomic<bool> unreachable = false;
  std::atomic<bool> ranges_unanswered = false;
  // While set, heartbeat() throws LeaseEnded: the store counts this launcher gone for good.
  std::atomic<bool> lease_ended = false;

 private:
  void answer() const {
    if (unreachable) throw common::PeerError("the fake store is unreachable");
  }
  void write(const std::string& key, const std::string& value) {
    values[key] = {key, value, ++revision};
    written_.notify_all();
  }
  std::optional<std::string> value_of(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second.value;
  }
  // The entries under `prefixes` written after revision `after`, in the order they were written.
  std::vector<Entry> written_after(const std::vector<std::string>& prefixes, int64_t after) const {
    std::vector<Entry> entries;
    for (const auto& [key, e] : values)
      for (const auto& p : prefixes)
        if (key.starts_with(p) && e.order > after) {
          entries.push_back(e);
          break;
        }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.order < b.order; });
    return entries;
  }

  std::mutex mutex_;
  std::condition_variable written_;
  bool stopped_ = false;  // this launcher is leaving: no wait waits
};

}  // namespace paddle::launcher::testing
