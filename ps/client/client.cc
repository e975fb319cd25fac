#include "ps/client/client.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <algorithm>
#include <array>
#include <bit>
#include <deque>

#include "common/parse.h"
#include "common/wait.h"
#include "ps/client/barrier_rejoin.h"
#include "ps/client/exchange.h"
#include "ps/wire/sharding.h"

namespace paddle::ps {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct PsClient::Connection {
  std::string endpoint;
  asio::io_context io;
  tcp::socket socket{io};
  std::deque<OutFrame> frames;  // a call's requests to this server, reused call after call
  size_t frames_in_use = 0;     // by the call under way
  std::vector<float> rows;      // pulled rows before they are scattered, reused
};

namespace {

// Sparse calls go as requests of at most this many keys each, several in flight (exchange.h):
// a server looks up one while the next arrive.
constexpr size_t kChunkKeys = 16384;
// A dense pull goes as requests of this many values each: a server copies out one while the last
// is on its way, and the copy is still in its cache when it is sent.
constexpr size_t kChunkValues = 1 << 18;

// Waits until `socket` is ready for `events` (POLLIN, POLLOUT), at most `timeout`; false with
// `ec` set to timed_out or the error otherwise.
bool wait_ready(tcp::socket& socket, short events, std::chrono::milliseconds timeout, boost::system::error_code& ec) {
  pollfd p{socket.native_handle(), events, 0};
  int n;
  do n = ::poll(&p, 1, static_cast<int>(timeout.count()));
  while (n < 0 && errno == EINTR);
  if (n < 0) ec.assign(errno, boost::system::system_category());
  else if (n == 0) ec = asio::error::timed_out;
  return n > 0;
}

// All of `buffer` read from (written to) the server, each part within `timeout`. Asio's blocking
// read and write ignore SO_RCVTIMEO/SO_SNDTIMEO (on EAGAIN they poll again without a limit), so
// a server that accepts and then says nothing would hold them forever.
void read_within(tcp::socket& socket, asio::mutable_buffer buffer, std::chrono::milliseconds timeout,
                 boost::system::error_code& ec) {
  ec.clear();
  while (buffer.size() > 0 && wait_ready(socket, POLLIN, timeout, ec)) {
    buffer += socket.read_some(buffer, ec);
    if (ec) return;
  }
}

void write_within(tcp::socket& socket, asio::const_buffer buffer, std::chrono::milliseconds timeout,
                  boost::system::error_code& ec) {
  ec.clear();
  while (buffer.size() > 0 && wait_ready(socket, POLLOUT, timeout, ec)) {
    buffer += socket.write_some(buffer, ec);
    if (ec) return;
  }
}

// The handshake (PROTOCOL.md): the server's challenge in, the proof of the job token out, its
// verdict in. Throws PeerError when the server refuses the proof.
void prove_token(PsClient::Connection& c, const std::optional<common::JobToken>& token,
                 std::chrono::milliseconds timeout) {
  std::array<char, kGreetingBytes> greeting{};
  boost::system::error_code ec;
  read_within(c.socket, asio::buffer(greeting), timeout, ec);
  if (ec || !std::equal(std::begin(kGreetingMagic), std::end(kGreetingMagic), greeting.begin())) {
    const std::string why = ec == asio::error::timed_out
                                ? fmt::format("none within {} s, PADDLE_PS_REQUEST_TIMEOUT", timeout.count() / 1000)
                                : ec ? ec.message() : "wrong magic";
    throw common::PeerError(fmt::format("parameter server {}: no greeting ({}): not a parameter server of this version",
                                        c.endpoint, why));
  }
  const std::string_view challenge(greeting.data() + sizeof kGreetingMagic, common::kChallengeSize);
  const std::string proof = token ? token->prove(kProofPurpose, challenge) : std::string(kProofBytes, '0');
  char verdict = 0;
  write_within(c.socket, asio::buffer(proof), timeout, ec);
  if (!ec) read_within(c.socket, asio::buffer(&verdict, 1), timeout, ec);
  if (ec || verdict != kProofAccepted)
    throw common::PeerError(fmt::format("parameter server {} refused this worker: {} (PADDLE_JOB_TOKEN)", c.endpoint,
                                        token ? "its job token is not the job's" : "it has no job token"));
}

bool try_connect(PsClient::Connection& c, std::chrono::milliseconds timeout, const std::optional<common::JobToken>& token) {
  const auto [host, port] = common::parse_endpoint(c.endpoint, "parameter server endpoint");
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) throw common::ConfigError(fmt::format("parameter server endpoint '{}': '{}' is not an IP address", c.endpoint, host));
  c.socket = tcp::socket(c.io);
  c.socket.connect(tcp::endpoint(address, static_cast<unsigned short>(port)), ec);
  if (ec) return false;
  c.socket.set_option(tcp::no_delay(true));
  prove_token(c, token, timeout);
  return true;
}

}  // namespace

