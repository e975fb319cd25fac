#pragma once
// ParameterServer::Session, one worker connection, and the limits it is held to: the handshake,
// then reads a frame, answers it (ps/server/server_commands.cc), reads the next. Private to the server:
// only ps/server/server.cc and ps/server/server_commands.cc include it.

#include <boost/asio/dispatch.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include <array>
#include <functional>
#include <optional>

#include "ps/server/server.h"

namespace paddle::ps {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// The header of the reply to `request`.
inline Header reply_header(const Header& request, Status status) {
  Header h;
  h.command = static_cast<uint16_t>(request.command | kReplyBit);
  h.request_id = request.request_id;
  h.status = static_cast<uint32_t>(status);
  return h;
}

// One worker connection: the handshake, then reads a frame, answers it, reads the next. A frame
// with a bad magic or an oversized body closes the connection; a malformed body or an unknown
// command gets an error reply. All of a session's handlers run on its strand, its deadline's
// too; a deadline that fires closes the connection, naming the peer and the limit.
class ParameterServer::Session : public std::enable_shared_from_this<Session> {
 public:
  // `peer` has been admitted (ParameterServer::admit); the session releases it when it ends.
  Session(tcp::socket socket, tcp::endpoint peer, ParameterServer& server)
      : socket_(std::move(socket)), peer_(std::move(peer)), server_(server), limits_(server.options_.limits),
        deadline_(socket_.get_executor()) {}
  ~Session() { server_.release(peer_.address()); }

  // The handshake (ps/wire/PROTOCOL.md): a challenge out, the proof of the job token back.
  void greet() {
    const std::string challenge = common::make_challenge();
    std::copy(std::begin(kGreetingMagic), std::end(kGreetingMagic), greeting_.begin());
    std::copy(challenge.begin(), challenge.end(), greeting_.begin() + sizeof kGreetingMagic);
    arm(limits_.frame_timeout, "the handshake", "PADDLE_PS_FRAME_TIMEOUT");
    asio::async_write(socket_, asio::buffer(greeting_), [self = shared_from_this()](auto ec, size_t) {
      if (ec) return;
      asio::async_read(self->socket_, asio::buffer(self->proof_), [self](auto ec, size_t) {
        if (!ec) self->on_proof();
      });
    });
  }

