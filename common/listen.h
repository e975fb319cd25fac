#pragma once
// listen_on: the one way a server of this project opens its listening socket (the job's
// key-value store, the job page, a parameter server): IP:PORT (port 0: any free one, which the
// acceptor's local_endpoint() then tells), SO_REUSEADDR so that a restarted job reuses its
// ports at once, and a listen queue of `backlog`.
//
// Errors name the server and the address: "WHAT: 'IP' is not an IP address" (AddressError,
// ConfigError by default) and "WHAT: cannot listen on IP:PORT: REASON" (ListenError, Error by
// default); a server whose address came from a flag (the job page) makes both UsageError.

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <fmt/format.h>

#include <string>

#include "common/error.h"

namespace paddle::common {

template <typename AddressError = ConfigError, typename ListenError = Error>
void listen_on(boost::asio::ip::tcp::acceptor& acceptor, const std::string& ip, int port, int backlog,
               const std::string& what) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(ip, ec);
  if (ec) throw AddressError(fmt::format("{}: '{}' is not an IP address", what, ip));
  const boost::asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(backlog, ec);
  if (ec) throw ListenError(fmt::format("{}: cannot listen on {}:{}: {}", what, ip, port, ec.message()));
}

}  // namespace paddle::common
