// ParameterServer's command handlers: what a frame that passed its session's checks asks for,
// and the reply it gets (ps/wire/PROTOCOL.md).
#include "ps/server/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "ps/server/server_session.h"

namespace paddle::ps {

bool ParameterServer::acceptable(const Header& header) const {
  return header.magic == kMagic && header.body_bytes <= options_.limits.max_frame_bytes;
}

ParameterServer::Answer ParameterServer::answer(const Header& header, std::span<const unsigned char> body,
                                                const std::shared_ptr<Session>& session, Workspace& work) {
  auto error = [&work](Status status, const std::string& message, bool then_close = false) {
    work.reply.clear();
    work.reply.str(message);
    return Answer{false, status, then_close};
  };
  if (header.version != kVersion)
    return error(Status::kBadVersion, fmt::format("protocol version {} is not {}", header.version, kVersion), true);
  Reader reader(body.data(), body.size());
  work.reply.clear();
  try {
    if (!handle(session, static_cast<Command>(header.command), reader, work)) return Answer{true, Status::kOk, false};
  } catch (const RequestError& e) {
    return error(e.status(), e.what());
  } catch (const std::invalid_argument& e) {
    // The tables' own checks of a request's sizes (tables.h, sparse_table.h): the sender's fault.
    return error(Status::kBadRequest, e.what());
  } catch (const DiskTierError& e) {
    fail(e.what());
    return error(Status::kServerError, e.what());
  } catch (const std::exception& e) {
    return error(Status::kServerError, e.what());
  }
  return Answer{false, Status::kOk, false};
}

std::vector<unsigned char> ParameterServer::answer_frame(std::span<const unsigned char> frame) {
  if (frame.size() < kHeaderBytes) return {};
  const Header header = decode_header(frame.data());
  if (!acceptable(header) || frame.size() - kHeaderBytes != header.body_bytes) return {};
  const std::vector<unsigned char> body(frame.begin() + kHeaderBytes, frame.end());  // aligned as a connection's
  Workspace work;
  auto answer = this->answer(header, body, nullptr, work);
  if (answer.deferred) return {};
  work.reply.finish(reply_header(header, answer.status));
  std::vector<unsigned char> reply = work.reply.flatten();
  after_reply(work);
  return reply;
}

void ParameterServer::after_reply(Workspace& work) {
  if (work.prefetch_table == nullptr) return;
  SparseTable& table = *work.prefetch_table;
  work.prefetch_table = nullptr;
  try {
    table.prefetch(work.prefetch_keys);
  } catch (const DiskTierError& e) {
    fail(e.what());
  } catch (const std::exception& e) {  // a hint: dropping it costs the pull its disk reads, nothing more
    fmt::print(options_.log, "parameter server on {}:{}: a prefetch of {} keys of sparse table {} was dropped: {}\n",
               options_.ip, port_, work.prefetch_keys.size(), table.spec().name, e.what());
    std::fflush(options_.log);
  }
}

// One handler per command, each reading its request from `body` and writing its reply to
// `work.reply`; false defers the reply (a barrier still waiting). table() lists them by number.
struct ParameterServer::Commands {
  using Handler = bool (*)(ParameterServer&, const std::shared_ptr<Session>&, Reader&, Workspace&);
  struct Entry {
    Command command;
    const char* name;  // as PROTOCOL.md names it
    Handler handle;
  };

  static DenseTable& dense(ParameterServer& server, uint32_t id) {
    if (id >= server.tables_.dense.size())
      throw RequestError(Status::kBadRequest, fmt::format("no dense table {} (this server has {})", id,
                                                          server.tables_.dense.size()));
    return *server.tables_.dense[id];
  }
  static SparseTable& sparse(ParameterServer& server, uint32_t id) {
    if (id >= server.tables_.sparse.size())
      throw RequestError(Status::kBadRequest, fmt::format("no sparse table {} (this server has {})", id,
                                                          server.tables_.sparse.size()));
    return *server.tables_.sparse[id];
  }

