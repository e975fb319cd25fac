#pragma once
// PsClient: a worker's connections to every parameter server. The model's TableSpecs give every
// table's size and dim: calls are checked against them before anything is sent
// (parameter_store.h), dense values are split into the servers' blocks and sparse keys routed to
// their servers once per batch (key_router.h). A call's requests to all the servers, several per
// connection for big calls, are in flight together (exchange.h). Every request has a timeout,
// and a server that closes the connection or stops answering fails the call with its endpoint in
// the message.

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/job_token.h"
#include "ps/client/exchange.h"
#include "ps/wire/frame.h"
#include "ps/client/key_router.h"
#include "ps/parameter_store.h"
#include "ps/wire/protocol.h"
#include "ps/server_control.h"
#include "ps/table_spec.h"

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
  std::optional<common::JobToken> token;  // the job's (PADDLE_JOB_TOKEN), proved to every server
  // The worker's index (PADDLE_TRAINER_ID), told with BARRIER, STOP_WORKER and REJOIN so that
  // the servers know each worker across a restart in place; none: an anonymous client.
  std::optional<uint32_t> worker_index;
};

class PsClient : public ParameterStore, public ServerControl {
 public:
  // Connects to every server, printing Paddle's "server not ready, wait 3 sec to retry..." and
  // "not ready endpoints:[...]" while some are not up; throws common::TimeoutError naming them at the timeout.
  // The servers must hold the tables of `tables`, cut for as many servers as `endpoints` names.
  PsClient(std::vector<std::string> endpoints, TableSpecs tables, ClientOptions options);
  ~PsClient() override;

  size_t servers() const { return connections_.size(); }

  void init_dense(uint32_t table, const std::vector<float>& values) override;
  std::vector<float> pull_dense(uint32_t table) override;
  void pull_dense_into(uint32_t table, std::span<float> into) override;
  void push_dense(uint32_t table, const std::vector<float>& grads) override;
  std::vector<float> pull_sparse(uint32_t table, const std::vector<uint64_t>& keys) override;
  void push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads) override;
  void add_dense(uint32_t table, const std::vector<float>& delta) override;
  void add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta) override;
  // One PREFETCH_SPARSE per server holding some of `keys` (its first 16384 of them), for tables
  // on disk only; returns once the servers have answered, before they read.
  void prefetch_sparse(uint32_t table, const std::vector<uint64_t>& keys) override;

  void barrier() override;
  uint64_t barriers_completed() const override { return barriers_completed_; }
  void rejoin() override;
  using ServerControl::save;
  void save(const std::string& dir, SaveMode mode) override;
  std::vector<ShrinkReport> shrink() override;
  std::vector<ServerMemory> memory() override;
  void load(const std::string& dir) override;
  void stop_worker() override;

  struct Connection;

 private:
  // Adds a request to `server` to this call's and returns its frame, emptied, to fill; the reply
  // is `reply_values` floats (`what`, for errors) into `reply_into`, or empty when `what` is null.
  OutFrame& request(size_t server, Command command, const char* what = nullptr, float* reply_into = nullptr,
                    size_t reply_values = 0);
  // Sends the call's requests and reads their replies (exchange.h); throws the first failure.
  void run_requests();
  // Sends every server `command`, its body filled by `body` (empty when none), and returns each
  // server's reply body, in server order.
  std::vector<std::vector<unsigned char>> ask_every_server(Command command,
                                                           const std::function<void(OutFrame&)>& body = {});
  // Every server's u64 reply to BARRIER or REJOIN: the barriers it has completed, which must agree.
  uint64_t barriers_agreed(const std::vector<std::vector<unsigned char>>& replies, const char* call) const;
  // Sends every server the frame `body` fills (nothing when empty) and reads their replies.
  void broadcast(Command command, const std::function<void(OutFrame&)>& body);
  // Check `values` against the table's spec, naming `call`, then send each server its share.
  void send_dense(Command command, std::string_view call, uint32_t table, const std::vector<float>& values);
  void send_sparse(Command command, std::string_view call, uint32_t table, const std::vector<uint64_t>& keys,
                   const std::vector<float>& values);

  TableSpecs tables_;
  std::vector<std::unique_ptr<Connection>> connections_;
  ClientOptions options_;
  uint64_t next_request_ = 1;
  uint64_t barriers_completed_ = 0;
  KeyRouter router_;
  std::vector<Request> requests_;
  std::vector<ServerLink> links_;
};

}  // namespace paddle::ps
