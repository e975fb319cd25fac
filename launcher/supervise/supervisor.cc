#include "launcher/supervise/supervisor.h"

#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <csignal>
#include <future>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <utility>

#include "launcher/console/log_echo.h"
#include "launcher/supervise/backup_env_file.h"
#include "common/progress_page.h"
#include "launcher/plan/training_command.h"
#include "launcher/supervise/hang_report.h"
#include "launcher/supervise/hang_verdict.h"
#include "launcher/supervise/hang_watch.h"
#include "launcher/supervise/straggler_watch.h"
#include "launcher/supervise/job_restart_policy.h"
#include "launcher/supervise/process_signs.h"
#include "launcher/supervise/pre_start_hook.h"
#include "launcher/job/job_state.h"
#include "launcher/plan/address.h"
#include "launcher/supervise/child_process.h"
#include "launcher/supervise/failure_report.h"
#include "launcher/supervise/orphan_guard.h"
#include "launcher/supervise/root_cause.h"
#include "launcher/supervise/stop_policy.h"
#include "launcher/supervise/stop_signals.h"
#include "launcher/supervise/timer_stop_clock.h"
#include "launcher/supervise/worker_restart_policy.h"

namespace paddle::launcher {
namespace {

class Job {
 public:
  Job(JobPeers& peers, const EnvMap& env, const SupervisorOptions& options, LaunchLog& log)
      : peers_(peers), env_(env), options_(options), log_(log),
        grace_timer_(io_), grace_clock_(grace_timer_),
        stop_policy_(grace_clock_, options.grace_period, log, escapee_signal(options.orphan_guard)),
        peer_timer_(io_), workers_timer_(io_), hang_timer_(io_), hang_stop_timer_(io_), hang_stacks_timer_(io_) {
    // The signals' thread hands each signal to the thread that watches the processes.
    if (options.stop_signals != nullptr)
      signal_subscription_ = options.stop_signals->subscribe(
          [this](int sig) { boost::asio::post(io_, [this, sig] { on_signal(sig); }); });
  }

  int run() {
    int status = 0;
    try {
      status = run_generations();
    } catch (const Stopped& e) {
      // A wait between the processes' runs (a rendezvous, the master's wait for the others to
      // finish) was stopped by a signal; no process of this node runs then.
      log_.warning(e.what());
      interrupted_by_ = e.signal();
      status = e.exit_code();
    }
    if (job_state_) {
      job_state_->finish(interrupted_by_ ? "stopped" : status == 0 ? "succeeded" : "failed", status,
                         root_ ? root_->describe() : "");
      job_state_->save(common::Durability::kSurvivesPowerLoss);
    }
    return status;
  }

 private:
  int run_generations() {
    int restarts_used = 0;
    std::optional<int> previous;  // the generation before, whose logs are archived
    for (int generation = 0;;) {
      if (previous) archive_logs(*previous);
      plan_ = &peers_.plan(generation, restarts_used);
      // A node joining a running elastic job takes the job's count; a one-node plan has none.
      generation = std::max(generation, plan_->generation);
      restarts_used = std::max(restarts_used, plan_->restarts_used);
      run_attempt(generation);
      if (interrupted_by_) return 128 + interrupted_by_;
      if (!root_) root_ = peers_.finish(generation);
      if (!root_) return 0;
      // The wait for the verdict runs the signal handler between its polls, so that a SIGTERM
      // (scancel stops every process of the step at once) ends it.
      root_ = peers_.verdict(generation, *root_, [this] {
        io_.restart();
        io_.poll();
        return interrupted_by_ != 0;
      });
      if (interrupted_by_) return 128 + interrupted_by_;
      previous = generation++;
      if (auto change = peers_.membership_change(*root_)) {
        log_.warning(fmt::format("the job's nodes change: {}; restarting the whole job on every node as generation {} "
                                 "(PADDLE_RESTART_COUNT={}), which does not count against --max_restarts",
                                 *change, generation, generation));
        continue;
      }
      const bool multi_node = plan_->node_count > 1;
      if (multi_node) log_.error(fmt::format("the job's root cause: {}", root_->describe()));
      const JobRestartVerdict verdict = judge_job_failure(
          *root_, restarts_used, options_.max_restarts, options_.on_hang == SupervisorOptions::OnHang::kStop,
          multi_node ? "the whole job on every node" : fmt::format("all {} local process(es)", plan_->processes.size()),
          generation);
      if (!verdict.restart) {
        if (!verdict.line.empty()) log_.error(verdict.line);
        return root_->exit_status;
      }
      ++restarts_used;
      log_.warning(verdict.line);
    }
  }