PsClient::PsClient(std::vector<std::string> endpoints, TableSpecs tables, ClientOptions options)
    : tables_(std::move(tables)), options_(options) {
  for (auto& e : endpoints) {
    auto c = std::make_unique<Connection>();
    c->endpoint = e;
    connections_.push_back(std::move(c));
  }
  common::WaitOptions wait;
  wait.timeout = options_.connect_timeout;
  wait.report_interval = options_.report_interval;
  wait.poll_interval = std::chrono::milliseconds(100);
  wait.report_to = options_.log;
  std::vector<bool> connected(connections_.size(), false);
  common::wait_until_ready(
      wait,
      [&] {
        std::vector<std::string> missing;
        for (size_t i = 0; i < connections_.size(); ++i) {
          if (!connected[i]) connected[i] = try_connect(*connections_[i], options_.request_timeout, options_.token);
          if (!connected[i]) missing.push_back(connections_[i]->endpoint);
        }
        return missing;
      },
      [&](const std::vector<std::string>& missing) {
        return fmt::format("parameter server(s) {} not reachable after {} s (PADDLE_PS_CONNECT_TIMEOUT)",
                           fmt::join(missing, ","), options_.connect_timeout.count() / 1000);
      });
}

PsClient::~PsClient() = default;

OutFrame& PsClient::request(size_t server, Command command, const char* what, float* reply_into, size_t reply_values) {
  auto& frames = connections_[server]->frames;
  const size_t used = connections_[server]->frames_in_use++;
  if (used == frames.size()) frames.emplace_back();
  OutFrame& f = frames[used];
  f.clear();
  requests_.push_back(Request{server, command, &f, what != nullptr, reply_into, reply_values, what ? what : ""});
  return f;
}

void PsClient::run_requests() {
  if (links_.empty())
    for (auto& c : connections_) links_.push_back(ServerLink{&c->socket, c->endpoint});
  const auto end_call = [this] {
    requests_.clear();
    for (auto& c : connections_) c->frames_in_use = 0;
  };
  try {
    exchange(links_, requests_, next_request_, options_.request_timeout);
  } catch (...) {
    end_call();
    throw;
  }
  end_call();
}

void PsClient::broadcast(Command command, const std::function<void(OutFrame&)>& body) {
  for (size_t s = 0; s < servers(); ++s) {
    OutFrame& f = request(s, command);
    if (body) body(f);
  }
  run_requests();
}

void PsClient::send_dense(Command command, std::string_view call, uint32_t table, const std::vector<float>& values) {
  check_dense_length(tables_, table, values.size(), call);
  for (size_t s = 0; s < servers(); ++s) {
    auto [begin, end] = dense_block(values.size(), servers(), s);
    request(s, command).u32(table).f32s(values.data() + begin, end - begin);
  }
  run_requests();
}

void PsClient::send_sparse(Command command, std::string_view call, uint32_t table, const std::vector<uint64_t>& keys,
                           const std::vector<float>& values) {
  check_sparse_length(tables_, table, keys.size(), values.size(), call);
  const size_t dim = push_width(tables_.sparse[table]);
  router_.route(keys, servers());
  router_.gather(values, dim);
  for (size_t s = 0; s < servers(); ++s) {
    const auto share = router_.keys(s);
    const auto rows = router_.rows(s);
    for (size_t at = 0; at < share.size(); at += kChunkKeys) {  // a server without keys gets no request
      const size_t n = std::min(kChunkKeys, share.size() - at);
      request(s, command).u32(table).u64s(share.data() + at, n).f32s(rows.data() + at * dim, n * dim);
    }
  }
  run_requests();
}

void PsClient::init_dense(uint32_t table, const std::vector<float>& values) {
  send_dense(Command::kInitDense, "init_dense", table, values);
}

