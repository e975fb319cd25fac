#include "ps/server.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include <array>
#include <functional>
#include <thread>

#include "ps/checkpoint.h"

namespace paddle::ps {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

std::vector<unsigned char> reply_frame(const Header& request, Status status, const std::vector<unsigned char>& body) {
  Header h;
  h.command = static_cast<uint16_t>(request.command | kReplyBit);
  h.request_id = request.request_id;
  h.status = static_cast<uint32_t>(status);
  h.body_bytes = static_cast<uint32_t>(body.size());
  std::vector<unsigned char> frame(kHeaderBytes);
  encode_header(h, frame.data());
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

std::vector<unsigned char> message_body(const std::string& message) {
  Writer w;
  w.str(message);
  return std::move(w.bytes());
}

}  // namespace

// One worker connection: reads a frame, answers it, reads the next. A frame with a bad magic or
// an oversized body closes the connection; a malformed body or an unknown command gets an
// error reply.
class ParameterServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ParameterServer& server) : socket_(std::move(socket)), server_(server) {}

  // The handshake (PROTOCOL.md): a challenge out, the proof of the job token back.
  void greet() {
    const std::string challenge = common::make_challenge();
    std::copy(std::begin(kGreetingMagic), std::end(kGreetingMagic), greeting_.begin());
    std::copy(challenge.begin(), challenge.end(), greeting_.begin() + sizeof kGreetingMagic);
    asio::async_write(socket_, asio::buffer(greeting_), [self = shared_from_this()](auto ec, size_t) {
      if (ec) return;
      asio::async_read(self->socket_, asio::buffer(self->proof_), [self](auto ec, size_t) {
        if (!ec) self->on_proof();
      });
    });
  }

  void read_header() {
    asio::async_read(socket_, asio::buffer(header_bytes_), [self = shared_from_this()](auto ec, size_t) {
      if (!ec) self->on_header();
    });
  }

  void reply(Status status, std::vector<unsigned char> body, bool then_close = false) {
    out_ = reply_frame(header_, status, body);
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this(), then_close](auto ec, size_t) {
      if (ec || then_close) {
        boost::system::error_code ignored;
        self->socket_.close(ignored);
        return;
      }
      self->read_header();
    });
  }

 private:
  void on_proof() {
    const auto& token = server_.options_.token;
    const std::string_view challenge(greeting_.data() + sizeof kGreetingMagic, common::kChallengeSize);
    if (token && !token->verify(kProofPurpose, challenge, std::string_view(proof_.data(), proof_.size()))) {
      boost::system::error_code ec;
      const auto peer = socket_.remote_endpoint(ec);
      fmt::print(server_.options_.log, "parameter server: refused {}:{}: {}\n", ec ? "?" : peer.address().to_string(),
                 ec ? 0 : peer.port(), "no proof of the job token (PADDLE_JOB_TOKEN)");
      std::fflush(server_.options_.log);
      verdict_ = kProofRefused;
      asio::async_write(socket_, asio::buffer(&verdict_, 1), [self = shared_from_this()](auto, size_t) {
        boost::system::error_code ignored;
        self->socket_.close(ignored);
      });
      return;
    }
    asio::async_write(socket_, asio::buffer(&verdict_, 1), [self = shared_from_this()](auto ec, size_t) {
      if (!ec) self->read_header();
    });
  }

  void on_header() {
    header_ = decode_header(header_bytes_.data());
    if (!server_.acceptable(header_)) {
      boost::system::error_code ignored;
      socket_.close(ignored);  // not our protocol, or a frame too large to accept: drop it
      return;
    }
    body_.resize(header_.body_bytes);
    asio::async_read(socket_, asio::buffer(body_), [self = shared_from_this()](auto ec, size_t) {
      if (!ec) self->on_body();
    });
  }

  void on_body() {
    auto answer = server_.answer(header_, body_, shared_from_this());
    if (!answer.deferred) reply(answer.status, std::move(answer.body), answer.then_close);
  }

  tcp::socket socket_;
  ParameterServer& server_;
  std::array<char, kGreetingBytes> greeting_{};
  std::array<char, kProofBytes> proof_{};
  char verdict_ = kProofAccepted;
  std::array<unsigned char, kHeaderBytes> header_bytes_{};
  Header header_;
  std::vector<unsigned char> body_;
  std::vector<unsigned char> out_;
};

ParameterServer::ParameterServer(ServerOptions options, ServerTables tables)
    : options_(std::move(options)), tables_(std::move(tables)), acceptor_(io_) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint(asio::ip::make_address(options_.ip, ec), static_cast<unsigned short>(options_.port));
  if (ec) throw std::runtime_error(fmt::format("parameter server: '{}' is not an IP address", options_.ip));
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(fmt::format("parameter server cannot listen on {}:{}: {}", options_.ip, options_.port,
                                         ec.message()));
  port_ = acceptor_.local_endpoint().port();
}

ParameterServer::~ParameterServer() { stop(); }

void ParameterServer::run() {
  std::function<void()> accept = [&] {
    acceptor_.async_accept([&](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;
      socket.set_option(tcp::no_delay(true));
      std::make_shared<Session>(std::move(socket), *this)->greet();
      accept();
    });
  };
  accept();
  fmt::print(options_.log, "Server listening on {}:{}\n", options_.ip, port_);
  if (!options_.token)
    fmt::print(options_.log, "parameter server on {}:{}: no PADDLE_JOB_TOKEN, so any peer that reaches it is served "
               "(PADDLE_REQUIRE_TOKEN=1 refuses to run so)\n", options_.ip, port_);
  std::fflush(options_.log);
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.threads; ++i) threads.emplace_back([&] { io_.run(); });
  io_.run();
  for (auto& t : threads) t.join();
}

