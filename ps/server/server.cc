#include "ps/server/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/error.h"
#include "common/listen.h"
#include "ps/table/checkpoint.h"
#include "ps/server/server_session.h"

namespace paddle::ps {

namespace {

size_t helper_count(int asked) {
  if (asked >= 0) return static_cast<size_t>(asked);
  // More than a few mostly wait on memory (and on the server's 16 shards per table).
  constexpr unsigned kMostHelpers = 7;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 1 ? std::min(cores - 1, kMostHelpers) : 0;
}

}  // namespace

ParameterServer::ParameterServer(ServerOptions options, ServerTables tables)
    : options_(std::move(options)), helpers_(helper_count(options_.sparse_helpers)), tables_(std::move(tables)),
      acceptor_(io_), accept_retry_(io_) {
  for (auto& t : tables_.sparse) t->set_helpers(&helpers_);
  common::listen_on(acceptor_, options_.ip, options_.port, asio::socket_base::max_listen_connections, "parameter server");
  port_ = acceptor_.local_endpoint().port();
}

ParameterServer::~ParameterServer() { stop(); }

void ParameterServer::run() {
  accept();
  fmt::print(options_.log, "Server listening on {}:{}\n", options_.ip, port_);
  for (const auto& t : tables_.sparse)
    if (t->tiered())
      fmt::print(options_.log, "sparse table {}: at most {} rows in memory, the rest on disk in {}\n", t->spec().name,
                 t->spec().storage.memory_rows, t->spec().storage.dir);
  if (!options_.token)
    fmt::print(options_.log, "parameter server on {}:{}: no PADDLE_JOB_TOKEN, so any peer that reaches it is served "
               "(PADDLE_REQUIRE_TOKEN=1 refuses to run so)\n", options_.ip, port_);
  std::fflush(options_.log);
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.threads; ++i) threads.emplace_back([&] { io_.run(); });
  io_.run();
  for (auto& t : threads) t.join();
  std::lock_guard lock(failure_mutex_);
  if (!failure_.empty()) throw DiskTierError(failure_);
}

void ParameterServer::fail(const std::string& why) {
  {
    std::lock_guard lock(failure_mutex_);
    if (!failure_.empty()) return;
    failure_ = why;
  }
  fmt::print(options_.log, "parameter server on {}:{}: stopping: {}\n", options_.ip, port_, why);
  std::fflush(options_.log);
  // Let the error reply go out, then end run().
  asio::post(io_, [this] { asio::post(io_, [this] { io_.stop(); }); });
}

void ParameterServer::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of file descriptors (or a connection reset before it was taken): say so once a
      // second while it lasts, and keep accepting once some are free again.
      fmt::print(options_.log, "parameter server on {}:{}: cannot accept a connection: {}\n", options_.ip, port_,
                 ec.message());
      std::fflush(options_.log);
      accept_retry_.expires_after(std::chrono::seconds(1));
      accept_retry_.async_wait([this](auto wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (!peer_ec && admit(peer.address(), peer.port())) {
      socket.set_option(tcp::no_delay(true), peer_ec);
      std::make_shared<Session>(std::move(socket), peer, *this)->greet();
    }
    accept();
  });
}

bool ParameterServer::admit(const asio::ip::address& peer, unsigned short port) {
  std::string why;
  {
    std::lock_guard lock(peers_mutex_);
    int& from_peer = connections_per_peer_[peer];
    if (from_peer >= options_.limits.max_connections_per_peer)
      why = fmt::format("{} holds {} connections already (PADDLE_PS_MAX_CONNECTIONS_PER_PEER)", peer.to_string(),
                        from_peer);
    else if (connections_ >= options_.limits.max_connections)
      why = fmt::format("{} connections are open already (PADDLE_PS_MAX_CONNECTIONS)", connections_);
    if (why.empty()) {
      ++from_peer;
      ++connections_;
      return true;
    }
    if (from_peer == 0) connections_per_peer_.erase(peer);
  }
  log_peer("refused", peer, port, why);
  return false;
}

void ParameterServer::release(const asio::ip::address& peer) {
  std::lock_guard lock(peers_mutex_);
  auto it = connections_per_peer_.find(peer);
  if (it == connections_per_peer_.end()) return;
  --connections_;
  if (--it->second == 0) connections_per_peer_.erase(it);
}

void ParameterServer::log_peer(const char* verb, const asio::ip::address& peer, unsigned short port,
                               const std::string& why) {
  uint64_t count;
  {
    std::lock_guard lock(peers_mutex_);
    count = ++refusals_[peer.to_string() + " " + why.substr(why.rfind('('))];  // by peer and limit
  }
  if (count != 1 && count % 1000 != 0) return;
  fmt::print(options_.log, "parameter server: {} {}:{}: {}{}\n", verb, peer.to_string(), port, why,
             count == 1 ? "" : fmt::format(" (the {}th time for this peer)", count));
  std::fflush(options_.log);
}

void ParameterServer::stop() { io_.stop(); }

ServerMemory ParameterServer::memory() { return tables_memory(tables_, options_.server_index); }

void ParameterServer::log_memory() {
  const ServerMemory now = memory();
  fmt::print(options_.log, "{}\n", describe(now));
  std::fflush(options_.log);
  if (options_.on_memory) options_.on_memory(now);
}

ShrinkReport ParameterServer::shrink() {
  ShrinkReport report = shrink_tables(tables_, options_.server_index);
  for (const TableShrink& t : report.tables)
    fmt::print(options_.log, "server {} shrink table {}: rows {} -> {}\n", options_.server_index, t.table,
               t.rows_before, t.rows_after);
  log_memory();
  return report;
}

void ParameterServer::save(const std::string& dir, SaveMode mode) {
  save_checkpoint(dir, tables_, options_.server_index, options_.server_count, mode);
  fmt::print(options_.log, "server {} saved its tables ({}) to {}\n", options_.server_index, save_mode_name(mode), dir);
  log_memory();
}

void ParameterServer::load(const std::string& dir) {
  const auto start = std::chrono::steady_clock::now();
  load_checkpoint(dir, tables_, options_.server_index, options_.server_count);
  fmt::print(options_.log, "server {} loaded its tables from {} in {:.2f} s\n", options_.server_index, dir,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  log_memory();
}

}  // namespace paddle::ps
