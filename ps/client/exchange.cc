#include "ps/client/exchange.h"

#include <fmt/format.h>
#include <poll.h>

#include <array>
#include <bit>
#include <cerrno>

#include "ps/client/client.h"

namespace paddle::ps {
namespace asio = boost::asio;

namespace {

// One connection's part of an exchange: its requests in order, the one being written and the
// one whose reply is being read.
struct Lane {
  std::vector<const Request*> requests;
  std::vector<uint64_t> ids;
  size_t writing = 0, reading = 0;
  std::vector<asio::const_buffer> out;
  size_t out_first = 0;
  std::array<unsigned char, kHeaderBytes> header_bytes{};
  size_t header_have = 0;
  Header header;
  bool in_body = false;
  std::array<unsigned char, sizeof(uint64_t)> count{};
  std::vector<unsigned char> whole;  // a body read whole: an error's reason, or one of the wrong length
  std::vector<asio::mutable_buffer> in;
  size_t in_first = 0;
  std::string failure;  // set: the lane is done

  bool done() const { return !failure.empty() || reading == requests.size(); }
  bool wants_write() const { return failure.empty() && writing < requests.size(); }
};

// Consumes n bytes from the front of a buffer sequence.
template <typename Buffer>
void consume(std::vector<Buffer>& buffers, size_t& first, size_t n) {
  for (; first < buffers.size() && n >= buffers[first].size(); ++first) n -= buffers[first].size();
  if (n > 0) buffers[first] += n;
}

class Exchanger {
 public:
  Exchanger(std::span<ServerLink> links, uint64_t& next_id) : links_(links), lanes_(links.size()), next_id_(next_id) {}

  void add(const Request& r) {
    lanes_[r.server].requests.push_back(&r);
    lanes_[r.server].ids.push_back(next_id_++);
  }

  void run(std::chrono::milliseconds timeout) {
    for (size_t s = 0; s < lanes_.size(); ++s) {
      if (lanes_[s].requests.empty()) continue;
      if (!links_[s].socket->non_blocking()) links_[s].socket->non_blocking(true);
      start_write(s);
    }
    std::vector<pollfd> fds;
    std::vector<size_t> servers;
    for (;;) {
      fds.clear();
      servers.clear();
      for (size_t s = 0; s < lanes_.size(); ++s) {
        if (lanes_[s].done()) continue;
        const short events = static_cast<short>(POLLIN | (lanes_[s].wants_write() ? POLLOUT : 0));
        fds.push_back(pollfd{links_[s].socket->native_handle(), events, 0});
        servers.push_back(s);
      }
      if (fds.empty()) break;
      int n;
      do n = ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
      while (n < 0 && errno == EINTR);
      if (n <= 0) {
        for (size_t s : servers)
          lanes_[s].failure = n == 0 ? fmt::format("parameter server {} did not answer within {} s", links_[s].endpoint,
                                                   timeout.count() / 1000)
                                     : fmt::format("parameter server {}: poll failed", links_[s].endpoint);
        break;
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents & POLLOUT) write(servers[i]);
        if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) read(servers[i]);
      }
    }
    for (size_t s = 0; s < lanes_.size(); ++s)  // in server order, as the replies would be read one by one
      if (!lanes_[s].failure.empty()) throw PsError(lanes_[s].failure);
  }

 private:
  void start_write(size_t s) {
    Lane& lane = lanes_[s];
    if (lane.writing == lane.requests.size()) return;
    const Request& r = *lane.requests[lane.writing];
    Header h;
    h.command = static_cast<uint16_t>(r.command);
    h.request_id = lane.ids[lane.writing];
    lane.out = r.frame->finish(h);
    lane.out_first = 0;
  }

  void write(size_t s) {
    Lane& lane = lanes_[s];
    while (lane.wants_write()) {
      boost::system::error_code ec;
      const size_t n = links_[s].socket->write_some(std::span(lane.out).subspan(lane.out_first), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) return;
      if (ec) {
        lane.failure = fmt::format("parameter server {} is gone (sending: {})", links_[s].endpoint, ec.message());
        return;
      }
      consume(lane.out, lane.out_first, n);
      if (lane.out_first < lane.out.size()) return;
      ++lane.writing;
      start_write(s);
    }
  }

