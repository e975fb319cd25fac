#!/usr/bin/env python3
"""End-to-end tests of the production sparse tables (ps/table/sparse_table.h): 64-bit feature signs
from Criteo-format data with millions of distinct values, each its own row on 2 servers; the
AUC of the job summed over every worker's share; and online training day by day and pass by
pass, with deltas, bases, shrinks and a resume after a kill that ends in the same table as a run
that was never killed. Loopback only."""

import glob
import json
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, finish, main, scratch, start, wait_for  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../configs/wide_deep.json")
SMALL = ["--set", "ctr.hidden=[32,16]", "--set", "ctr.embedding_dim=5"]
SLOTS = 26


def write_criteo(path, lines, seed, distinct=False, vocabulary_seed=1):
    """Criteo-format lines with a learnable click signal. With `distinct`, every categorical value
    of every line is new (lines x 26 distinct values); else each slot draws from a fixed vocabulary
    (the same for every file of one vocabulary_seed), so days share features, plus a tail of
    values seen once in the last slots."""
    rng = random.Random(seed)
    vocab_rng = random.Random(vocabulary_seed)
    vocab = [[f"{vocab_rng.getrandbits(32):08x}" for _ in range(40 + 8 * s)] for s in range(SLOTS)]
    weight = [{v: vocab_rng.gauss(0, 0.8) for v in slot} for slot in vocab]
    out = []
    for i in range(lines):
        dense = [rng.randint(0, 20)] + [rng.randint(0, 50) for _ in range(12)]
        z = -1.0 + 2.0 * dense[0] / 20.0
        if distinct:
            cats = [f"{seed:x}{i:07x}{s:02x}" for s in range(SLOTS)]
        else:
            # The last slots have a long tail: values seen once, which shrink deletes.
            cats = [f"r{rng.getrandbits(48):012x}" if s >= 20 and rng.random() < 0.3 else rng.choice(vocab[s])
                    for s in range(SLOTS)]
            z += sum(weight[s][c] for s, c in enumerate(cats[:6]))
        label = 1 if rng.random() < 1 / (1 + 2.718281828 ** -z) else 0
        out.append("\t".join([str(label)] + [str(d) for d in dense] + cats))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def metrics(workdir):
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        return json.load(f)


def manifests(save_dir):
    found = []
    for name in sorted(glob.glob(os.path.join(save_dir, "ps-server-*.json"))):
        with open(name) as f:
            found.append(json.load(f))
    return found


def test_five_million_distinct_features_each_get_their_own_row_and_the_auc_is_the_jobs():
    workdir = scratch()
    lines, test_fraction, global_batch = 200534, 0.04, 2 * 2048
    data = os.path.join(workdir, "data", "criteo.txt")
    write_criteo(data, lines, seed=11, distinct=True)
    train_lines = int(lines * (1 - test_fraction))
    distinct = train_lines // global_batch * global_batch * SLOTS  # a pass trains whole global batches
    check(distinct > 5_000_000, f"{distinct} distinct values trained")
    save = os.path.join(workdir, "model")
    proc, _ = start(["--server_num=2", "--worker_num=2"],
                    ["--config", CONFIG, "--set", f"data_dir={data}", "--set", f"ctr.test_fraction={test_fraction}",
                     "--set", "batch_size=2048", "--set", "log_every=1000", "--set", "ps.accessor=ctr",
                     "--set", "ps.sparse_rule.type=sgd", "--set", f"ps.save_dir={save}", *SMALL],
                    workdir=workdir, script=TRAIN)
    r = finish(proc, workdir, time.monotonic(), timeout=240)
    check(r.returncode == 0, "exit 0", r)
    rows = [0, 0]  # embedding, wide
    for m in manifests(save):
        for table, t in enumerate(m["sparse"]):
            rows[table] += t["rows"]
    print(f"{distinct} distinct train features; rows on the 2 servers (embedding, wide): {rows}")
    check(rows == [distinct, distinct],
          f"every distinct feature sign has its own row, no collisions: {rows} for {distinct}")
    m = metrics(workdir)
    test_samples = lines - train_lines
    check(m["test_samples"] == test_samples, f"the AUC counts every worker's share: {m['test_samples']} of {test_samples}")
    check(0 <= m["test_auc"] <= 1, f"AUC {m['test_auc']}")