void PsClient::add_dense(uint32_t table, const std::vector<float>& delta) {
  send_dense(Command::kAddDense, "add_dense", table, delta);
}

void PsClient::add_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& delta) {
  send_sparse(Command::kAddSparse, "add_sparse", table, keys, delta);
}

std::vector<float> PsClient::pull_dense(uint32_t table) {
  std::vector<float> all(dense_table(tables_, table, "pull_dense").size);
  pull_dense_into(table, all);
  return all;
}

void PsClient::pull_dense_into(uint32_t table, std::span<float> all) {
  check_dense_length(tables_, table, all.size(), "pull_dense");
  const size_t total = all.size();
  for (size_t s = 0; s < servers(); ++s) {
    auto [begin, end] = dense_block(total, servers(), s);
    for (size_t at = 0; at < end - begin || at == 0; at += kChunkValues) {
      const size_t n = std::min(kChunkValues, end - begin - at);
      request(s, Command::kPullDenseRange, "dense values", all.data() + begin + at, n).u32(table).u64(at).u64(n);
      if (n == 0) break;
    }
  }
  run_requests();
}

void PsClient::push_dense(uint32_t table, const std::vector<float>& grads) {
  send_dense(Command::kPushDense, "push_dense", table, grads);
}

std::vector<float> PsClient::pull_sparse(uint32_t table, const std::vector<uint64_t>& keys) {
  const size_t dim = sparse_table(tables_, table, "pull_sparse").dim;
  router_.route(keys, servers());
  std::vector<float> out(keys.size() * dim);
  for (size_t s = 0; s < servers(); ++s) {
    const auto share = router_.keys(s);
    float* rows = out.data() + router_.begin(s) * dim;
    if (!router_.in_order()) {
      connections_[s]->rows.resize(share.size() * dim);
      rows = connections_[s]->rows.data();
    }
    for (size_t at = 0; at < share.size(); at += kChunkKeys) {  // a server without keys gets no request
      const size_t n = std::min(kChunkKeys, share.size() - at);
      request(s, Command::kPullSparse, "row values", rows + at * dim, n * dim).u32(table).u64s(share.data() + at, n);
    }
  }
  run_requests();
  if (!router_.in_order())
    for (size_t s = 0; s < servers(); ++s) router_.scatter(s, connections_[s]->rows.data(), out.data(), dim);
  return out;
}

void PsClient::prefetch_sparse(uint32_t table, const std::vector<uint64_t>& keys) {
  if (sparse_table(tables_, table, "prefetch_sparse").storage.kind != StorageSpec::Kind::kSsd) return;
  router_.route(keys, servers());
  // One request each, of at most a pull request's keys (so no server's frame limit refuses it):
  // the server answers before it reads, and a second request would wait for the first's reads.
  for (size_t s = 0; s < servers(); ++s) {
    const auto share = router_.keys(s);
    if (!share.empty()) request(s, Command::kPrefetchSparse).u32(table).u64s(share.data(), std::min(share.size(), kChunkKeys));
  }
  run_requests();
}

void PsClient::push_sparse(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads) {
  send_sparse(Command::kPushSparse, "push_sparse", table, keys, grads);
}

void PsClient::barrier() {
  if (!options_.worker_index) return broadcast(Command::kBarrier, {});
  barriers_completed_ = barriers_agreed(
      ask_every_server(Command::kBarrier, [this](OutFrame& f) { f.u32(*options_.worker_index); }), "BARRIER");
}

void PsClient::rejoin() {
  if (!options_.worker_index) throw std::logic_error("PsClient::rejoin: a worker rejoins by its index (worker_index)");
  const auto ask = [this](bool drop) {
    std::vector<BarrierState> states;
    for (const auto& body : ask_every_server(Command::kRejoin, [&](OutFrame& f) {
           f.u32(*options_.worker_index).u32(drop ? 1 : 0);
         })) {
      Reader reader(body.data(), body.size());
      BarrierState& s = states.emplace_back();
      s.completed = reader.u64();
      s.waiting = reader.u32() != 0;
      reader.expect_end();
    }
    return states;
  };
  std::vector<std::string> endpoints;
  for (const auto& c : connections_) endpoints.push_back(c->endpoint);
  const RejoinDecision decision = decide_rejoin(ask(false), endpoints);
  if (decision.action == RejoinDecision::Action::kDrop) ask(true);
  if (decision.action == RejoinDecision::Action::kAwait) {
    // The others complete the barrier its dead self reached; it goes on only after every server
    // has applied it, as they do.
    const bool completed = common::wait_until(
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.request_timeout),
        [&] {
          const auto states = ask(false);
          return std::all_of(states.begin(), states.end(),
                             [&](const BarrierState& s) { return s.completed >= decision.completed; });
        },
        std::chrono::milliseconds(20));
    if (!completed)
      throw PsError(fmt::format("REJOIN: barrier {} was not completed on every server within {} s "
                                "(PADDLE_PS_REQUEST_TIMEOUT)", decision.completed,
                                std::chrono::duration_cast<std::chrono::seconds>(options_.request_timeout).count()));
  }
  barriers_completed_ = decision.completed;
}

