#include "launcher/cluster/member_list.h"

#include <fmt/format.h>
#include <zlib.h>

#include "common/base64.h"
#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr std::string_view kTag = "zlib:";
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

}  // namespace

std::string encode_member_list(const std::vector<NodeRegistration>& nodes) {
  std::string lines;
  for (const auto& n : nodes) {
    if (!lines.empty()) lines += '\n';
    lines += n.to_json().dump();
  }
  return std::string(kTag) + common::to_base64(deflate_bytes(lines));
}

std::vector<NodeRegistration> decode_member_list(const std::string& value) {
  if (!value.starts_with(kTag))
    throw common::PeerError(fmt::format("the member list at the store is malformed: it starts '{}', not '{}'",
                                        value.substr(0, 16), kTag));
  const common::Base64Decoded packed = common::from_base64(std::string_view(value).substr(kTag.size()));
  if (packed.read != packed.length)
    throw common::PeerError(fmt::format("the member list at the store is malformed: not base64 at byte {}", kTag.size() + packed.read));
  const std::string text = inflate_bytes(packed.bytes);
  std::vector<NodeRegistration> nodes;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) nodes.push_back(NodeRegistration::from_json(text.substr(start, end - start)));
    start = end + 1;
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
