#pragma once
// PsClient: a worker's connections to every parameter server. Dense values are split into the
// servers' blocks and sparse keys routed to their servers (sharding.h); calls to several
// servers are sent to all before any reply is read. Every request has a timeout, and a server
// that closes the connection or stops answering fails the call with its endpoint in the message.

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "ps/parameter_store.h"
#include "ps/protocol.h"

namespace paddle::ps {

// A parameter server was unreachable, failed a request or answered out of protocol.
class PsError : public common::PeerError {
 public:
  using common::PeerError::PeerError;
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{300000};  // PADDLE_PS_CONNECT_TIMEOUT
  std::chrono::milliseconds request_timeout{300000};
  std::chrono::milliseconds report_interval{3000};
  std::FILE* log = stderr;
};

class PsClient : public ParameterStore {
 public:
  // Connects to every server, printing Paddle's "server not ready, wait 3 sec to retry..." and
  // "not ready endpoints:[...]" while some are not up; throws common::TimeoutError naming them at the timeout.
  PsClient(std::vector<std::string> endpoints, ClientOptions options);
  ~PsClient() override;

  size_t servers() const { return connections_.size(); }

  void init_dense(uint32_t table, const std::vector<float>& values) override;
  std::vector<float> pull_dense(uint32_t table, size_t total) override;
  void push_dense(uint32_t table, const std::vector<float>& grads) override;
  std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys, size_t dim) override;
  void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads,
                   size_t dim) override;
  void add_dense(uint32_t table, const std::vector<float>& delta) override;
  void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta,
                  size_t dim) override;
  void barrier() override;
  void save(const std::string& dir);
  void load(const std::string& dir);
  void stop_worker();

  struct Connection;

 private:
  void send(size_t server, Command command, Writer& body);
  std::vector<unsigned char> receive(size_t server, Command command);
  void broadcast(Command command, Writer& body);
  void send_dense(Command command, uint32_t table, const std::vector<float>& values);
  void send_sparse(Command command, uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& values,
                   size_t dim);
  // Reads every server's reply to `command` (so no connection is left holding one), then throws
  // the first error; `each` consumes the successful bodies.
  void receive_all(Command command, const std::function<void(size_t, std::vector<unsigned char>&)>& each);

  std::vector<std::unique_ptr<Connection>> connections_;
  ClientOptions options_;
  uint64_t next_request_ = 1;
};

}  // namespace paddle::ps
