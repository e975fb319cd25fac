"""The chaos soak's parameter-server job kinds (chaos_job.py's Job): the online CTR job (days and
passes, its saves shared, restarted whole: ps-sync, ps-async) and wide&deep whose killed worker
restarts alone while the servers keep their tables (ps-inplace-sync, ps-inplace-async)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chaos_job import AUC_TOLERANCE, CONFIGS, LAUNCH, TRAIN, Job  # noqa: E402


def auc_differs(reference, result):
    """Why an async PS run's test AUC is not its reference's within AUC_TOLERANCE, or None."""
    a, b = reference["metrics"]["test_auc"], result["metrics"]["test_auc"]
    if b is None:
        return "the finished run reports no test AUC"
    if abs(a - b) > AUC_TOLERANCE:
        return f"test AUC {b:.4f} is more than {AUC_TOLERANCE} from the undisturbed run's {a:.4f}"
    return None


class PsJob(Job):
    """An online CTR job (wide & deep on Criteo-format data, 2 days x 3 passes of 4000 lines) of 2 servers and
    2 workers over 2 hosts through a master on host 0, with --max_restarts=2: a delta save after
    each pass and a base at each day's end in a directory both hosts share, as on a shared file
    system; a restart resumes at the first pass not saved."""

    faults = ("kill-worker", "kill-server", "kill-launcher", "pause-launcher", "cut-host")

    def __init__(self, soak, directory, mode):
        super().__init__(soak, directory)
        from test_ps_tables import write_criteo
        self.mode = mode
        self.name = f"ps-{mode}"
        self.save_dir = os.path.join(directory, "model")
        self.days = ["20261101", "20261102"]
        # One copy of the data for every run of the soak: runs only read it.
        self.data = os.path.join(soak.dir, "ps-data")
        for d, day in enumerate(self.days):
            for p in (1, 2, 3):
                path = os.path.join(self.data, day, f"{p}.txt")
                if not os.path.exists(path):
                    write_criteo(path + ".tmp", 4000, seed=100 + 10 * d + p)
                    os.rename(path + ".tmp", path)

    def commands(self, master):
        args = ["--config", os.path.join(CONFIGS, "wide_deep.json"), "--set", "batch_size=32", "--set", "log_every=5",
                "--set", f"ps.mode={self.mode}", "--set", "ps.accessor=ctr", "--set", "ps.ctr.base_threshold=0",
                "--set", "ps.ctr.delta_threshold=0", "--set", "ps.ctr.delete_threshold=1.5",
                "--set", f"ps.save_dir={self.save_dir}", "--set", f"ps.online.days={json.dumps(self.days)}",
                "--set", "ps.online.passes_per_day=3",
                "--set", f"ps.online.data_pattern={os.path.join(self.data, '{day}', '{pass}.txt')}",
                "--set", "ps.online.wait_seconds=5", "--set", "ctr.hidden=[32,16]", "--set", "ctr.embedding_dim=5"]
        return [[LAUNCH, f"--master={master}", "--nnodes=2", "--max_restarts=2", "--grace_period=1",
                 "--server_num=1", "--worker_num=1", TRAIN, *args] for _ in range(2)]

    def training(self):
        # The job's start is fair game too: servers starting, saves loading, the first pass.
        return os.path.exists(os.path.join(self.workdirs[0], "log", "endpoints.log"))

    def newest_save(self):
        """A random server's shard of the newest save the donefile lists."""
        try:
            with open(os.path.join(self.save_dir, "donefile.txt")) as f:
                saves = [line.split() for line in f if line.strip()]
        except OSError:
            return None
        return os.path.join(saves[-1][3], f"ps-server-{self.soak.rng.randrange(2)}.bin") if saves else None

    def result(self):
        from test_ps_tables import sparse_rows
        with open(os.path.join(self.workdirs[0], "output", "metrics.json")) as f:
            metrics = json.load(f)
        tables = sparse_rows(os.path.join(self.save_dir, self.days[-1], "base")) if self.mode == "sync" else None
        return {"metrics": metrics, "tables": tables}

    def equal(self, reference, result):
        if self.mode == "sync":
            if result["tables"] != reference["tables"]:
                return "the last base's tables differ from the undisturbed run's"
            return None
        return auc_differs(reference, result)


class PsInPlaceJob(Job):
    """Wide & deep (not online) of 2 servers and 4 workers over 2 hosts through a master on host 0,
    30 passes over 12000 lines, with --ps_worker_restarts=2 and --max_restarts=2: a killed worker
    restarts alone, in place, while the servers keep their tables; anything else restarts the
    whole job, from the start (nothing is saved until the end). Sync runs end with the reference's
    tables byte for byte, async within AUC_TOLERANCE."""

    faults = ("kill-worker", "kill-worker", "kill-in-recovery", "kill-server", "kill-launcher", "pause-launcher",
              "cut-host")

    def __init__(self, soak, directory, mode):
        super().__init__(soak, directory)
        from test_ps_tables import write_criteo
        self.mode = mode
        self.name = f"ps-inplace-{mode}"
        self.save_dir = os.path.join(directory, "model")
        self.data = os.path.join(soak.dir, "ps-inplace-data.txt")
        if not os.path.exists(self.data):
            write_criteo(self.data + ".tmp", 12000, seed=300)
            os.rename(self.data + ".tmp", self.data)

    def commands(self, master):
        args = ["--config", os.path.join(CONFIGS, "wide_deep.json"), "--set", f"data_dir={self.data}",
                "--set", "batch_size=64", "--set", "epochs=30", "--set", "log_every=5", "--set", f"ps.mode={self.mode}",
                "--set", f"ps.save_dir={self.save_dir}", "--set", "ctr.hidden=[32,16]", "--set", "ctr.embedding_dim=5"]
        return [[LAUNCH, f"--master={master}", "--nnodes=2", "--max_restarts=2", "--ps_worker_restarts=2",
                 "--grace_period=1", "--server_num=1", "--worker_num=2", TRAIN, *args] for _ in range(2)]

    def training(self):
        return os.path.exists(os.path.join(self.workdirs[0], "log", "endpoints.log"))

    def result(self):
        from test_ps_tables import sparse_rows
        with open(os.path.join(self.workdirs[0], "output", "metrics.json")) as f:
            metrics = json.load(f)
        return {"metrics": metrics, "tables": sparse_rows(self.save_dir) if self.mode == "sync" else None}

    def equal(self, reference, result):
        if self.mode == "sync":
            return None if result["tables"] == reference["tables"] else "the saved tables differ from the undisturbed run's"
        return auc_differs(reference, result)
