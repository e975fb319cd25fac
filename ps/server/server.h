#pragma once
// ParameterServer: serves one server's share of the tables over the protocol of ps/wire/PROTOCOL.md,
// with Boost.Asio. It logs "Server listening on IP:PORT" once it accepts connections and returns
// from run() when every worker has sent STOP_WORKER.
//
// In synchronous mode a connection's pushes are held until its worker reaches the BARRIER of the
// step; once every worker has, they are summed in the order of the workers' indexes (so a run's
// tables do not depend on who came first), the average is applied and all the waiting workers
// get their replies. A worker that died during its step left nothing in the tables: its
// connection's held pushes go with it, and a REJOIN from its restarted self takes it off the
// barrier, so that it can do the step again. Otherwise pushes are applied as they arrive.
//
// A connection's requests are read and answered one at a time, in order, so a client may send
// several before it reads the replies (ps/wire/PROTOCOL.md); each connection keeps its buffers from
// request to request, and a reply goes out as one gathered write (ps/wire/frame.h). The shards of a
// big sparse request are spread over the cores (ServerOptions::sparse_helpers).
//
// Each connection first proves the job's token (ps/wire/PROTOCOL.md) and is then held to the
// ConnectionLimits of its options: a peer over one is closed or refused, and named in the log.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/job_token.h"
#include "ps/server/connection_limits.h"
#include "ps/wire/frame.h"
#include "ps/table/helper_pool.h"
#include "ps/wire/protocol.h"
#include "ps/table/save_mode.h"
#include "ps/table/table_reports.h"
#include "ps/table/tables.h"

namespace paddle::ps {

struct ServerOptions {
  std::optional<common::JobToken> token;  // the job's (PADDLE_JOB_TOKEN): every connection proves it
  std::string ip = "127.0.0.1";
  int port = 0;  // 0: any free port (tests)
  int server_index = 0;
  int server_count = 1;
  int workers = 1;
  bool sync = true;
  ConnectionLimits limits;
  int threads = 2;
  // Threads that help with a big sparse batch's shards (ps/table/helper_pool.h); -1: one fewer than the
  // machine's cores, at most 7.
  int sparse_helpers = -1;
  std::FILE* log = stdout;
  // Told the tables' memory whenever the log is (after every save and shrink), on the thread
  // that served the request: a training program's metrics log, for the job page.
  std::function<void(const ServerMemory&)> on_memory;
};

class ParameterServer {
 public:
  // Binds at once; throws std::runtime_error naming the endpoint when it can't.
  ParameterServer(ServerOptions options, ServerTables tables);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  int port() const { return port_; }
  // Serves until every worker has stopped (or stop() is called). A sparse table's disk tier failing
  // (DiskTierError: a full disk, say) ends the serving too, once the request's error reply is out:
  // run() then throws it, and the last checkpoint saved is the one to restart from.
  void run();
  void stop();
  // This server's tables from the checkpoint SAVE wrote in `dir` (ps/table/checkpoint.h), logged
  // with its time and the tables' memory after; throws std::runtime_error naming the file for a
  // missing, truncated or mismatched one.
  void load(const std::string& dir);
  // This server's tables' memory, as STATS answers it; safe while run() serves.
  ServerMemory memory();

  // The reply frame to one whole request frame (header and body), as a connection answers it
  // after the handshake, without a socket (tests, tests/fuzz). Empty when a connection would be
  // dropped instead (a bad magic, a body over limits.max_frame_bytes, a frame whose length disagrees with its
  // header) or the reply deferred (a barrier still waiting for workers).
  std::vector<unsigned char> answer_frame(std::span<const unsigned char> frame);

  class Session;

 private:
  friend class Session;
  void accept();
  // Counts a new connection from `peer` against the limits; false (and a line in the log) when
  // it must be refused.
  bool admit(const boost::asio::ip::address& peer, unsigned short port);
  void release(const boost::asio::ip::address& peer);
  // Prints that a peer was refused or closed (`verb`) and why: the first time for each peer and
  // limit (the variable `why` ends with, in parentheses), then every 1000th, so that a flood of
  // connections cannot flood the log.
  void log_peer(const char* verb, const boost::asio::ip::address& peer, unsigned short port, const std::string& why);
  // What a connection reuses from request to request: the reply being built, and room for the
  // arrays of a request that cannot be read in place (protocol.h Reader).
  struct Workspace {
    OutFrame reply;
    std::vector<float> values;  // a reply's values: pulled rows or dense values, sent from here
    std::vector<float> floats;  // a request's gradients or values, where not read in place
    std::vector<uint64_t> keys;  // a request's keys (not 8-byte aligned in the body, so copied)
    // A PREFETCH_SPARSE's table and keys, for after_reply().
    SparseTable* prefetch_table = nullptr;
    std::vector<uint64_t> prefetch_keys;
  };
  struct Answer {
    bool deferred = false;  // a barrier still waiting: the reply goes out when it is released
    Status status = Status::kOk;
    bool then_close = false;
  };
  // The work a request leaves for after its reply is written, before the connection's next
  // request is read: a PREFETCH_SPARSE's reads, done while the worker computes. A disk tier's
  // failure stops the server as in a request (fail()).
  void after_reply(Workspace& work);
  // A header a connection reads the body of: ours, and a body within limits.max_frame_bytes.
  bool acceptable(const Header& header) const;
  // The answer to a frame whose header passed the connection's checks; the reply's body is in
  // `work.reply`.
  Answer answer(const Header& header, std::span<const unsigned char> body, const std::shared_ptr<Session>& session,
                Workspace& work);
  // Handles one well-formed request by its command's handler (Commands, server_commands.cc: one
  // named handler per command); fills the reply body; returns false to defer the reply (a
  // barrier that is still waiting for workers). Throws RequestError for a request it refuses.
  bool handle(const std::shared_ptr<Session>& session, Command command, Reader& body, Workspace& work);
  struct Commands;
  // Each logs what it did and the tables' memory after (options_.log, the server log).
  void save(const std::string& dir, SaveMode mode);
  ShrinkReport shrink();
  void log_memory();
  // Logs `why` and stops serving; run() then throws DiskTierError(why).
  void fail(const std::string& why);

  // Declared before io_ so that sessions the io_context destroys can still release themselves.
  std::mutex peers_mutex_;
  std::map<boost::asio::ip::address, int> connections_per_peer_;
  int connections_ = 0;
  std::map<std::string, uint64_t> refusals_;

  ServerOptions options_;
  HelperPool helpers_;  // the sparse tables'
  ServerTables tables_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  int port_ = 0;

  std::mutex barrier_mutex_;
  std::vector<std::shared_ptr<Session>> barrier_waiters_;
  uint64_t barriers_completed_ = 0;
  int stopped_workers_ = 0;  // of workers that did not say their index
  std::set<uint32_t> stopped_indexes_;  // of those that did
  std::mutex failure_mutex_;
  std::string failure_;  // the first fail()'s
};

}  // namespace paddle::ps