  using Slot = ProcessSlot;

  static StopPolicy::EscapeeSignal escapee_signal(const OrphanGuard* guard) {
    if (guard == nullptr) return {};
    return [guard](int sig) { guard->signal_all(sig); };
  }

  void run_attempt(int attempt) {
    attempt_ = attempt;
    stop_policy_.end();  // nothing of an earlier attempt's stop may reach this one's slots
    slots_.clear();
    slots_.reserve(plan_->processes.size());
    failed_.reset();
    root_.reset();
    exits_ = 0;
    stopping_ = false;
    finishing_.reset();
    std::fflush(stdout);  // the launcher's own lines before the processes'
    echo_ = std::make_unique<ConsoleEcho>(*plan_, options_.echo, options_.console);
    job_state_.emplace(*plan_, ::getpid());
    job_state_->begin_attempt(attempt);
    job_state_->set_worker_restarts(worker_restarts_);
    io_.restart();
    run_pre_start_hook_of(attempt);

    for (const auto& spec : plan_->processes) {
      slots_.emplace_back(&spec);
      const size_t index = slots_.size() - 1;
      std::error_code ignored;
      std::filesystem::remove(spec.error_file, ignored);  // an earlier run's record is not this one's
      if (attempt == 0) std::filesystem::remove(spec.metrics_file, ignored);  // restarts go on with the curve
      if (keeps_progress(spec)) std::filesystem::remove(progress_file(spec), ignored);  // an attempt starts over
      if (!start_process(index, options_.append_logs ? ChildProcess::Log::kAppend : ChildProcess::Log::kFresh)) break;
    }
    job_state_->save();
    if (!all_exited()) {
      watch_peers();
      watch_progress();
      if (plan_->mode == LaunchPlan::Mode::kPs && count_local(Role::kWorker) == 0) {
        // Only a node of a multi-node job: a one-node plan always has workers.
        log_.info(count_local(Role::kHeterWorker) == 0
                      ? "this node holds only servers: they serve until every worker of the job has exited 0"
                      : "this node holds no workers: its processes serve until every worker of the job has exited 0");
        peers_.workers_done(attempt);
        finish_servers_when_job_workers_done();
      }
      io_.run();
    }
    if (const uint64_t lost = echo_->finish())
      log_.warning(fmt::format("{} lines of output did not reach the console, which was slower than the job; "
                               "every line is in the log files", lost));
    stop_policy_.end();
    workers_timer_.cancel();
    peer_timer_.cancel();
    for (auto& report : reports_)  // a hang's files are whole before the attempt is over (at most the stacks' timeout)
      if (report.valid()) report.wait();
    hang_timer_.cancel();
    hang_stop_timer_.cancel();
    hang_stacks_timer_.cancel();
    hang_watch_.reset();
    straggler_watch_.reset();
    hang_shared_ = false;
    hang_stop_pending_ = false;
    last_culprit_.reset();
    // Whatever the processes left behind, in their groups or beyond, goes with them.
    for (auto& s : slots_)
      if (s.child) s.child->signal_group(SIGKILL);
    if (options_.orphan_guard) {
      if (int left = options_.orphan_guard->signal_all(SIGKILL); left > 0)
        log_.warning(fmt::format("killed {} process(es) the job's processes left behind outside their groups", left));
    }
    if (failed_) report_failure(slots_, *failed_, log_);
  }

  // --elastic_pre_hook, before this attempt's processes start.
  void run_pre_start_hook_of(int attempt) {
    if (!options_.pre_start_hook) return;
    const std::string log_file = plan_->log_dir + "/prehook.log";
    log_.info(fmt::format("running the pre-start hook (--elastic_pre_hook) before start {}: {}; its output is in {}",
                          attempt, *options_.pre_start_hook, log_file));
    std::stop_token stop = options_.stop_signals ? options_.stop_signals->stop_token() : std::stop_token();
    const auto status = run_pre_start_hook(*options_.pre_start_hook, log_file, env_, stop);
    if (status && *status != 0)
      log_.warning(fmt::format("the pre-start hook ended with {}; starting the processes all the same, as Paddle does "
                               "(see {})", describe_wait_status(*status), log_file));
  }

