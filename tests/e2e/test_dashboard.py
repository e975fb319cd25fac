#!/usr/bin/env python3
"""End-to-end tests of the job page (--dashboard, launcher/dashboard/dashboard_server.h): its
JSON endpoint, the page as headless Chromium renders it, and --dashboard_linger."""

import json
import os
import re
import shutil
import subprocess
import signal
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, free_ports, main, scratch, wait_for  # noqa: E402
from test_status import WRITER  # noqa: E402
from test_train import TRAIN, need  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
ARTIFACTS = os.path.join(os.getcwd(), "artifacts")


def start_job(extra):
    """A 2-rank job whose ranks write metrics lines until the returned stop file appears."""
    workdir = scratch()
    stop = os.path.join(workdir, "stop")
    proc = subprocess.Popen([LAUNCH, "--nproc_per_node=2", "--dashboard", *extra, "python3", "-c", WRITER],
                            cwd=workdir, env=child_env({"STOP_FILE": stop}), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    launch_log = os.path.join(workdir, "log", "launch.log")
    url = []

    def announced():
        if os.path.exists(launch_log):
            url[:] = re.findall(r"dashboard: (http://127\.0\.0\.1:\d+/)", open(launch_log).read())[:1]
        return bool(url)
    wait_for(announced, 20, "the launcher to print the dashboard's URL")
    return proc, workdir, stop, url[0]


def get_json(url):
    with urllib.request.urlopen(url + "api/job", timeout=5) as r:
        return json.load(r)


def chromium_rows(chromium, url, screenshot=None):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2500"]
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=60).stdout
    if screenshot:
        subprocess.run(args + ["--window-size=1280,1000", f"--screenshot={screenshot}", url], capture_output=True,
                       timeout=60)
    rows = dict(re.findall(r'<tr data-process="([^"]+)">.*?<td class="step">([^<]*)</td>', dom))
    return dom, rows


def test_the_page_in_headless_chromium_shows_every_rank_and_its_steps_going_up():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise Skip("no chromium (Debian's chromium package)")
    proc, workdir, stop, url = start_job([])
    try:
        # Before the launcher writes job.json the page lists no processes at all, which all() would pass.
        wait_for(lambda: [bool(p["metrics"]) for p in get_json(url)["processes"]] == [True, True], 20,
                 "both ranks' metrics")
        dom, first = chromium_rows(chromium, url)
        check(set(first) == {"trainer 0", "trainer 1"}, f"a row per rank in the DOM: {first}")
        check('class="state state-running"' in dom, "the rows say running")
        check(len(re.findall(r'<polyline[^>]*data-process="trainer \d"', dom)) == 4,
              "a loss and a throughput curve per rank, drawn by the page")
        time.sleep(1.0)
        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, "dashboard.png")
        _, second = chromium_rows(chromium, url, screenshot=shot)
        check(all(int(second[r]) > int(first[r]) for r in first), f"steps go up between two loads: {first}, {second}")
        check(os.path.getsize(shot) > 10000, f"a screenshot saved as {shot}")
    finally:
        open(stop, "w").close()
        proc.wait(timeout=30)
    assert_sessions_gone([proc.pid])


def test_the_json_endpoint_and_the_page_lingering_after_the_job():
    proc, workdir, stop, url = start_job(["--dashboard_linger=3"])
    try:
        # Before the launcher writes job.json the page lists no processes at all, which all() would pass.
        wait_for(lambda: [bool(p["metrics"]) for p in get_json(url)["processes"]] == [True, True], 20,
                 "both ranks' metrics")
        data = get_json(url)
        check(data["config"]["nproc_per_node"] == "2" and data["config"]["dashboard"] == "0", f"config: {data['config']}")
        check(data["job"]["state"] == "running" and "PADDLE_TRAINER_ENDPOINTS" in data["endpoints"], f"job: {data['job']}")
        for p in data["processes"]:
            check(p["state"] == "running" and p["pid"] > 0, f"{p['role']} {p['rank']} runs")
            steps = [m["step"] for m in p["metrics"]]
            check(steps == sorted(steps) and p["metrics"][-1]["samples_per_sec"] >= 100, f"its curve: {p['metrics'][-3:]}")
        with urllib.request.urlopen(url, timeout=5) as r:
            check(b"<svg" in r.read(), "the page itself comes from the binary")
        open(stop, "w").close()
        wait_for(lambda: get_json(url)["job"]["state"] == "succeeded", 20, "the page to show the job succeeded")
        ended = time.monotonic()
        check(proc.poll() is None, "the launcher lingers for the page")
        proc.wait(timeout=20)
        lingered = time.monotonic() - ended
        check(2.0 < lingered < 8, f"for about --dashboard_linger=3 s ({lingered:.1f} s)")
        check(proc.returncode == 0, f"and exits with the job's status, 0 (not {proc.returncode})")
        try:
            urllib.request.urlopen(url, timeout=2)
            check(False, "the page is gone with the launcher")
        except OSError:
            pass
    finally:
        open(stop, "w").close()
        if proc.poll() is None:
            proc.kill()


