#pragma once
// Exchange: one client call's requests to the parameter servers, several in flight on each
// connection. Every request is written and every reply read in one poll loop over all the
// connections, so a server's replies never wait behind the client's later requests (and neither
// side can block the other with full socket buffers), and a server works on one request while the
// next arrive. A server answers a connection's requests in order (PROTOCOL.md); replies are
// matched to requests by their request ids.
//
// A reply is empty, an f32[] of a known length, read straight into its place, or (control
// commands) a body of any length read whole. Every
// reply is read, even after a failure, so that no connection is left holding one; then the first
// failure is thrown as PsError naming the server: an error status (with the server's reason), a
// reply of another length, a reply that matches no request, a closed connection, or no progress
// within the request timeout.

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ps/wire/frame.h"
#include "ps/wire/protocol.h"

namespace paddle::ps {

struct Request {
  size_t server = 0;
  Command command{};
  OutFrame* frame = nullptr;  // the filled request; the exchange sets its header
  bool reply_floats = false;     // the reply is an f32[] of reply_values, read into reply_into; else empty
  float* reply_into = nullptr;
  size_t reply_values = 0;
  const char* what = "values";  // what the values are, for an error message ("dense values")
  std::vector<unsigned char>* reply_body = nullptr;  // else: a reply of any length, read into it whole
};

struct ServerLink {
  boost::asio::ip::tcp::socket* socket;
  std::string endpoint;
};

// Sends `requests` (in order on each connection) and reads their replies; throws as above.
// `next_id` gives the request ids.
void exchange(std::span<ServerLink> links, std::span<const Request> requests, uint64_t& next_id,
              std::chrono::milliseconds timeout);

}  // namespace paddle::ps