  // Starts slot `index`'s process; false (and the failure handled) when it cannot be started.
  bool start_process(size_t index, ChildProcess::Log log_mode) {
    Slot& slot = slots_[index];
    const ProcessSpec& spec = *slot.spec;
    try {
      std::error_code ignored;
      std::filesystem::remove(spec.progress_page, ignored);  // a page of its last start is not this one's
      EnvMap env = child_environment(env_, spec, attempt_);
      env.insert_or_assign("PADDLE_STRAGGLER_FACTOR", fmt::format("{}", options_.straggler_factor));
      if (options_.hang_timeout && options_.hang_timeout->count() <= 0 && options_.straggler_factor <= 0)
        env.insert_or_assign("PADDLE_PROGRESS_FILE", "off");  // nobody reads the page: no marks
      if (keeps_progress(spec)) {
        env.insert_or_assign("PADDLE_PS_WORKER_PROGRESS", progress_file(spec));
        env.insert_or_assign("PADDLE_PS_WORKER_RESTART_COUNT", std::to_string(slot.restarts_in_place));
      }
      write_backup_env(spec, env);
      const OrphanGuard* guard = options_.orphan_guard;
      if (guard) env.insert_or_assign(guard->child_variable().first, guard->child_variable().second);
      slot.child = std::make_unique<ChildProcess>(io_, plan_->command, env, spec.log_file,
                                                  [this, index](int status) { on_exit(index, status); },
                                                  ChildProcess::Stdin::kNull, guard ? guard->cgroup_procs_fd() : -1,
                                                  log_mode);
      job_state_->process(index).pid = slot.child->pid();
      job_state_->process(index).state = "running";
      return true;
    } catch (const std::exception& e) {
      log_.error(fmt::format("failed to start {} {}: {}", role_name(spec.role), spec.rank, e.what()));
      slot.status = W_EXITCODE(127, 0);
      on_failure(index);
      return false;
    }
  }

  // The workers of a PS job restarting in place keep their progress (worker_progress.h) in
  // LOG_DIR/workerprogress.RANK.
  bool keeps_progress(const ProcessSpec& spec) const {
    return options_.ps_worker_restarts > 0 && plan_->mode == LaunchPlan::Mode::kPs && spec.role == Role::kWorker;
  }
  static std::string progress_file(const ProcessSpec& spec) {
    return (std::filesystem::path(spec.log_file).parent_path() / fmt::format("workerprogress.{}", spec.rank)).string();
  }

  // PS: a worker that failed starts again alone, within --ps_worker_restarts, while the servers
  // keep their tables and the other workers go on (worker_restart_policy.h). False when it does not.
  bool restart_in_place(size_t index) {
    Slot& slot = slots_[index];
    if (!keeps_progress(*slot.spec)) return false;
    const int status = *slot.status;
    const bool servers_ended = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) {
      return s.spec->role == Role::kServer && s.status;
    });
    const WorkerRestartVerdict verdict = judge_worker_failure(
        fmt::format("worker {} (local {}, pid {})", slot.spec->rank, slot.spec->local_index, slot.child->pid()), status,
        slot.restarts_in_place, options_.ps_worker_restarts, worker_restarts_, servers_ended);
    if (!verdict.restart) {
      log_.error(verdict.line);
      return false;
    }
    log_.warning(verdict.line);
    ++slot.restarts_in_place;
    ++worker_restarts_;
    ProcessState& state = job_state_->process(index);
    state.state = "restarting";
    state.restarts_in_place = slot.restarts_in_place;
    job_state_->set_worker_restarts(worker_restarts_);
    job_state_->save();
    slot.child->signal_group(SIGKILL);  // whatever it left running in its group
    slot.status.reset();  // the job goes on while it restarts
    // Not from within this exit's handler, which belongs to the child being replaced.
    boost::asio::post(io_, [this, index, status] {
      Slot& slot = slots_[index];
      if (stopping_ || finishing_) {  // the job ended meanwhile: the worker stays as it ended
        slot.status = status;
        if (all_exited()) io_.stop();
        return;
      }
      if (std::FILE* log = std::fopen(slot.spec->log_file.c_str(), "ae")) {
        fmt::print(log, "---- paddle-launch: restart {} of this worker in place, after {} ----\n",
                   slot.restarts_in_place, describe_wait_status(status));
        std::fclose(log);
      }
      if (start_process(index, ChildProcess::Log::kAppend)) job_state_->save();
      if (all_exited()) io_.stop();
    });
    return true;
  }