# What docs/monitoring.md gives for scraping a job's page; honor_labels keeps the page's own job label.
SCRAPE_CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: paddle-launch
    honor_labels: true
    static_configs:
      - targets: ['{target}']
"""


def prometheus_query(api, query):
    with urllib.request.urlopen(f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": query}), timeout=5) as r:
        answer = json.load(r)
    check(answer["status"] == "success", f"Prometheus answers {query}: {answer}")
    return answer["data"]["result"]


def test_a_real_prometheus_scrapes_every_ranks_samples_per_second_and_the_servers_table_rows():
    prometheus = shutil.which("prometheus")
    if not prometheus:
        raise Skip("Prometheus is not installed (Debian's package prometheus)")
    movielens = os.path.join(os.environ.get("SHARED_DATA", ""), "ml-100k")
    need(movielens)
    workdir = scratch()
    config = os.path.join(os.path.dirname(__file__), "../../configs/recommender_ps.json")
    job = subprocess.Popen([LAUNCH, "--server_num=1", "--worker_num=2", "--dashboard", "--job_id=ctr-7", TRAIN,
                            "--config", config, "--set", f"data_dir={movielens}", "--set", "epochs=1000",
                            "--set", "log_every=10", "--set", "checkpoint=false"],
                           cwd=workdir, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    scraper = None
    try:
        launch_log = os.path.join(workdir, "log", "launch.log")
        url = wait_for(lambda: os.path.exists(launch_log) and re.findall(
            r"dashboard: http://(127\.0\.0\.1:\d+)/", open(launch_log).read()), 20, "the dashboard's URL")[0]
        with urllib.request.urlopen(f"http://{url}/metrics", timeout=5) as r:
            check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), f"the exposition format: {r.headers}")
        conf = os.path.join(workdir, "prometheus.yml")
        with open(conf, "w") as f:
            f.write(SCRAPE_CONFIG.format(target=url))
        port = free_ports(1)[0]
        scraper = subprocess.Popen([prometheus, f"--config.file={conf}", f"--storage.tsdb.path={workdir}/tsdb",
                                    f"--web.listen-address=127.0.0.1:{port}"], cwd=workdir,
                                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "prometheus.log"), "w"),
                                   start_new_session=True)
        api = f"http://127.0.0.1:{port}"

        def scraped_twice():
            try:
                return prometheus_query(api, 'count_over_time(up{job="paddle-launch"}[1m]) >= 2')
            except OSError:
                return []
        wait_for(scraped_twice, 60, "Prometheus to scrape the page twice")

        def every_rank():
            rates = prometheus_query(api, 'paddle_samples_per_second{job="ctr-7"}')
            return sorted((r["metric"]["role"], r["metric"]["rank"]) for r in rates if float(r["value"][1]) > 0)
        ranks = wait_for(lambda: every_rank() == [("worker", "0"), ("worker", "1")] and every_rank(), 60,
                         "both workers' samples/s in Prometheus")
        check(ranks == [("worker", "0"), ("worker", "1")], f"both workers: {ranks}")
        rows = wait_for(lambda: prometheus_query(api, 'paddle_server_table_rows{job="ctr-7",role="server"} > 0'), 60,
                        "the server's table rows in Prometheus")
        check(all(r["metric"]["node"] == "0" and r["metric"]["table"] for r in rows), f"labelled tables: {rows}")
        state = prometheus_query(api, 'paddle_process_state{job="ctr-7",state="running"} == 1')
        check(len(state) == 3, f"3 processes running: {state}")
    finally:
        for p in (scraper, job):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in (scraper, job):
            if p is not None:
                p.wait(timeout=30)
    assert_sessions_gone([job.pid] + ([scraper.pid] if scraper else []))


if __name__ == "__main__":
    main(sys.modules[__name__])
