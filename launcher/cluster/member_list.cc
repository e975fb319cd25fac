#include "launcher/cluster/member_list.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <mutex>

#include "common/base64.h"
#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr std::string_view kTag = "zcol:";
// A list that inflates past this is not one a judge wrote (1 GiB holds some 4 million nodes).
constexpr size_t kMaxInflated = size_t{1} << 30;

std::string deflate_bytes(const std::string& text) {
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(text.data()),
                static_cast<uLong>(text.size()), Z_DEFAULT_COMPRESSION) != Z_OK)
    throw common::Error(fmt::format("zlib could not deflate a member list of {} bytes", text.size()));
  out.resize(size);
  return out;
}

std::string inflate_bytes(const std::string& packed) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) throw common::Error("zlib: inflateInit failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  stream.avail_in = static_cast<uInt>(packed.size());
  std::string out;
  int result = Z_OK;
  while (result == Z_OK) {
    const size_t done = out.size();
    out.resize(std::max<size_t>(4 * packed.size(), 2 * done + 4096));
    if (out.size() > kMaxInflated) break;
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + done);
    stream.avail_out = static_cast<uInt>(out.size() - done);
    result = inflate(&stream, Z_NO_FLUSH);
    out.resize(out.size() - stream.avail_out);
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END)
    throw common::PeerError(fmt::format("the member list at the store is malformed: its zlib stream {} after {} bytes",
                                        result == Z_OK ? "inflates past 1 GiB" : "is cut short or corrupt", out.size()));
  return out;
}

// A string of node `ip`'s registration as it is written in a column: "@" stands for the node's
// own address before a ':' (its endpoints are mostly its own ip:port, and a column of ports
// deflates to almost nothing where one of addresses does not); a leading '@' of its own is doubled.
std::string relative_to(const std::string& ip, const std::string& text) {
  if (text.starts_with('@')) return "@" + text;
  if (text.size() > ip.size() && text.starts_with(ip) && text[ip.size()] == ':') return "@" + text.substr(ip.size());
  return text;
}

std::string absolute_from(const std::string& ip, const std::string& text) {
  if (!text.starts_with('@')) return text;
  if (text.starts_with("@@")) return text.substr(1);
  return ip + text.substr(1);
}

// Applies `f` to every string of `value`, itself or inside an array.
template <class F>
nlohmann::json map_strings(const nlohmann::json& value, F f) {
  if (value.is_string()) return f(value.get_ref<const std::string&>());
  if (!value.is_array()) return value;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : value) out.push_back(map_strings(item, f));
  return out;
}

// The columns of a decoded list, each looked up once: every node reads the whole list, so its
// decoding is O(nodes) per launcher and a 512-node job's launchers on one machine decode 512
// lists at once. The fields are NodeRegistration::to_json's; a column this version does not
// know is ignored, one it needs and does not find names the node's registration as malformed.
class Columns {
 public:
  Columns(const nlohmann::json& columns, size_t count) : columns_(columns), count_(count) {}

  const nlohmann::json* optional(const char* field) const {
    const auto it = columns_.find(field);
    return it == columns_.end() ? nullptr : &*it;
  }
  const nlohmann::json& required(const char* field) const {
    if (const nlohmann::json* column = optional(field)) return *column;
    throw common::PeerError(fmt::format("a node's registration at the master is malformed: the member list of {} "
                                        "nodes has no column '{}'", count_, field));
  }

 private:
  const nlohmann::json& columns_;
  size_t count_;
};

const std::string& text_of(const nlohmann::json& value) { return value.get_ref<const std::string&>(); }

std::vector<std::string> absolute_list(const std::string& ip, const nlohmann::json& value) {
  std::vector<std::string> out;
  out.reserve(value.size());
  for (const auto& item : value.get_ref<const nlohmann::json::array_t&>()) out.push_back(absolute_from(ip, text_of(item)));
  return out;
}

}  // namespace

std::string encode_member_list(const std::vector<NodeRegistration>& nodes) {
  nlohmann::json columns = nlohmann::json::object();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const nlohmann::json registration = nodes[i].to_json();
    for (const auto& [field, value] : registration.items()) {
      auto& column = columns[field];
      if (column.is_null()) column = nlohmann::json::array();
      column.push_back(map_strings(value, [&](const std::string& text) { return relative_to(nodes[i].ip, text); }));
    }
  }
  const std::string text = nlohmann::json{{"nodes", nodes.size()}, {"columns", std::move(columns)}}.dump();
  return std::string(kTag) + common::to_base64(deflate_bytes(text));
}

