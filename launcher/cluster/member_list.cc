#include "launcher/cluster/member_list.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

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
    throw std::runtime_error(fmt::format("zlib could not deflate a member list of {} bytes", text.size()));
  out.resize(size);
  return out;
}

std::string inflate_bytes(const std::string& packed) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) throw std::runtime_error("zlib: inflateInit failed");
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
    nodes.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      // The ip column is written like any other: its own '@' doubled, never "@:".
      const std::string ip = absolute_from("", ips[i].get_ref<const std::string&>());
      nlohmann::json registration = nlohmann::json::object();
      for (const auto& [field, column] : columns.items())
        registration[field] = map_strings(column[i], [&](const std::string& text) { return absolute_from(ip, text); });
      nodes.push_back(NodeRegistration::from_parsed(registration));
    }
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("the member list at the store is malformed: {}", e.what()));
  }
  return nodes;
}

MemberLists::Ranked MemberLists::ranked(const std::string& value, const std::vector<std::string>& ips_order) {
  std::lock_guard lock(mutex_);
  if (last_ && value == last_value_ && ips_order == last_order_) return last_;
  Ranked ranked = std::make_shared<const std::vector<RankedNode>>(rank_nodes(decode_member_list(value), ips_order));
  last_value_ = value;
  last_order_ = ips_order;
  last_ = ranked;
  return ranked;
}

}  // namespace paddle::launcher