  void read(size_t s) {
    Lane& lane = lanes_[s];
    while (!lane.done()) {
      boost::system::error_code ec;
      size_t n;
      if (lane.in_body)
        n = links_[s].socket->read_some(std::span(lane.in).subspan(lane.in_first), ec);
      else
        n = links_[s].socket->read_some(
            asio::buffer(lane.header_bytes.data() + lane.header_have, kHeaderBytes - lane.header_have), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) return;
      if (ec) {
        lane.failure = lane.in_body || lane.header_have > 0
                           ? fmt::format("parameter server {} is gone mid-reply ({})", links_[s].endpoint, ec.message())
                           : fmt::format("parameter server {} is gone ({}); check its serverlog", links_[s].endpoint,
                                         ec.message());
        return;
      }
      if (!lane.in_body) {
        lane.header_have += n;
        if (lane.header_have == kHeaderBytes) on_header(s);
      } else {
        consume(lane.in, lane.in_first, n);
      }
      if (lane.in_body && lane.in_first == lane.in.size()) on_body(s);
    }
  }

  void on_header(size_t s) {
    Lane& lane = lanes_[s];
    const Request& r = *lane.requests[lane.reading];
    lane.header = decode_header(lane.header_bytes.data());
    const Header& h = lane.header;
    if (h.magic != kMagic || h.request_id != lane.ids[lane.reading] ||
        h.command != (static_cast<uint16_t>(r.command) | kReplyBit)) {
      lane.failure = fmt::format("parameter server {} sent a reply that does not match the request", links_[s].endpoint);
      return;
    }
    lane.in.clear();
    lane.in_first = 0;
    lane.in_body = true;
    const size_t expected = r.reply_floats ? sizeof(uint64_t) + r.reply_values * sizeof(float) : 0;
    const bool ok = h.status == static_cast<uint32_t>(Status::kOk);
    if (ok && r.reply_body != nullptr) {
      r.reply_body->resize(h.body_bytes);
      if (h.body_bytes > 0) lane.in.emplace_back(r.reply_body->data(), r.reply_body->size());
      return;
    }
    if (!ok || h.body_bytes != expected) {
      lane.whole.resize(h.body_bytes);
      if (h.body_bytes > 0) lane.in.emplace_back(lane.whole.data(), lane.whole.size());
      return;
    }
    if (r.reply_floats) {
      lane.in.emplace_back(lane.count.data(), lane.count.size());
      if (r.reply_values > 0) lane.in.emplace_back(r.reply_into, r.reply_values * sizeof(float));
    }
  }

  void on_body(size_t s) {
    Lane& lane = lanes_[s];
    const Request& r = *lane.requests[lane.reading];
    const Header& h = lane.header;
    const std::string& endpoint = links_[s].endpoint;
    lane.in_body = false;
    lane.header_have = 0;
    ++lane.reading;
    std::string failure;
    if (h.status != static_cast<uint32_t>(Status::kOk)) {
      std::string message;
      try {
        Reader reader(lane.whole.data(), lane.whole.size());
        message = reader.str();
      } catch (const ProtocolError&) {
      }
      failure = fmt::format("parameter server {} refused the request (status {}): {}", endpoint, h.status, message);
    } else if (r.reply_body != nullptr) {
    } else if (!r.reply_floats && h.body_bytes != 0) {
      failure = fmt::format("parameter server {} sent {} bytes where an empty reply was due", endpoint, h.body_bytes);
    } else if (r.reply_floats && h.body_bytes != sizeof(uint64_t) + r.reply_values * sizeof(float)) {
      failure = fmt::format("parameter server {} returned {} bytes where {} {} take {} (another model?)", endpoint,
                            h.body_bytes, r.reply_values, r.what, sizeof(uint64_t) + r.reply_values * sizeof(float));
    } else if (r.reply_floats && decode_fixed<uint64_t>(lane.count.data()) != r.reply_values) {
      failure = fmt::format("parameter server {} sent a malformed reply", endpoint);
    } else if constexpr (std::endian::native != std::endian::little) {
      if (r.reply_floats) decode_array(reinterpret_cast<const unsigned char*>(r.reply_into), r.reply_into, r.reply_values);
    }
    // A refused request leaves the connection in step: keep reading the others' replies.
    if (!failure.empty() && first_failure_[s].empty()) first_failure_[s] = failure;
    if (lane.reading == lane.requests.size() && !first_failure_[s].empty()) lane.failure = first_failure_[s];
  }

  std::span<ServerLink> links_;
  std::vector<Lane> lanes_;
  std::vector<std::string> first_failure_ = std::vector<std::string>(lanes_.size());
  uint64_t& next_id_;
};

}  // namespace

void exchange(std::span<ServerLink> links, std::span<const Request> requests, uint64_t& next_id,
              std::chrono::milliseconds timeout) {
  Exchanger exchanger(links, next_id);
  for (const Request& r : requests) exchanger.add(r);
  exchanger.run(timeout);
}

}  // namespace paddle::ps