  static bool ping(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    body.expect_end();
    work.reply.u32(static_cast<uint32_t>(server.options_.server_index));
    return true;
  }
  static bool init_dense(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    auto& t = dense(server, body.u32());
    auto values = body.f32s(work.floats);
    body.expect_end();
    t.set(values);
    return true;
  }
  static bool pull_dense(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    auto& t = dense(server, body.u32());
    body.expect_end();
    work.values.resize(t.size());
    t.pull(0, t.size(), work.values.data());
    work.reply.f32s(work.values.data(), work.values.size());
    return true;
  }
  static bool pull_dense_range(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body,
                               Workspace& work) {
    auto& t = dense(server, body.u32());
    const uint64_t begin = body.u64(), count = body.u64();
    body.expect_end();
    if (begin > t.size() || count > t.size() - begin)
      throw RequestError(Status::kBadRequest, fmt::format("dense values [{}, {}) asked of a block of {} (another "
                                                          "model?)", begin, begin + count, t.size()));
    work.values.resize(count);
    t.pull(begin, count, work.values.data());
    work.reply.f32s(work.values.data(), work.values.size());
    return true;
  }
  static bool push_dense(ParameterServer& server, const std::shared_ptr<Session>& session, Reader& body, Workspace& work) {
    const uint32_t id = body.u32();
    auto& t = dense(server, id);
    auto grads = body.f32s(work.floats);
    body.expect_end();
    if (!server.options_.sync) {
      t.push(grads);
    } else if (!session) {  // answer_frame's: no barrier of its own to wait for
      t.accumulate(grads);
    } else {
      if (grads.size() != t.size())
        throw std::invalid_argument(fmt::format("push of {} values to a dense block of {}", grads.size(), t.size()));
      session->held.push_back({false, id, {}, std::vector<float>(grads.begin(), grads.end())});
    }
    return true;
  }
  static bool add_dense(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    auto& t = dense(server, body.u32());
    auto delta = body.f32s(work.floats);
    body.expect_end();
    t.add(delta);
    return true;
  }
  static bool add_sparse(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    auto& t = sparse(server, body.u32());
    auto keys = body.u64s(work.keys);
    auto delta = body.f32s(work.floats);
    body.expect_end();
    t.add(keys, delta);
    return true;
  }
  static bool pull_sparse(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    auto& t = sparse(server, body.u32());
    auto keys = body.u64s(work.keys);
    body.expect_end();
    work.values.resize(keys.size() * t.dim());
    t.pull(keys, work.values.data());
    work.reply.f32s(work.values.data(), work.values.size());
    return true;
  }
  static bool prefetch_sparse(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body,
                              Workspace& work) {
    SparseTable& t = sparse(server, body.u32());
    auto keys = body.u64s(work.keys);
    body.expect_end();
    work.prefetch_keys.assign(keys.begin(), keys.end());
    work.prefetch_table = &t;  // read after the reply (after_reply)
    return true;
  }
  static bool push_sparse(ParameterServer& server, const std::shared_ptr<Session>& session, Reader& body, Workspace& work) {
    const uint32_t id = body.u32();
    auto& t = sparse(server, id);
    auto keys = body.u64s(work.keys);
    auto grads = body.f32s(work.floats);
    body.expect_end();
    if (!server.options_.sync) {
      t.push(keys, grads);
    } else if (!session) {
      t.accumulate(keys, grads);
    } else {
      if (grads.size() != keys.size() * t.push_width())
        throw std::invalid_argument(fmt::format("push of {} values for {} keys of width {}", grads.size(), keys.size(),
                                                t.push_width()));
      session->held.push_back({true, id, std::vector<uint64_t>(keys.begin(), keys.end()),
                               std::vector<float>(grads.begin(), grads.end())});
    }
    return true;
  }
  // BARRIER's body is empty (an older client, taken in its order of arrival) or the worker's index.
  static bool barrier(ParameterServer& server, const std::shared_ptr<Session>& session, Reader& body, Workspace& work) {
    std::optional<uint32_t> worker;
    if (!body.at_end()) worker = body.u32();
    body.expect_end();
    std::vector<std::shared_ptr<Session>> released;
    uint64_t completed = 0;
    {
      std::lock_guard lock(server.barrier_mutex_);
      if (session && worker) session->worker = worker;
      server.barrier_waiters_.push_back(session);  // null: answer_frame's
      if (static_cast<int>(server.barrier_waiters_.size()) < server.options_.workers) return false;
      released.swap(server.barrier_waiters_);
      // The workers' held pushes in the order of their indexes: the sums, and so the tables, are
      // the same whoever came first.
      const auto index = [](const std::shared_ptr<Session>& s) { return s ? s->worker.value_or(UINT32_MAX) : UINT32_MAX; };
      std::stable_sort(released.begin(), released.end(), [&](const auto& a, const auto& b) { return index(a) < index(b); });
      for (auto& waiter : released) {
        if (!waiter) continue;
        for (Session::HeldPush& push : waiter->held)
          push.sparse ? sparse(server, push.table).accumulate(push.keys, push.values)
                      : dense(server, push.table).accumulate(push.values);
        waiter->held.clear();
      }
      for (auto& t : server.tables_.dense) t->apply_pending(server.options_.workers);
      for (auto& t : server.tables_.sparse) t->apply_pending(server.options_.workers);
      completed = ++server.barriers_completed_;
    }
    for (auto& waiter : released)  // each on its own strand
      if (waiter && waiter != session) waiter->release_barrier(completed);
    if (worker) work.reply.u64(completed);
    return true;
  }
  // A worker restarted in place (its launcher's --ps_worker_restarts) asks what its dead self
  // left at the barrier: the reply is the barriers completed and whether its dead connection
  // waits at the next one; with `drop`, that place and the pushes held with it go
  // (ps/client/barrier_rejoin.h decides).
  static bool rejoin(ParameterServer& server, const std::shared_ptr<Session>& session, Reader& body, Workspace& work) {
    const uint32_t worker = body.u32();
    const bool drop = body.u32() != 0;
    body.expect_end();
    std::shared_ptr<Session> predecessor;
    uint64_t completed = 0;
    {
      std::lock_guard lock(server.barrier_mutex_);
      auto& waiters = server.barrier_waiters_;
      const auto it = std::find_if(waiters.begin(), waiters.end(),
                                   [&](const auto& w) { return w && w->worker == worker && w != session; });
      if (it != waiters.end()) {
        predecessor = *it;
        if (drop) {
          waiters.erase(it);
          predecessor->held.clear();
        }
      }
      if (session) session->worker = worker;
      completed = server.barriers_completed_;
    }
    if (predecessor && drop) {
      predecessor->abandon();
      fmt::print(server.options_.log, "parameter server on {}:{}: worker {} restarted in place; dropped its dead "
                 "self's place at barrier {} and the pushes it held\n", server.options_.ip, server.port_, worker,
                 completed + 1);
      std::fflush(server.options_.log);
    }
    work.reply.u64(completed).u32(predecessor && !drop ? 1 : 0);
    return true;
  }
  static bool save(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace&) {
    auto dir = body.str();
    body.expect_end();
    server.save(dir, SaveMode::kAll);
    return true;
  }
  static bool save_mode(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace&) {
    auto dir = body.str();
    const uint32_t mode = body.u32();
    body.expect_end();
    if (mode > static_cast<uint32_t>(SaveMode::kDelta))
      throw RequestError(Status::kBadRequest, fmt::format("save mode {} is not 0 (all), 1 (base) or 2 (delta)", mode));
    server.save(dir, static_cast<SaveMode>(mode));
    return true;
  }
  static bool shrink(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    body.expect_end();
    const ShrinkReport report = server.shrink();
    work.reply.u32(static_cast<uint32_t>(report.server)).u32(static_cast<uint32_t>(report.tables.size()));
    for (const TableShrink& t : report.tables) work.reply.str(t.table).u64(t.rows_before).u64(t.rows_after);
    return true;
  }
  static bool stats(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace& work) {
    body.expect_end();
    const ServerMemory memory = tables_memory(server.tables_, server.options_.server_index);
    OutFrame& reply = work.reply;
    reply.u32(static_cast<uint32_t>(memory.server)).u32(static_cast<uint32_t>(memory.tables.size()));
    for (const TableMemory& t : memory.tables) {
      reply.str(t.table).u64(t.rows).u64(t.value_bytes).u64(t.index_bytes).u32(t.tier.tiered ? 1 : 0);
      if (!t.tier.tiered) continue;
      reply.u64(t.tier.memory_rows).u64(t.tier.disk_rows).u64(t.tier.disk_bytes).u64(t.tier.database_bytes);
      for (double rate : {t.tier.hit_rate, t.tier.disk_reads_per_s, t.tier.evictions_per_s})
        reply.u64(std::bit_cast<uint64_t>(rate));
    }
    return true;
  }
  static bool load(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace&) {
    auto dir = body.str();
    body.expect_end();
    server.load(dir);
    return true;
  }
  static const std::array<Entry, kLastCommand>& table();
  // STOP_WORKER's body is empty (an older client: each counts) or the worker's index, which
  // counts once however often it comes (a worker restarted in place after it said so to some).
  static bool stop_worker(ParameterServer& server, const std::shared_ptr<Session>&, Reader& body, Workspace&) {
    std::optional<uint32_t> worker;
    if (!body.at_end()) worker = body.u32();
    body.expect_end();
    std::lock_guard lock(server.barrier_mutex_);
    if (worker) server.stopped_indexes_.insert(*worker);
    else ++server.stopped_workers_;
    if (server.stopped_workers_ + static_cast<int>(server.stopped_indexes_.size()) >= server.options_.workers) {
      // Let this reply go out, then end run().
      asio::post(server.io_, [&server] { asio::post(server.io_, [&server] { server.io_.stop(); }); });
    }
    return true;
  }
};

// Indexed by command number - 1, as the static_assert checks.
const std::array<ParameterServer::Commands::Entry, kLastCommand>& ParameterServer::Commands::table() {
  static constexpr std::array<Entry, kLastCommand> kTable{{
      {Command::kPullDense, "PULL_DENSE", &pull_dense},
      {Command::kPushDense, "PUSH_DENSE", &push_dense},
      {Command::kPullSparse, "PULL_SPARSE", &pull_sparse},
      {Command::kPushSparse, "PUSH_SPARSE", &push_sparse},
      {Command::kInitDense, "INIT_DENSE", &init_dense},
      {Command::kBarrier, "BARRIER", &barrier},
      {Command::kSave, "SAVE", &save},
      {Command::kLoad, "LOAD", &load},
      {Command::kStopWorker, "STOP_WORKER", &stop_worker},
      {Command::kPing, "PING", &ping},
      {Command::kAddDense, "ADD_DENSE", &add_dense},
      {Command::kAddSparse, "ADD_SPARSE", &add_sparse},
      {Command::kPullDenseRange, "PULL_DENSE_RANGE", &pull_dense_range},
      {Command::kSaveMode, "SAVE_MODE", &save_mode},
      {Command::kShrink, "SHRINK", &shrink},
      {Command::kStats, "STATS", &stats},
      {Command::kPrefetchSparse, "PREFETCH_SPARSE", &prefetch_sparse},
      {Command::kRejoin, "REJOIN", &rejoin},
  }};
  static_assert([] {
    for (size_t i = 0; i < kTable.size(); ++i)
      if (static_cast<size_t>(kTable[i].command) != i + 1) return false;
    return true;
  }(), "the table's entry i must handle command i + 1");
  return kTable;
}

bool ParameterServer::handle(const std::shared_ptr<Session>& session, Command command, Reader& body, Workspace& work) {
  const auto number = static_cast<unsigned>(command);
  if (number < 1 || number > kLastCommand)
    throw RequestError(Status::kUnknownCommand, fmt::format("unknown command {}", number));
  const Commands::Entry& entry = Commands::table()[number - 1];
  try {
    return entry.handle(*this, session, body, work);
  } catch (const RequestError& e) {
    throw RequestError(e.status(), fmt::format("{}: {}", entry.name, e.what()));
  }
}

}  // namespace paddle::ps