void ParameterServer::stop() { io_.stop(); }

bool ParameterServer::acceptable(const Header& header) const {
  return header.magic == kMagic && header.body_bytes <= options_.max_body;
}

ParameterServer::Answer ParameterServer::answer(const Header& header, const std::vector<unsigned char>& body,
                                                const std::shared_ptr<Session>& session) {
  auto error = [](Status status, const std::string& message, bool then_close = false) {
    return Answer{false, status, message_body(message), then_close};
  };
  if (header.version != kVersion)
    return error(Status::kBadVersion, fmt::format("protocol version {} is not {}", header.version, kVersion), true);
  Reader reader(body.data(), body.size());
  Writer out;
  try {
    if (!handle(session, static_cast<Command>(header.command), reader, out)) {
      Answer later;
      later.deferred = true;
      return later;
    }
  } catch (const ProtocolError& e) {
    return error(Status::kBadRequest, e.what());
  } catch (const std::invalid_argument& e) {
    return error(header.command >= 1 && header.command <= 12 ? Status::kBadRequest : Status::kUnknownCommand, e.what());
  } catch (const std::exception& e) {
    return error(Status::kServerError, e.what());
  }
  return Answer{false, Status::kOk, std::move(out.bytes()), false};
}

std::vector<unsigned char> ParameterServer::answer_frame(std::span<const unsigned char> frame) {
  if (frame.size() < kHeaderBytes) return {};
  const Header header = decode_header(frame.data());
  if (!acceptable(header) || frame.size() - kHeaderBytes != header.body_bytes) return {};
  const std::vector<unsigned char> body(frame.begin() + kHeaderBytes, frame.end());
  auto answer = this->answer(header, body, nullptr);
  if (answer.deferred) return {};
  return reply_frame(header, answer.status, answer.body);
}

bool ParameterServer::handle(const std::shared_ptr<Session>& session, Command command, Reader& body, Writer& reply) {
  auto dense = [&](uint32_t id) -> DenseTable& {
    if (id >= tables_.dense.size()) throw std::invalid_argument(fmt::format("no dense table {}", id));
    return *tables_.dense[id];
  };
  auto sparse = [&](uint32_t id) -> SparseTable& {
    if (id >= tables_.sparse.size()) throw std::invalid_argument(fmt::format("no sparse table {}", id));
    return *tables_.sparse[id];
  };
  switch (command) {
    case Command::kPing:
      body.expect_end();
      reply.u32(static_cast<uint32_t>(options_.server_index));
      return true;
    case Command::kInitDense: {
      auto& t = dense(body.u32());
      auto values = body.f32s();
      body.expect_end();
      t.set(values);
      return true;
    }
    case Command::kPullDense: {
      auto& t = dense(body.u32());
      body.expect_end();
      auto v = t.pull();
      reply.f32s(v.data(), v.size());
      return true;
    }
    case Command::kPushDense: {
      auto& t = dense(body.u32());
      auto grads = body.f32s();
      body.expect_end();
      options_.sync ? t.accumulate(grads) : t.push(grads);
      return true;
    }
    case Command::kAddDense: {
      auto& t = dense(body.u32());
      auto delta = body.f32s();
      body.expect_end();
      t.add(delta);
      return true;
    }
    case Command::kAddSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s();
      auto delta = body.f32s();
      body.expect_end();
      t.add(keys, delta);
      return true;
    }
    case Command::kPullSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s();
      body.expect_end();
      auto v = t.pull(keys);
      reply.f32s(v.data(), v.size());
      return true;
    }
    case Command::kPushSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s();
      auto grads = body.f32s();
      body.expect_end();
      options_.sync ? t.accumulate(keys, grads) : t.push(keys, grads);
      return true;
    }
    case Command::kBarrier: {
      body.expect_end();
      std::vector<std::shared_ptr<Session>> release;
      {
        std::lock_guard lock(barrier_mutex_);
        barrier_waiters_.push_back(session);
        if (static_cast<int>(barrier_waiters_.size()) < options_.workers) return false;
        for (auto& t : tables_.dense) t->apply_pending(options_.workers);
        for (auto& t : tables_.sparse) t->apply_pending(options_.workers);
        release.swap(barrier_waiters_);
      }
      for (auto& waiter : release)
        if (waiter && waiter != session) waiter->reply(Status::kOk, {});  // null: answer_frame's
      return true;
    }
    case Command::kSave: {
      auto dir = body.str();
      body.expect_end();
      save(dir);
      return true;
    }
    case Command::kLoad: {
      auto dir = body.str();
      body.expect_end();
      load(dir);
      return true;
    }
    case Command::kStopWorker: {
      body.expect_end();
      std::lock_guard lock(barrier_mutex_);
      if (++stopped_workers_ >= options_.workers) {
        // Let this reply go out, then end run().
        asio::post(io_, [this] {
          asio::post(io_, [this] { io_.stop(); });
        });
      }
      return true;
    }
  }
  throw std::invalid_argument(fmt::format("unknown command {}", static_cast<unsigned>(command)));
}

void ParameterServer::save(const std::string& dir) {
  save_checkpoint(dir, tables_, options_.server_index, options_.server_count);
}

void ParameterServer::load(const std::string& dir) {
  load_checkpoint(dir, tables_, options_.server_index, options_.server_count);
}

}  // namespace paddle::ps
