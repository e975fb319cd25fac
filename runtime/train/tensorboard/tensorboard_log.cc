#include "runtime/train/tensorboard/tensorboard_log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "runtime/train/tensorboard/event.pb.h"
#include "runtime/train/tensorboard/tfrecord.h"

namespace paddle::tensorboard {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
}

}  // namespace

TensorBoardLog::TensorBoardLog(std::string run_dir) : run_dir_(std::move(run_dir)) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir_, ec);
  if (ec) throw common::DataError(fmt::format("{}: cannot make the TensorBoard run directory: {}", run_dir_, ec.message()));
  file_prefix_ = fmt::format("{}/events.out.tfevents.{}.{}.{}.", run_dir_, static_cast<int64_t>(now_seconds()), host_name(),
                             ::getpid());
}

TensorBoardLog::~TensorBoardLog() {
  try {
    flush();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: the last TensorBoard figures are lost: %s\n", e.what());
  }
}

void TensorBoardLog::scalar(const std::string& tag, int64_t step, double value) {
  Event event;
  event.set_wall_time(now_seconds());
  event.set_step(step);
  SummaryValue* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  pending_.push_back(frame_record(event.SerializeAsString()));
}

void TensorBoardLog::flush() {
  if (pending_.empty()) return;
  Event version;
  version.set_wall_time(now_seconds());
  version.set_file_version("brain.Event:2");
  std::string bytes = frame_record(version.SerializeAsString());
  for (const std::string& record : pending_) bytes += record;
  // The partial file's name has no "tfevents": TensorBoard must not find it before it is whole.
  const std::string target = fmt::format("{}{:06d}", file_prefix_, files_);
  const std::string partial = run_dir_ + "/.partial-events";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw common::DataError(fmt::format("{}: cannot write TensorBoard events: {}", partial, std::strerror(errno)));
  }
  if (std::rename(partial.c_str(), target.c_str()) != 0)
    throw common::DataError(fmt::format("{}: cannot rename TensorBoard events into place: {}", target, std::strerror(errno)));
  ++files_;
  pending_.clear();
}

}  // namespace paddle::tensorboard
