// ParameterServer's command handlers: what a frame that passed its session's checks asks for,
// and the reply it gets (ps/wire/PROTOCOL.md).
#include "ps/server/server.h"

#include <fmt/format.h>

#include <bit>

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
  } catch (const ProtocolError& e) {
    return error(Status::kBadRequest, e.what());
  } catch (const std::invalid_argument& e) {
    return error(header.command >= 1 && header.command <= kLastCommand ? Status::kBadRequest : Status::kUnknownCommand, e.what());
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

bool ParameterServer::handle(const std::shared_ptr<Session>& session, Command command, Reader& body, Workspace& work) {
  auto dense = [&](uint32_t id) -> DenseTable& {
    if (id >= tables_.dense.size()) throw std::invalid_argument(fmt::format("no dense table {}", id));
    return *tables_.dense[id];
  };
  auto sparse = [&](uint32_t id) -> SparseTable& {
    if (id >= tables_.sparse.size()) throw std::invalid_argument(fmt::format("no sparse table {}", id));
    return *tables_.sparse[id];
  };
  OutFrame& reply = work.reply;
  switch (command) {
    case Command::kPing:
      body.expect_end();
      reply.u32(static_cast<uint32_t>(options_.server_index));
      return true;
    case Command::kInitDense: {
      auto& t = dense(body.u32());
      auto values = body.f32s(work.floats);
      body.expect_end();
      t.set(values);
      return true;
    }
    case Command::kPullDense: {
      auto& t = dense(body.u32());
      body.expect_end();
      work.values.resize(t.size());
      t.pull(0, t.size(), work.values.data());
      reply.f32s(work.values.data(), work.values.size());
      return true;
    }
    case Command::kPullDenseRange: {
      auto& t = dense(body.u32());
      const uint64_t begin = body.u64(), count = body.u64();
      body.expect_end();
      if (begin > t.size() || count > t.size() - begin)
        throw std::invalid_argument(fmt::format("dense values [{}, {}) asked of a block of {} (another model?)", begin,
                                                begin + count, t.size()));
      work.values.resize(count);
      t.pull(begin, count, work.values.data());
      reply.f32s(work.values.data(), work.values.size());
      return true;
    }
    case Command::kPushDense: {
      auto& t = dense(body.u32());
      auto grads = body.f32s(work.floats);
      body.expect_end();
      options_.sync ? t.accumulate(grads) : t.push(grads);
      return true;
    }
    case Command::kAddDense: {
      auto& t = dense(body.u32());
      auto delta = body.f32s(work.floats);
      body.expect_end();
      t.add(delta);
      return true;
    }
    case Command::kAddSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s(work.keys);
      auto delta = body.f32s(work.floats);
      body.expect_end();
      t.add(keys, delta);
      return true;
    }
    case Command::kPullSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s(work.keys);
      body.expect_end();
      work.values.resize(keys.size() * t.dim());
      t.pull(keys, work.values.data());
      reply.f32s(work.values.data(), work.values.size());
      return true;
    }
    case Command::kPrefetchSparse: {
      SparseTable& t = sparse(body.u32());
      auto keys = body.u64s(work.keys);
      body.expect_end();
      work.prefetch_keys.assign(keys.begin(), keys.end());
      work.prefetch_table = &t;
      return true;
    }
    case Command::kPushSparse: {
      auto& t = sparse(body.u32());
      auto keys = body.u64s(work.keys);
      auto grads = body.f32s(work.floats);
      body.expect_end();
      options_.sync ? t.accumulate(keys, grads) : t.push(keys, grads);
      return true;
    }
    case Command::kBarrier: {
      body.expect_end();
      std::vector<std::shared_ptr<Session>> released;
      {
        std::lock_guard lock(barrier_mutex_);
        barrier_waiters_.push_back(session);
        if (static_cast<int>(barrier_waiters_.size()) < options_.workers) return false;
        for (auto& t : tables_.dense) t->apply_pending(options_.workers);
        for (auto& t : tables_.sparse) t->apply_pending(options_.workers);
        released.swap(barrier_waiters_);
      }
      for (auto& waiter : released)  // each on its own strand; null: answer_frame's
        if (waiter && waiter != session) waiter->release_barrier();
      return true;
    }
    case Command::kSave: {
      auto dir = body.str();
      body.expect_end();
      save(dir, SaveMode::kAll);
      return true;
    }
    case Command::kSaveMode: {
      auto dir = body.str();
      const uint32_t mode = body.u32();
      body.expect_end();
      if (mode > static_cast<uint32_t>(SaveMode::kDelta))
        throw std::invalid_argument(fmt::format("save mode {} is not 0 (all), 1 (base) or 2 (delta)", mode));
      save(dir, static_cast<SaveMode>(mode));
      return true;
    }
    case Command::kShrink: {
      body.expect_end();
      const ShrinkReport report = shrink();
      reply.u32(static_cast<uint32_t>(report.server)).u32(static_cast<uint32_t>(report.tables.size()));
      for (const TableShrink& t : report.tables) reply.str(t.table).u64(t.rows_before).u64(t.rows_after);
      return true;
    }
    case Command::kStats: {
      body.expect_end();
      const ServerMemory memory = tables_memory(tables_, options_.server_index);
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

}  // namespace paddle::ps
