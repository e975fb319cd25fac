#pragma once
// Base64 (RFC 4648, padded), over Beast's codec: how etcd's JSON gateway carries keys and
// values, and how the launchers' member list travels in a JSON answer.

#include <boost/beast/core/detail/base64.hpp>

#include <string>
#include <string_view>

namespace paddle::common {

inline std::string to_base64(std::string_view bytes) {
  namespace base64 = boost::beast::detail::base64;
  std::string out(base64::encoded_size(bytes.size()), '\0');
  out.resize(base64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

struct Base64Decoded {
  std::string bytes;
  size_t length = 0;  // the text's characters, its padding left out
  size_t read = 0;    // of those, decoded: fewer where a character outside base64 stopped it
};

inline Base64Decoded from_base64(std::string_view text) {
  namespace base64 = boost::beast::detail::base64;
  while (text.ends_with('=')) text.remove_suffix(1);
  Base64Decoded out{std::string(base64::decoded_size(text.size()) + 2, '\0'), text.size(), 0};
  const auto [written, read] = base64::decode(out.bytes.data(), text.data(), text.size());
  out.bytes.resize(written);
  out.read = read;
  return out;
}

}  // namespace paddle::common
