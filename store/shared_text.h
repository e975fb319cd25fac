#pragma once
// SharedText: an immutable string that copies share, and SharedTextBody, the Beast body that
// sends one. The job's store answers every waiter on a key with the value it holds: thousands
// of launchers waiting for one member list get one buffer between them, where a copy each cost
// the master 4,096 x 79 KB of fresh memory at once (16,384 nodes: 5 GB).

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace paddle::store {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string text) : text_(std::make_shared<const std::string>(std::move(text))) {}  // NOLINT: a value
  SharedText(const char* text) : SharedText(std::string(text)) {}                                 // NOLINT

  const std::string& str() const { return text_ ? *text_ : nothing(); }
  operator std::string_view() const { return str(); }  // NOLINT: reads as the text it is
  size_t size() const { return str().size(); }
  bool empty() const { return str().empty(); }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }

 private:
  static const std::string& nothing() {
    static const std::string none;
    return none;
  }
  std::shared_ptr<const std::string> text_;
};

// A response body of SharedText, for writing only (the store's answers).
struct SharedTextBody {
  using value_type = SharedText;

  static std::uint64_t size(const value_type& body) { return body.size(); }

  class writer {
   public:
    using const_buffers_type = boost::asio::const_buffer;

    template <bool isRequest, class Fields>
    writer(const boost::beast::http::header<isRequest, Fields>&, const value_type& body) : body_(body) {}

    void init(boost::beast::error_code& ec) { ec = {}; }

    boost::optional<std::pair<const_buffers_type, bool>> get(boost::beast::error_code& ec) {
      ec = {};
      if (sent_ || body_.size() == 0) return boost::none;
      sent_ = true;
      return {{const_buffers_type(body_.str().data(), body_.size()), false}};
    }

   private:
    const value_type& body_;
    bool sent_ = false;
  };
};

}  // namespace paddle::store