  void on_exit(size_t index, int status) {
    Slot& slot = slots_[index];
    slot.status = status;
    slot.exit_order = exits_++;
    stop_policy_.process_exited();
    ProcessState& state = job_state_->process(index);
    state.state = succeeded(status) ? "succeeded"
                  : WIFSIGNALED(status) && WTERMSIG(status) == slot.signal_sent ? "stopped"
                                                                              : "failed";
    state.ended = describe_wait_status(status);
    job_state_->save();
    if (!stopping_ && !finishing_ && !succeeded(status)) {
      if (!restart_in_place(index)) on_failure(index);
    } else if (!stopping_ && !finishing_ && slot.spec->role == Role::kWorker && all_workers_done()) {
      peers_.workers_done(attempt_);
      finish_servers_when_job_workers_done();
    } else if (!stopping_ && finishing_ == Role::kHeterWorker && count_running(Role::kHeterWorker) == 0) {
      log_.info("all heter_worker are killed");
      finish_next_role();
    }
    if (all_exited()) {
      if (finishing_ && !stopping_ && count_local(Role::kServer) > 0) log_.info("all parameter server are killed");
      io_.stop();
    }
  }

  void on_failure(size_t index) {
    failed_ = index;
    const Slot& s = slots_[index];
    log_.error(fmt::format("ABORT!!! Out of all {} {}s, the {} process with rank=[{}] was aborted ({}). Please check its log.",
                           count_role(s.spec->role), role_name(s.spec->role), role_name(s.spec->role), s.spec->rank,
                           describe_wait_status(*s.status)));
    stopping_ = true;
    stop(std::nullopt);
    JobFailure failure = this_node(fmt::format("{} {} (local {}) ended with {}", role_name(s.spec->role), s.spec->rank,
                                               s.spec->local_index, describe_wait_status(*s.status)),
                                   shell_exit_status(*s.status));
    failure.cause = WIFSIGNALED(*s.status) ? JobFailure::Cause::kProcessSignalled : JobFailure::Cause::kProcessFailed;
    failure.log_file = s.spec->log_file;
    failure.tail = last_lines(s.spec->log_file, 10);
    if (auto account = RootCause::read(s.spec->error_file))
      failure.own_account = fmt::format("{} says ({}): {}", role_name(s.spec->role), s.spec->error_file,
                                        account->describe());
    root_ = peers_.report(attempt_, failure);
  }

  JobFailure this_node(std::string what, int exit_status) const {
    JobFailure f;
    f.node_rank = plan_->node_rank;
    f.ip = plan_->node_ip;
    f.hostname = host_name();
    f.what = std::move(what);
    f.exit_status = exit_status;
    return f;
  }