def online_data(workdir, passes=6):
    """The first `passes` of 2 days x 3 passes of 1500 lines each, every pass its own file, one vocabulary."""
    for i in range(passes):
        day, p = ("20261101", "20261102")[i // 3], i % 3 + 1
        write_criteo(os.path.join(workdir, "data", day, f"{p}.txt"), 1500, seed=100 + 10 * (i // 3) + p)


def online_args(workdir):
    return ["--config", CONFIG, "--set", "batch_size=64", "--set", "log_every=5", "--set", "ps.accessor=ctr",
            "--set", "ps.ctr.base_threshold=0", "--set", "ps.ctr.delta_threshold=0",
            "--set", "ps.ctr.delete_threshold=1.5", "--set", f"ps.save_dir={os.path.join(workdir, 'model')}",
            "--set", 'ps.online.days=["20261101","20261102"]', "--set", "ps.online.passes_per_day=3",
            "--set", f"ps.online.data_pattern={os.path.join(workdir, 'data', '{day}', '{pass}.txt')}",
            "--set", "ps.online.wait_seconds=60", *SMALL]


def sparse_rows(save_dir):
    """{(server, sparse table id): {key: row bytes}} and {server: dense bytes} of a save's .bin files
    (ps/table/checkpoint.h): the dense tables (i64 steps, u64 n, n floats, u64 m, m floats of state),
    then per sparse table u64 rows, u64 width and each row's u64 key and width floats, then a CRC."""
    tables, dense = {}, {}
    for manifest in manifests(save_dir):
        server = manifest["server_index"]
        with open(os.path.join(save_dir, f"ps-server-{server}.bin"), "rb") as f:
            blob = f.read()[:-4]
        at = 0
        for _ in manifest["dense"]:
            at += 8
            for _ in range(2):
                n = struct.unpack_from("<Q", blob, at)[0]
                at += 8 + 4 * n
        dense[server] = blob[:at]
        for table, t in enumerate(manifest["sparse"]):
            count, width = struct.unpack_from("<QQ", blob, at)
            at += 16
            rows = {}
            for _ in range(count):
                key = struct.unpack_from("<Q", blob, at)[0]
                rows[key] = blob[at + 8:at + 8 + 4 * width]
                at += 8 + 4 * width
            check(count == t["rows"], f"{save_dir}: server {server} table {table}: {count} rows, manifest {t['rows']}")
            tables[(server, table)] = rows
        check(at == len(blob), f"{save_dir}: server {server}: {len(blob) - at} bytes after the tables")
    return tables, dense


def donefile(workdir):
    path = os.path.join(workdir, "model", "donefile.txt")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def test_online_days_and_passes_save_deltas_and_bases_shrink_and_resume_after_a_kill_to_the_same_table():
    whole, killed = scratch(), scratch()
    online_data(whole)
    online_data(killed, passes=2)  # the rest arrives after the kill
    job = ["--server_num=2", "--worker_num=2"]

    proc, _ = start(job, online_args(whole), workdir=whole, script=TRAIN)
    r = finish(proc, whole, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the uninterrupted run exits 0", r)
    saves = donefile(whole)
    check([s[2] for s in saves].count("delta") == 6 and [s[2] for s in saves].count("base") == 2,
          f"6 deltas and 2 bases: {saves}")
    for day in ("20261101", "20261102"):
        for p in ("1", "2", "3", "base"):
            check(len(manifests(os.path.join(whole, "model", day, p))) == 2, f"{day}/{p}: a manifest per server")
    log = r.read("log", "workerlog.0")
    shrinks = [line for line in log.splitlines() if line.startswith("shrink (end of day")]
    check(len(shrinks) == 4, f"2 shrinks, on each of 2 servers:\n{shrinks}")
    for line in shrinks:
        before, after = (int(x) for x in line.split(" embedding ")[1].split(" rows")[0].split(" -> "))
        check(after < before, f"rows fall: {line}")
    check(metrics(whole)["test_samples"] > 0, "each pass is evaluated")

    # The same run, killed while it waits for day 1's third pass, then started again with all the data.
    proc, _ = start(job, online_args(killed), workdir=killed, script=TRAIN)
    log_of = os.path.join(killed, "log", "workerlog.0")
    wait_for(lambda: proc.poll() is not None or (os.path.exists(log_of) and
             "online: waiting for the data of day 20261101 pass 3" in open(log_of).read()), 120,
             "the run to wait for day 1's third pass")
    check(proc.poll() is None, "the run to kill is still running")
    check(len(donefile(killed)) == 2, f"2 saves before the kill: {donefile(killed)}")
    os.kill(proc.pid, signal.SIGTERM)
    finish(proc, killed, time.monotonic(), timeout=60)
    online_data(killed)
    proc, _ = start(job, online_args(killed), workdir=killed, script=TRAIN)
    r2 = finish(proc, killed, time.monotonic(), timeout=240)
    check(r2.returncode == 0, "the resumed run exits 0", r2)
    log2 = r2.read("log", "workerlog.0")
    check("online: resuming at day 20261101 pass 3 (2 of 6 passes saved)" in log2, f"resumed at the first pass not saved\n{log2[:2000]}")
    a_tables, a_dense = sparse_rows(os.path.join(whole, "model", "20261102", "base"))
    b_tables, b_dense = sparse_rows(os.path.join(killed, "model", "20261102", "base"))
    check(a_tables.keys() == b_tables.keys(), "the same tables")
    for name in a_tables:
        check(a_tables[name] == b_tables[name], f"{name}: the same rows, row for row ({len(a_tables[name])} rows)")
    check(a_dense == b_dense, "the same dense tables")
    print("resumed at day 1 pass 3; final tables equal: "
          + ", ".join(f"table {k[1]} on server {k[0]}: {len(v)} rows" for k, v in sorted(a_tables.items())))


def test_an_online_run_started_again_with_every_pass_saved_reports_the_whole_runs_figures():
    """Found by the chaos soak: a job stopped after its last save and started again trained no
    pass and reported no AUC and a history of no passes."""
    workdir = scratch()
    online_data(workdir, passes=6)
    args = online_args(workdir) + ["--set", 'ps.online.days=["20261101"]']
    proc, _ = start(["--server_num=2", "--worker_num=2"], args, workdir=workdir, script=TRAIN)
    r = finish(proc, workdir, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the run exits 0", r)
    whole = metrics(workdir)
    proc, _ = start(["--server_num=2", "--worker_num=2"], args, workdir=workdir, script=TRAIN)
    r = finish(proc, workdir, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the run started again exits 0", r)
    check("online: every pass of 1 day(s) is saved already" in r.read("log", "workerlog.0"), "nothing left to train", r)
    again = metrics(workdir)
    check(again["test_auc"] == whole["test_auc"] and again["train_loss"] == whole["train_loss"],
          f"the same AUC and train loss: {whole['test_auc']}, {whole['train_loss']} vs {again['test_auc']}, {again['train_loss']}")
    strip = lambda h: [{k: v for k, v in e.items() if k not in ("seconds", "samples_per_sec")} for e in h]  # noqa: E731
    check(len(whole["history"]) == 3 and strip(again["history"]) == strip(whole["history"]),
          f"the same history of 3 passes:\n{whole['history']}\n{again['history']}")


def test_a_damaged_save_is_refused_by_its_checksum_and_its_passes_run_again_to_the_same_table():
    """A base truncated while the job is down: every worker refuses it before the servers load
    anything, the day's last pass runs again on the deltas before it, and the tables end as an
    undisturbed run's."""
    whole, damaged = scratch(), scratch()
    for workdir in (whole, damaged):
        online_data(workdir, passes=3)
    job = ["--server_num=2", "--worker_num=2"]
    for workdir in (whole, damaged):
        proc, _ = start(job, online_args(workdir) + ["--set", 'ps.online.days=["20261101"]'], workdir=workdir, script=TRAIN)
        r = finish(proc, workdir, time.monotonic(), timeout=240)
        check(r.returncode == 0, "the run exits 0", r)
    shard = os.path.join(damaged, "model", "20261101", "base", "ps-server-1.bin")
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) // 2)
    proc, _ = start(job, online_args(damaged) + ["--set", 'ps.online.days=["20261101"]'], workdir=damaged, script=TRAIN)
    r = finish(proc, damaged, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the run started again exits 0", r)
    log = r.read("log", "workerlog.0")
    check(f"online: refusing a damaged save: checkpoint {shard}: checksum mismatch" in log, "the base is refused by name", r)
    check("online: resuming at day 20261101 pass 3 (2 of 3 passes saved)" in log, f"pass 3 runs again\n{log[:3000]}")
    check("loading the base" not in log, "nothing of the damaged save is loaded")
    a_tables, a_dense = sparse_rows(os.path.join(whole, "model", "20261101", "base"))
    b_tables, b_dense = sparse_rows(os.path.join(damaged, "model", "20261101", "base"))
    check(a_tables == b_tables and a_dense == b_dense, "the day's new base equals the undisturbed run's, row for row")


def test_each_server_reports_its_tables_memory_on_the_job_page():
    workdir = scratch()
    online_data(workdir)
    proc, _ = start(["--server_num=2", "--worker_num=2", "--dashboard", "--dashboard_linger=20"], online_args(workdir),
                    workdir=workdir, script=TRAIN)
    try:
        launch_log = os.path.join(workdir, "log", "launch.log")
        url = wait_for(lambda: os.path.exists(launch_log) and
                       re.findall(r"dashboard: (http://127\.0\.0\.1:\d+/)", open(launch_log).read()), 30,
                       "the launcher to print the job page's URL")[0]

        def page():
            with urllib.request.urlopen(url + "api/job", timeout=5) as r:
                return json.load(r)
        def state():  # the page has no job until the launcher writes job.json
            return (page().get("job") or {}).get("state")
        wait_for(lambda: state() in ("succeeded", "failed"), 120, "the job to end")
        check(state() == "succeeded", f"the job succeeded, not {state()}")
        servers = [p for p in page()["processes"] if p["role"] == "server"]
        check(len(servers) == 2, f"two servers on the page: {[(p['role'], p['rank']) for p in servers]}")
        for p in servers:
            last = p["metrics"][-1] if p["metrics"] else {}
            tables = {t["table"]: t for t in last.get("tables", [])}
            check({"embedding", "wide", "deep"} <= set(tables), f"server {p['rank']}'s tables: {last}")
            e = tables["embedding"]
            check(e["rows"] > 1000 and e["value_bytes"] > 0 and e["index_bytes"] > 0, f"embedding memory: {e}")
        with urllib.request.urlopen(url, timeout=5) as r:
            check(b"function tables(" in r.read(), "the page draws the tables column")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_an_online_pass_without_its_data_fails_naming_the_path():
    workdir = scratch()
    args = online_args(workdir) + ["--set", "ps.online.wait_seconds=0"]
    r = subprocess.run([TRAIN, *args], cwd=workdir, capture_output=True, text=True, timeout=60)
    missing = os.path.join(workdir, "data", "20261101", "1.txt")
    check(r.returncode != 0, f"exit non-zero, not {r.returncode}")
    check(f"{missing}: the data of day 20261101 pass 1 (ps.online.data_pattern) is not there" in r.stderr,
          f"one line naming the path and the key:\n{r.stderr}")


def test_shrink_every_pass_of_a_plain_run():
    workdir = scratch()
    data = os.path.join(workdir, "data", "criteo.txt")
    write_criteo(data, 3000, seed=5)
    proc, _ = start(["--server_num=2", "--worker_num=2"],
                    ["--config", CONFIG, "--set", f"data_dir={data}", "--set", "batch_size=64", "--set", "epochs=2",
                     "--set", "ps.accessor=ctr", "--set", "ps.ctr.delete_threshold=1.5",
                     "--set", "ps.shrink_every_passes=1", *SMALL], workdir=workdir, script=TRAIN)
    r = finish(proc, workdir, time.monotonic(), timeout=120)
    check(r.returncode == 0, "exit 0", r)
    shrinks = [line for line in r.read("log", "workerlog.0").splitlines() if line.startswith("shrink (every 1 passes)")]
    check(len(shrinks) == 4, f"a shrink after each of 2 passes, on each of 2 servers:\n{shrinks}")
    for line in shrinks:
        before, after = (int(x) for x in line.split(" embedding ")[1].split(" rows")[0].split(" -> "))
        check(after < before, f"rows fall: {line}")


def test_every_mode_brings_each_shows_and_clicks_to_the_ctr_rows():
    workdir = scratch()
    data = os.path.join(workdir, "data", "criteo.txt")
    write_criteo(data, 3200, seed=9)  # 2560 train lines: 20 global batches of 2 x 64, none dropped
    with open(data) as f:
        labels = [int(line.split("\t", 1)[0]) for line in f][:2560]
    for mode in (["ps.mode=sync"], ["ps.mode=async", "ps.max_merge_var_num=3"], ["ps.mode=geo", "ps.k_steps=3"]):
        save = os.path.join(workdir, mode[0].split("=")[1])
        sets = [x for m in mode for x in ("--set", m)]
        proc, _ = start(["--server_num=2", "--worker_num=2"],
                        ["--config", CONFIG, "--set", f"data_dir={data}", "--set", "batch_size=64", "--set", "epochs=1",
                         "--set", "ps.accessor=ctr", "--set", f"ps.save_dir={save}", *sets, *SMALL],
                        workdir=scratch(), script=TRAIN)
        r = finish(proc, workdir, time.monotonic(), timeout=120)
        check(r.returncode == 0, f"{mode}: exit 0", r)
        tables, _ = sparse_rows(save)
        for table in (0, 1):
            shows = clicks = 0.0
            for (server, t), rows in tables.items():
                if t == table:
                    for row in rows.values():
                        show, click = struct.unpack_from("<ff", row, 0)
                        shows += show
                        clicks += click
            check((shows, clicks) == (2560.0 * SLOTS, float(sum(labels) * SLOTS)),
                  f"{mode[0]} table {table}: shows {shows}, clicks {clicks}: every (sample, slot) once, "
                  f"expected {2560 * SLOTS}, {sum(labels) * SLOTS}")


def server_lines(workdir, server):
    """[{table: entry}] of server `server`'s metrics lines (log/metrics.server.N.jsonl), in order."""
    with open(os.path.join(workdir, "log", f"metrics.server.{server}.jsonl")) as f:
        return [{t["table"]: t for t in json.loads(line)["tables"]} for line in f if line.strip()]


def test_an_online_run_with_a_tenth_of_its_rows_in_memory_gives_the_memory_runs_auc():
    in_memory, tiered = scratch(), scratch()
    job = ["--server_num=2", "--worker_num=2"]
    small_batches = ["--set", "batch_size=16"]  # 416 keys a batch: a tenth of a server's rows holds them
    online_data(in_memory)
    proc, _ = start(job, online_args(in_memory) + small_batches, workdir=in_memory, script=TRAIN)
    r = finish(proc, in_memory, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the memory run exits 0", r)
    # A tenth of the rows a server held at its peak, at the bytes a tiered row takes in memory: its
    # saved floats, its key, a last-use word and about 12 bytes of index (SparseTable::memory_row_bytes).
    peak = max(t["embedding"]["rows"] for s in (0, 1) for t in server_lines(in_memory, s))
    rows, _ = sparse_rows(os.path.join(in_memory, "model", "20261102", "base"))
    row_bytes = sum(len(next(iter(rows[(0, table)].values()))) + 24 for table in (0, 1))
    budget_mb = math.floor(peak / 10 * row_bytes / 2**20 * 1e6) / 1e6  # rounded down: never above a tenth

    online_data(tiered)
    ssd_dir = os.path.join(tiered, "ssd")
    proc, _ = start(job, online_args(tiered) + small_batches +
                    ["--set", "ps.storage=ssd", "--set", f"ps.memory_budget_mb={budget_mb:.6f}", "--set", f"ps.ssd_dir={ssd_dir}"],
                    workdir=tiered, script=TRAIN)
    r = finish(proc, tiered, time.monotonic(), timeout=240)
    check(r.returncode == 0, "the tiered run exits 0", r)
    a, b = metrics(in_memory)["test_auc"], metrics(tiered)["test_auc"]
    print(f"memory budget {budget_mb:.3f} MB per server, a tenth of the {peak} rows a server held at most; "
          f"AUC {a:.6f} in memory, {b:.6f} tiered")
    check(abs(a - b) <= 1e-3, f"the same AUC within 1e-3: {a} in memory, {b} tiered")
    for s in (0, 1):
        lines = server_lines(tiered, s)
        for name in ("embedding", "wide"):
            tiers = [line[name].get("tier") for line in lines]
            check(all(tiers), f"server {s}'s {name} reports its tier on every line: {lines[-1][name]}")
            check(max(t["memory_rows"] for t in tiers) <= peak // 10,
                  f"server {s}'s {name}: at most a tenth of {peak} rows in memory: {[t['memory_rows'] for t in tiers]}")
            check(max(t["disk_rows"] for t in tiers) > 2 * max(t["memory_rows"] for t in tiers),
                  f"server {s}'s {name}: most rows on disk at the peak: {tiers}")
            check(max(t["evictions_per_s"] for t in tiers) > 0 and max(t["disk_reads_per_s"] for t in tiers) > 0,
                  f"server {s}'s {name}: rows moved both ways: {tiers}")
            check(all(line[name]["rows"] == line[name]["tier"]["disk_rows"] + line[name]["tier"]["memory_rows"]
                      for line in lines), f"rows count both tiers: {lines[-1][name]}")
            check(os.path.exists(os.path.join(ssd_dir, f"server-{s}", name, "CURRENT")), f"server {s}'s {name} tier in {ssd_dir}")
    server_log = r.read("log", "serverlog.0")
    check(re.search(r"embedding rows \d+, values [\d.]+ MiB, index [\d.]+ MiB \(memory \d+ rows, disk \d+ rows", server_log),
          f"the server log's memory lines show both tiers:\n{server_log[-1500:]}")
    # The saves hold every row of both tiers: the last base has the memory run's rows, row for row.
    a_tables, a_dense = sparse_rows(os.path.join(in_memory, "model", "20261102", "base"))
    b_tables, b_dense = sparse_rows(os.path.join(tiered, "model", "20261102", "base"))
    for name in a_tables:
        check(a_tables[name] == b_tables[name], f"{name}: the same rows in both bases ({len(a_tables[name])} rows)")
    check(a_dense == b_dense, "the same dense tables")


def test_a_budget_below_one_batch_is_refused_before_anything_runs():
    workdir = scratch()
    online_data(workdir, passes=1)
    r = subprocess.run([TRAIN, *online_args(workdir), "--set", "ps.storage=ssd", "--set", "ps.memory_budget_mb=0.01"],
                       cwd=workdir, capture_output=True, text=True, timeout=60)
    check(r.returncode == 2, f"exit 2 (bad input), not {r.returncode}\n{r.stderr}")
    lines = [line for line in r.stderr.splitlines() if "ps.memory_budget_mb" in line]
    check(len(lines) == 1 and "fewer than 1664 (the keys of one batch)" in lines[0], f"one line naming the key:\n{r.stderr}")


if __name__ == "__main__":
    main(sys.modules[__name__])