  // Answers the barrier this session's worker waits at: the number of barriers completed, for a
  // worker that said its index, else an empty reply. Safe from any thread: a barrier releases
  // its waiters from the session of the worker that came last.
  void release_barrier(uint64_t completed) {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this(), completed] {
      self->work_.reply.clear();
      if (self->worker) self->work_.reply.u64(completed);
      self->write_reply(Status::kOk, false);
    });
  }
  // Closes the connection of a worker that has since restarted (REJOIN); safe from any thread.
  void abandon() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

  // A synchronous-mode push held until the worker's barrier (server.h).
  struct HeldPush {
    bool sparse = false;
    uint32_t table = 0;
    std::vector<uint64_t> keys;
    std::vector<float> values;
  };
  // Touched by this session's handlers, and by a barrier's release or a REJOIN while the
  // session waits at the barrier (when it handles nothing), both under the server's barrier_mutex_.
  std::vector<HeldPush> held;
  std::optional<uint32_t> worker;  // the index its BARRIER or REJOIN gave; none from an older client

 private:
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    deadline_.cancel();
  }

  // Closes the connection unless what it waits for comes within `timeout` (zero: never).
  void arm(std::chrono::milliseconds timeout, const char* waiting_for, const char* variable) {
    const uint64_t generation = ++deadline_generation_;
    if (timeout.count() == 0) {
      deadline_.cancel();
      return;
    }
    deadline_.expires_after(timeout);
    deadline_.async_wait([self = shared_from_this(), generation, waiting_for, variable, timeout](auto ec) {
      if (ec || generation != self->deadline_generation_ || !self->socket_.is_open()) return;
      self->server_.log_peer("closed", self->peer_.address(), self->peer_.port(),
                                fmt::format("{} did not come within {} s ({})", waiting_for,
                                            std::chrono::duration<double>(timeout).count(), variable));
      self->close();
    });
  }
  void disarm() {
    ++deadline_generation_;
    deadline_.cancel();
  }

  void on_proof() {
    const auto& token = server_.options_.token;
    const std::string_view challenge(greeting_.data() + sizeof kGreetingMagic, common::kChallengeSize);
    if (token && !token->verify(kProofPurpose, challenge, std::string_view(proof_.data(), proof_.size()))) {
      server_.log_peer("refused", peer_.address(), peer_.port(), "no proof of the job token (PADDLE_JOB_TOKEN)");
      verdict_ = kProofRefused;
      asio::async_write(socket_, asio::buffer(&verdict_, 1), [self = shared_from_this()](auto, size_t) {
        self->close();
      });
      return;
    }
    asio::async_write(socket_, asio::buffer(&verdict_, 1), [self = shared_from_this()](auto ec, size_t) {
      if (!ec) self->read_header();
    });
  }

  void read_header() {
    header_read_ = 0;
    arm(limits_.idle_timeout, "a request", "PADDLE_PS_IDLE_TIMEOUT");
    read_header_bytes();
  }

  void read_header_bytes() {
    socket_.async_read_some(asio::buffer(header_bytes_.data() + header_read_, kHeaderBytes - header_read_),
                            [self = shared_from_this()](auto ec, size_t n) {
                              if (ec) return self->close();
                              if (self->header_read_ == 0)  // the frame has begun
                                self->arm(self->limits_.frame_timeout, "the rest of a frame", "PADDLE_PS_FRAME_TIMEOUT");
                              self->header_read_ += n;
                              self->header_read_ < kHeaderBytes ? self->read_header_bytes() : self->on_header();
                            });
  }

  void on_header() {
    header_ = decode_header(header_bytes_.data());
    if (header_.magic != kMagic) return close();  // not our protocol
    if (!server_.acceptable(header_)) {
      server_.log_peer("refused", peer_.address(), peer_.port(),
                       fmt::format("a frame of {} bytes is over {} (PADDLE_PS_MAX_FRAME_BYTES)", header_.body_bytes,
                                   limits_.max_frame_bytes));
      return close();
    }
    body_size_ = 0;
    read_body_chunk();
  }

  // The body buffer is kept from frame to frame; it grows only as a body's bytes arrive, so a
  // header that promises much and sends little costs little.
  void read_body_chunk() {
    constexpr size_t kChunk = 1 << 20;
    if (body_size_ == header_.body_bytes) {
      disarm();
      return on_body();
    }
    if (body_size_ == body_.size())
      body_.resize(std::min<size_t>(header_.body_bytes, std::max(body_.size() * 2, body_size_ + kChunk)));
    const size_t want = std::min<size_t>(body_.size(), header_.body_bytes) - body_size_;
    socket_.async_read_some(asio::buffer(body_.data() + body_size_, want), [self = shared_from_this()](auto ec, size_t n) {
      if (ec) return self->close();
      self->body_size_ += n;
      self->read_body_chunk();
    });
  }

  void on_body() {
    auto answer = server_.answer(header_, std::span(body_.data(), body_size_), shared_from_this(), work_);
    if (!answer.deferred) write_reply(answer.status, answer.then_close);
  }

  // Writes the reply in work_.reply, header and body in one gathered write.
  void write_reply(Status status, bool then_close) {
    const auto& buffers = work_.reply.finish(reply_header(header_, status));
    arm(limits_.frame_timeout, "the taking of a reply", "PADDLE_PS_FRAME_TIMEOUT");
    asio::async_write(socket_, buffers, [self = shared_from_this(), then_close](auto ec, size_t) {
      if (ec || then_close) return self->close();
      self->server_.after_reply(self->work_);
      self->read_header();
    });
  }

  tcp::socket socket_;
  const tcp::endpoint peer_;
  ParameterServer& server_;
  const ConnectionLimits& limits_;
  asio::steady_timer deadline_;
  uint64_t deadline_generation_ = 0;
  std::array<char, kGreetingBytes> greeting_{};
  std::array<char, kProofBytes> proof_{};
  char verdict_ = kProofAccepted;
  std::array<unsigned char, kHeaderBytes> header_bytes_{};
  size_t header_read_ = 0;
  Header header_;
  std::vector<unsigned char> body_;
  size_t body_size_ = 0;
  Workspace work_;
};

}  // namespace paddle::ps