std::vector<NodeRegistration> decode_member_list(const std::string& value) {
  if (!value.starts_with(kTag))
    throw common::PeerError(fmt::format("the member list at the store is malformed: it starts '{}', not '{}' (did a "
                                        "paddle-launch of another version write it?)",
                                        value.substr(0, 16), kTag));
  const common::Base64Decoded packed = common::from_base64(std::string_view(value).substr(kTag.size()));
  if (packed.read != packed.length)
    throw common::PeerError(fmt::format("the member list at the store is malformed: not base64 at byte {}", kTag.size() + packed.read));
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(inflate_bytes(packed.bytes));
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("the member list at the store is malformed: {}", e.what()));
  }
  std::vector<NodeRegistration> nodes;
  try {
    const size_t count = list.at("nodes").get<size_t>();
    if (count == 0) return nodes;
    const auto& columns = list.at("columns");
    const auto& ips = columns.at("ip");
    for (const auto& [field, column] : columns.items())
      if (!column.is_array() || column.size() != count)
        throw common::PeerError(fmt::format("the member list at the store is malformed: its column '{}' does not hold "
                                            "{} values", field, count));
    const Columns get(columns, count);
    const nlohmann::json& hostnames = get.required("hostname");
    const nlohmann::json& endpoints = get.required("endpoints");
    const nlohmann::json& devices = get.required("devices");
    const nlohmann::json& max_restarts = get.required("max_restarts");
    const nlohmann::json& ranks = get.required("rank");
    const nlohmann::json* restarts_used = get.optional("restarts_used");
    const nlohmann::json* servers = get.optional("servers");
    const nlohmann::json* ps_store_ports = get.optional("ps_store_port");
    const nlohmann::json* tcp_stores = get.optional("tcp_store");
    const nlohmann::json* job_lists = get.optional("job_lists");
    const nlohmann::json* orders = get.optional("order");
    nodes.resize(count);
    for (size_t i = 0; i < count; ++i) try {
      NodeRegistration& n = nodes[i];
      // The ip column is written like any other: its own '@' doubled, never "@:".
      n.ip = absolute_from("", text_of(ips[i]));
      n.hostname = absolute_from(n.ip, text_of(hostnames[i]));
      n.endpoints = absolute_list(n.ip, endpoints[i]);
      n.devices = absolute_from(n.ip, text_of(devices[i]));
      n.max_restarts = max_restarts[i].get<int>();
      if (!ranks[i].is_null()) n.requested_rank = ranks[i].get<int>();
      if (restarts_used) n.restarts_used = (*restarts_used)[i].get<int>();
      if (servers) n.server_endpoints = absolute_list(n.ip, (*servers)[i]);
      if (ps_store_ports) n.ps_store_port = (*ps_store_ports)[i].get<int>();
      if (tcp_stores) n.tcp_store = absolute_from(n.ip, text_of((*tcp_stores)[i]));
      if (job_lists) n.job_lists = absolute_from(n.ip, text_of((*job_lists)[i]));
      if (orders) n.order = absolute_from(n.ip, text_of((*orders)[i]));
    } catch (const nlohmann::json::exception& e) {
      throw common::PeerError(fmt::format("a node's registration at the master is malformed: node {} of the member "
                                          "list ({}): {}", i, ips[i].dump(), e.what()));
    }
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("the member list at the store is malformed: {}", e.what()));
  }
  return nodes;
}

MemberLists::List MemberLists::list(const std::string& value, const std::vector<std::string>& ips_order) {
  const auto is_last = [&] { return last_.ranked && value == last_value_ && ips_order == last_order_; };
  {
    std::shared_lock lock(mutex_);
    if (is_last()) return last_;
  }
  std::unique_lock lock(mutex_);
  if (is_last()) return last_;  // another reader decoded it meanwhile
  List list;
  list.ranked = std::make_shared<const std::vector<RankedNode>>(rank_nodes(decode_member_list(value), ips_order));
  for (const auto& n : *list.ranked) list.restarts_used = std::max(list.restarts_used, n.node.restarts_used);
  last_value_ = value;
  last_order_ = ips_order;
  last_ = list;
  return list;
}

}  // namespace paddle::launcher