  // PS: the servers (and a ps-heter job's heter workers) serve until every worker of the job, on
  // every node, has exited 0.
  void finish_servers_when_job_workers_done() {
    if (stopping_ || finishing_) return;
    if (peers_.job_workers_done(attempt_)) {
      log_.info(plan_->heter_endpoints.empty() ? "all workers exit, going to finish parameter server"
                                               : "all workers exit, going to finish parameter server and heter_worker.");
      finish_next_role();
      return;
    }
    workers_timer_.expires_after(std::chrono::milliseconds(250));
    workers_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) finish_servers_when_job_workers_done();
    });
  }

  // After the workers, Paddle's order: the heter workers, then the servers, which a heter worker may
  // still be talking to; each role is stopped once the one before it has exited.
  void finish_next_role() {
    if (!finishing_ && count_running(Role::kHeterWorker) > 0) {
      finishing_ = Role::kHeterWorker;
      stop(Role::kHeterWorker);
      return;
    }
    finishing_ = Role::kServer;
    stop(Role::kServer);
  }

  // A failure on another node stops this node's processes too.
  void watch_peers() {
    peer_timer_.expires_after(std::chrono::milliseconds(250));
    peer_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      if (!stopping_ && !finishing_) {
        if (auto failure = peers_.failure_elsewhere()) {
          root_ = failure;
          log_.error(fmt::format("the job failed on another node: {}; stopping this node's processes", failure->describe()));
          stopping_ = true;
          stop(std::nullopt);
        }
      }
      watch_peers();
    });
  }

  // Hang detection (hang_watch.h): each process's signs of life every second. A hang found here
  // is judged here in a one-node job; in a multi-node job its findings go to the launcher that
  // judges, and the job's verdict, naming the culprit wherever it runs, comes back to every node
  // (cluster/hang_exchange.h); findings are withdrawn once their processes move again.
  // Stragglers (straggler_watch.h) from the same reading of the pages.
  void watch_progress() {
    const bool hangs = !options_.hang_timeout || options_.hang_timeout->count() > 0;
    if (!hangs && options_.straggler_factor <= 0) return;
    if (hangs && !hang_watch_) {
      std::vector<bool> servers;
      for (const auto& s : slots_) servers.push_back(s.spec->role == Role::kServer);
      hang_watch_.emplace(options_.hang_timeout, std::move(servers), HangWatch::Clock::now());
    }
    if (options_.straggler_factor > 0 && !straggler_watch_) straggler_watch_.emplace(slots_.size());
    hang_timer_.expires_after(std::chrono::seconds(1));
    hang_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_ || finishing_) return;
      std::vector<std::optional<ProcessSigns>> signs;
      for (const auto& s : slots_)
        signs.push_back(s.running() ? read_process_signs(s.child->pid(), s.spec->log_file, s.spec->progress_page)
                                    : std::nullopt);
      const auto now = HangWatch::Clock::now();
      if (hang_watch_) {
        if (last_culprit_ && hang_watch_->going(*last_culprit_, now, HangWatch::kQuietNow)) last_culprit_.reset();
        if (auto hang = hang_watch_->observe(now, signs)) on_local_hang(*hang, signs, now);
        follow_job_hang();
        if (!hang_watch_->any_covered()) moving_again();
      }
      if (straggler_watch_) watch_stragglers(signs);
      if (peers_.spans_nodes())  // where this launcher judges, the other nodes' stragglers
        for (const StragglerNews& news : peers_.straggler_news()) say_straggler(news);
      watch_progress();
    });
  }

  void on_local_hang(const Hang& hang, const std::vector<std::optional<ProcessSigns>>& signs, HangWatch::Clock::time_point now) {
    const std::vector<double> quiet = hang_watch_->quiet_seconds(now);
    const int64_t now_ns = common::monotonic_ns();
    std::vector<HungProcess> hung;
    std::vector<ProcessFinding> findings;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (!signs[i]) continue;
      const ProcessSpec& spec = *slots_[i].spec;
      ProcessFinding f = identity_of(i);
      f.state = signs[i]->state;
      if (f.state == 'S' || f.state == 'D') f.wait = kernel_wait_channel(f.pid);
      f.quiet = quiet[i];
      f.going = hang_watch_->going(i, now, hang.timeout);
      if (const auto& page = signs[i]->page)
        f.page = PageFinding{page->phase, page->collective_label(), page->collectives, page->collective_bytes,
                             page->seconds_in_phase(now_ns), page->steps};
      hung.push_back({&spec, f, signs[i]->page ? signs[i]->page->describe(now_ns) : ""});
      findings.push_back(f);
    }
    const double timeout = std::chrono::duration<double>(hang.timeout).count();
    const JobHangVerdict verdict = judge_hang(findings);
    // The processes that waited with the last verdict's culprit ran on into it (a worker at its
    // pass's end): the same hang, already said.
    const auto culprit_slot = verdict.culprit ? std::optional<size_t>(slot_of(findings[*verdict.culprit].pid)) : std::nullopt;
    if (culprit_slot && culprit_slot == last_culprit_) return;
    last_culprit_ = culprit_slot;
    std::vector<std::string> files;
    for (const HungProcess& p : hung) files.push_back(hang_report_file(*p.spec, plan_->log_dir));
    std::vector<std::string> logs;
    for (const HungProcess& p : hung) logs.push_back(p.spec->log_file);
    // Programs without a page: who went quiet first is a guess (a rank that printed its last line
    // goes quiet after those that wait for it), so their stacks have the say where they are taken.
    const bool without_pages = std::ranges::any_of(findings, [](const ProcessFinding& f) { return !f.page && !f.going; });
    const bool by_stacks = without_pages && (!verdict.culprit || verdict.by_timing);
    write_reports_aside(std::move(hung), by_stacks ? JobHangVerdict{} : verdict);
    if (!by_stacks) {
      conclude_local_hang(std::move(findings), verdict, timeout, logs);
      return;
    }
    judge_by_stacks(std::move(findings), std::move(files), std::move(logs), timeout,
                    HangWatch::Clock::now() + kStackTimeout + std::chrono::seconds(1));
  }

  // Slot `i`'s process as a finding names it: role, rank, node, local index and pid.
  ProcessFinding identity_of(size_t i) const {
    const ProcessSpec& spec = *slots_[i].spec;
    ProcessFinding f;
    f.role = std::string(role_name(spec.role));
    f.rank = spec.rank;
    f.node = plan_->node_rank;
    f.local = spec.local_index;
    f.pid = slots_[i].child->pid();
    return f;
  }

  void judge_by_stacks(std::vector<ProcessFinding> findings, std::vector<std::string> files, std::vector<std::string> logs,
                       double timeout, HangWatch::Clock::time_point until) {
    if (!stopping_ && !reports_done() && HangWatch::Clock::now() < until) {
      hang_stacks_timer_.expires_after(std::chrono::milliseconds(100));
      hang_stacks_timer_.async_wait([this, findings = std::move(findings), files = std::move(files), logs = std::move(logs),
                                     timeout, until](const boost::system::error_code& ec) mutable {
        if (!ec) judge_by_stacks(std::move(findings), std::move(files), std::move(logs), timeout, until);
      });
      return;
    }
    if (stopping_) return;
    for (size_t i = 0; i < findings.size(); ++i) {
      const StackClues clues = read_stack_clues(files[i]);
      findings[i].stack_in_collective = clues.in_collective;
      findings[i].python_frame = clues.python_frame;
    }
    const JobHangVerdict verdict = judge_hang(findings);
    if (verdict.culprit) {
      last_culprit_ = slot_of(findings[*verdict.culprit].pid);
      mark_culprit_report(files[*verdict.culprit], findings[*verdict.culprit], verdict.why);
    }
    conclude_local_hang(std::move(findings), verdict, timeout, logs);
  }

  // A hang found here, judged: said and acted on in a one-node job; sent to the judge otherwise.
  void conclude_local_hang(std::vector<ProcessFinding> findings, const JobHangVerdict& verdict, double timeout,
                           const std::vector<std::string>& logs) {
    if (!peers_.spans_nodes()) {
      announce_hang(hang_verdict_line(findings, verdict, timeout, plan_->log_dir, plan_->node_count));
      act_on_hang(verdict.culprit ? fmt::format("{} made no progress for {:.0f} s: {}",
                                                findings[*verdict.culprit].who(false), timeout, verdict.why)
                                  : fmt::format("no process made progress for {:.0f} s", timeout),
                  verdict.culprit ? logs[*verdict.culprit] : "");
      return;
    }
    nlohmann::json findings_json = nlohmann::json::array();
    for (const ProcessFinding& f : findings) findings_json.push_back(to_json(f));
    try {
      peers_.share_hang(attempt_, nlohmann::json{{"timeout", timeout}, {"log_dir", plan_->log_dir},
                                                 {"findings", std::move(findings_json)}}.dump());
      hang_shared_ = true;
    } catch (const common::PeerError& e) {
      log_.warning(fmt::format("this node's hang findings did not reach the master ({}); this node's own verdict: {}",
                               e.what(), hang_verdict_line(findings, verdict, timeout, plan_->log_dir, plan_->node_count)));
    }
  }

  void watch_stragglers(const std::vector<std::optional<ProcessSigns>>& signs) {
    std::vector<std::optional<common::ProgressReading>> pages;
    for (const auto& s : signs) pages.push_back(s ? s->page : std::nullopt);
    const auto changes = straggler_watch_->observe(pages);
    for (const StragglerChange& c : changes) {
      const std::string who = identity_of(c.process).who(plan_->node_count > 1);
      const StragglerNews news{
          c.flagged ? fmt::format("straggler: {} is {:.1f}x the job's median busy time per step, since step {} ({:.1f} ms "
                                  "in its last step); the other ranks wait for it",
                                  who, c.ratio, c.since, pages[c.process]->busy_seconds * 1000)
                    : fmt::format("straggler: {} has recovered: {:.1f}x the job's median busy time per step", who, c.ratio),
          c.flagged};
      say_straggler(news);
      if (peers_.spans_nodes()) {
        try {
          peers_.share_straggler(attempt_, news);
        } catch (const common::PeerError& e) {
          log_.warning(fmt::format("this node's straggler line did not reach the master: {}", e.what()));
        }
      }
      job_state_->process(c.process).straggler = c.flagged ? std::optional<double>(c.ratio) : std::nullopt;
    }
    if (!changes.empty()) job_state_->save();
  }

  void say_straggler(const StragglerNews& news) {
    if (news.flagged) log_.warning(news.line);
    else log_.info(news.line);
  }

  // The job's verdict, once the judge gives one (every node shows it, and acts on it).
  void follow_job_hang() {
    if (!peers_.spans_nodes()) return;
    const auto verdict = peers_.job_hang();
    if (!verdict || verdict->value("number", 0) <= shown_verdicts_) return;
    shown_verdicts_ = verdict->value("number", 0);
    announce_hang(verdict->value("line", ""));
    act_on_hang(verdict->value("summary", ""));
  }

  // Every process moves again: the job's page says so, and the judge forgets this node's findings.
  void moving_again() {
    if (!job_state_->hang().empty()) {
      job_state_->set_hang("");
      job_state_->save();
    }
    if (!hang_shared_) return;
    hang_shared_ = false;
    try {
      peers_.share_hang(attempt_, nlohmann::json{{"findings", nlohmann::json::array()}}.dump());
    } catch (const common::PeerError&) {
      // The judge keeps stale findings of a node that moved; the next hang's replace them.
    }
  }

  void announce_hang(const std::string& line) {
    log_.error(line);
    job_state_->set_hang(line);
    job_state_->save();
  }

  // --on_hang: report (done), stop (exit 123), or a failure for the restart policy; the stop
  // waits for the stacks being taken (up to their timeout), which a stopped process no longer has.
  // `culprit_log`: the culprit's log, when it runs here, for the root cause's tail.
  void act_on_hang(const std::string& summary, const std::string& culprit_log = "") {
    if (options_.on_hang == SupervisorOptions::OnHang::kReport || stopping_ || hang_stop_pending_) return;
    hang_stop_pending_ = true;
    stop_after_reports(summary, culprit_log, HangWatch::Clock::now() + kStackTimeout + std::chrono::seconds(1));
  }

  void stop_after_reports(const std::string& summary, const std::string& culprit_log, HangWatch::Clock::time_point until) {
    if (!stopping_ && !reports_done() && HangWatch::Clock::now() < until) {
      hang_stop_timer_.expires_after(std::chrono::milliseconds(100));
      hang_stop_timer_.async_wait([this, summary, culprit_log, until](const boost::system::error_code& ec) {
        if (!ec) stop_after_reports(summary, culprit_log, until);
      });
      return;
    }
    hang_stop_pending_ = false;
    if (stopping_) return;  // something else stopped the job meanwhile
    stopping_ = true;
    JobFailure failure = this_node("hang: " + summary, common::kExitHung);
    failure.cause = JobFailure::Cause::kProcessHung;
    if (!culprit_log.empty()) {
      failure.log_file = culprit_log;
      failure.tail = last_lines(culprit_log, 10);
    }
    // Reported before the stop, so that the judge hears of the hang before the failures the stop
    // causes on other nodes.
    root_ = peers_.report(attempt_, failure);
    stop(std::nullopt);
  }

  size_t slot_of(int pid) const {
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].child && slots_[i].child->pid() == pid) return i;
    return slots_.size();
  }

  // Each process's file with its stacks (hang_report.h): gdb takes seconds per process, so on
  // threads of their own, one per process, while this thread goes on supervising.
  void write_reports_aside(std::vector<HungProcess> hung, const JobHangVerdict& verdict) {
    if (!reports_done()) return;  // the last hang's are still being written
    std::vector<std::string> search_path = path_directories(env_);
    if (!plan_->command.empty()) search_path.push_back(std::filesystem::path(plan_->command.front()).parent_path().string());
    reports_.clear();
    for (size_t i = 0; i < hung.size(); ++i)
      reports_.push_back(std::async(std::launch::async, [p = hung[i], culprit = verdict.culprit == i, why = verdict.why,
                                                         dir = plan_->log_dir, search_path] {
        write_hang_reports({p}, culprit ? std::optional<size_t>(0) : std::nullopt, why, dir, search_path, kStackTimeout);
      }));
  }

  bool reports_done() const {
    return std::ranges::all_of(reports_, [](const std::future<void>& f) {
      return !f.valid() || f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
  }

  // SIGTERM to every running process (of `role`, if given), SIGKILL to those left after the
  // grace period (stop_policy.h).
  void stop(std::optional<Role> role) {
    StopPolicy::Processes part, rest;
    for (auto& s : slots_) (!role || s.spec->role == *role ? part : rest).push_back(&s);
    if (role) stop_policy_.stop_part(part, rest);
    else stop_policy_.stop_all(part);
  }

  void on_signal(int sig) {
    const std::string name = stop_signal_name(sig);
    if (!interrupted_by_) {
      interrupted_by_ = sig;
      log_.warning(fmt::format("received {}: stopping all processes (send it again to kill them at once)", name));
      stopping_ = true;
      stop(std::nullopt);
      JobFailure failure = this_node(fmt::format("paddle-launch received {}", name), 128 + sig);
      failure.cause = JobFailure::Cause::kLauncherSignalled;
      if (plan_ != nullptr) peers_.report(attempt_, failure);
    } else {
      StopPolicy::Processes all;
      for (auto& s : slots_) all.push_back(&s);
      stop_policy_.kill_all(all, "second signal");
    }
  }

  // A failed attempt's logs move aside (LOG.attemptN), unless the logs go on (--log_overwrite=False),
  // where the next attempt writes on after them, as Paddle's launcher does.
  void archive_logs(int attempt) {
    for (const auto& spec : plan_->processes) {
      std::error_code ec;
      if (!options_.append_logs) std::filesystem::rename(spec.log_file, fmt::format("{}.attempt{}", spec.log_file, attempt), ec);
      std::filesystem::rename(spec.error_file, fmt::format("{}.attempt{}", spec.error_file, attempt), ec);
    }
  }

  bool all_exited() const {
    for (const auto& s : slots_)
      if (s.child && !s.status) return false;
    return true;
  }

  bool all_workers_done() const {
    for (const auto& s : slots_)
      if (s.spec->role == Role::kWorker && (!s.status || !succeeded(*s.status))) return false;
    return true;
  }

  int count_local(Role role) const {
    int n = 0;
    for (const auto& s : slots_) n += s.spec->role == role;
    return n;
  }

  int count_running(Role role) const {
    int n = 0;
    for (const auto& s : slots_) n += s.spec->role == role && s.child && !s.status;
    return n;
  }

  int count_role(Role role) const {
    if (role == Role::kServer) return static_cast<int>(plan_->server_endpoints.size());
    if (role == Role::kHeterWorker) return static_cast<int>(plan_->heter_endpoints.size());
    return plan_->world_size();
  }

  JobPeers& peers_;
  const LaunchPlan* plan_ = nullptr;
  const EnvMap& env_;
  const SupervisorOptions& options_;
  LaunchLog& log_;
  boost::asio::io_context io_;
  // io_ runs until on_exit stops it, never for want of work: a signal posted to it while nothing
  // else is pending must still be run.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> keep_running_ = boost::asio::make_work_guard(io_);
  boost::asio::steady_timer grace_timer_;
  TimerStopClock grace_clock_;
  StopPolicy stop_policy_;
  boost::asio::steady_timer peer_timer_;
  boost::asio::steady_timer workers_timer_;
  boost::asio::steady_timer hang_timer_;
  boost::asio::steady_timer hang_stop_timer_;
  boost::asio::steady_timer hang_stacks_timer_;  // a verdict waiting for the stacks
  std::optional<HangWatch> hang_watch_;  // this attempt's
  std::optional<StragglerWatch> straggler_watch_;  // this attempt's
  static constexpr auto kStackTimeout = std::chrono::seconds(10);
  bool hang_shared_ = false;  // this node's findings are with the judge
  bool hang_stop_pending_ = false;  // --on_hang=stop or restart, once the stacks are taken
  int shown_verdicts_ = 0;  // the judge's verdicts shown so far
  std::optional<size_t> last_culprit_;  // the slot this node's last verdict named, until it moves
  std::vector<std::future<void>> reports_;  // the hang's files being written
  std::vector<Slot> slots_;
  std::unique_ptr<ConsoleEcho> echo_;
  std::optional<JobState> job_state_;  // LOG_DIR/job.json
  std::optional<size_t> failed_;  // the local process that failed
  std::optional<JobFailure> root_;  // why this generation of the job ended
  int attempt_ = 0;
  int worker_restarts_ = 0;  // PS workers restarted in place, over the whole run
  int exits_ = 0;  // processes ended so far this attempt, for their exit_order
  int interrupted_by_ = 0;
  bool stopping_ = false;
  // Where the stop at the job's end is, once every worker of the job has exited 0: the heter
  // workers, then the servers (finish_next_role).
  std::optional<Role> finishing_;
  // Last: it ends, and with it any call from the signals' thread, before what its handler posts to.
  StopSignals::Subscription signal_subscription_;
};

}  // namespace

int supervise(JobPeers& peers, const EnvMap& launcher_env, const SupervisorOptions& options, LaunchLog& log) {
  Job job(peers, launcher_env, options, log);
  return job.run();
}

}  // namespace paddle::launcher