uint64_t PsClient::barriers_agreed(const std::vector<std::vector<unsigned char>>& replies, const char* call) const {
  std::vector<uint64_t> counts;
  for (const auto& body : replies) {
    Reader reader(body.data(), body.size());
    counts.push_back(reader.u64());
    reader.expect_end();
  }
  for (size_t s = 1; s < counts.size(); ++s)
    if (counts[s] != counts[0])
      throw PsError(fmt::format("{}: parameter server {} has completed {} barrier(s) but {} has completed {}: this "
                                "worker's last barrier reached some servers only, so its step cannot be redone alone",
                                call, connections_[0]->endpoint, counts[0], connections_[s]->endpoint, counts[s]));
  return counts.empty() ? 0 : counts[0];
}

void PsClient::save(const std::string& dir, SaveMode mode) {
  if (mode == SaveMode::kAll) broadcast(Command::kSave, [&](OutFrame& f) { f.str(dir); });
  else broadcast(Command::kSaveMode, [&](OutFrame& f) { f.str(dir).u32(static_cast<uint32_t>(mode)); });
}

std::vector<std::vector<unsigned char>> PsClient::ask_every_server(Command command,
                                                                   const std::function<void(OutFrame&)>& body) {
  std::vector<std::vector<unsigned char>> bodies(servers());
  for (size_t s = 0; s < servers(); ++s) {
    OutFrame& f = request(s, command);
    if (body) body(f);
    requests_.back().reply_body = &bodies[s];
  }
  run_requests();
  return bodies;
}

std::vector<ShrinkReport> PsClient::shrink() {
  std::vector<ShrinkReport> reports;
  for (const auto& body : ask_every_server(Command::kShrink)) {
    Reader reader(body.data(), body.size());
    ShrinkReport& report = reports.emplace_back();
    report.server = static_cast<int>(reader.u32());
    for (uint32_t n = reader.u32(); n > 0; --n) {
      TableShrink& t = report.tables.emplace_back();
      t.table = reader.str();
      t.rows_before = reader.u64();
      t.rows_after = reader.u64();
    }
    reader.expect_end();
  }
  return reports;
}

std::vector<ServerMemory> PsClient::memory() {
  std::vector<ServerMemory> memories;
  for (const auto& body : ask_every_server(Command::kStats)) {
    Reader reader(body.data(), body.size());
    ServerMemory& memory = memories.emplace_back();
    memory.server = static_cast<int>(reader.u32());
    for (uint32_t n = reader.u32(); n > 0; --n) {
      TableMemory& t = memory.tables.emplace_back();
      t.table = reader.str();
      t.rows = reader.u64();
      t.value_bytes = reader.u64();
      t.index_bytes = reader.u64();
      if (reader.u32() == 0) continue;
      t.tier.tiered = true;
      t.tier.memory_rows = reader.u64();
      t.tier.disk_rows = reader.u64();
      t.tier.disk_bytes = reader.u64();
      t.tier.database_bytes = reader.u64();
      for (double* rate : {&t.tier.hit_rate, &t.tier.disk_reads_per_s, &t.tier.evictions_per_s})
        *rate = std::bit_cast<double>(reader.u64());
    }
    reader.expect_end();
  }
  return memories;
}

void PsClient::load(const std::string& dir) {
  broadcast(Command::kLoad, [&](OutFrame& f) { f.str(dir); });
}

void PsClient::stop_worker() {
  broadcast(Command::kStopWorker, [this](OutFrame& f) {
    if (options_.worker_index) f.u32(*options_.worker_index);
  });
}

}  // namespace paddle::ps
