"""The Paddle peer of bench_ps.sh's async line: configs/wide_deep.json's model in Paddle 2.6's
own static-graph Fleet parameter-server style, unmodified for paddle-launch (fleet.init() takes
each role from the launcher's variables).

The model is ours: 26 Criteo slots looked up in one sparse embedding table of dim 9 and one wide
table of dim 1 (summed over the slots), the 13 dense features scaled to [0, 1] by the same bounds,
fc 512-256-128-32 with ReLU, the logit the deep output plus the wide sum, Adam at lr 0.001, async
(strategy.a_sync). The data: the first 80% of the file trains, shuffled once with a fixed seed,
worker w taking every world-th batch; the last 20% is the test set.

FEED picks how batches reach Paddle: "feed" (exe.run with numpy arrays, each step from Python)
or "dataset" (Paddle's InMemoryDataset and train_from_dataset, its C++ data feed, with THREADS
threads). Each worker times its training loop alone (the file is parsed before it, as our
trainer does) and prints one JSON line {"worker", "feed", "samples", "seconds", "last_loss"};
worker 0 then prints {"test_auc"} after a barrier, scoring the test set through the servers.

  paddle-launch --server_num=1 --worker_num=2 PYTHON scripts/paddle_wide_deep_ps.py FILE [BATCH [FEED [THREADS]]]"""
import json
import sys
import time

import numpy as np
import paddle
import paddle.distributed.fleet as fleet

SLOTS, DENSE, DIM, HIDDEN = 26, 13, 9, [512, 256, 128, 32]
LOW = np.array([0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
HIGH = np.array([20, 600, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50], dtype=np.float32)


def read_criteo(path):
    labels, dense, sparse = [], [], []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            labels.append(float(fields[0]))
            dense.append([float(x) if x else np.nan for x in fields[1:1 + DENSE]])
            # A slot's value keyed with its slot, as distinct ids in one table (an empty field is id 0 of its slot).
            sparse.append([(s + 1) << 32 | (int(x, 16) if x else 0) for s, x in enumerate(fields[1 + DENSE:])])
    dense = (np.array(dense, dtype=np.float32) - LOW) / (HIGH - LOW)
    return (np.array(labels, dtype=np.float32).reshape(-1, 1), np.nan_to_num(dense, nan=0.0),
            np.array(sparse, dtype=np.int64))


def model():
    ids = paddle.static.data(name="ids", shape=[None, SLOTS], dtype="int64")
    dense = paddle.static.data(name="dense", shape=[None, DENSE], dtype="float32")
    label = paddle.static.data(name="label", shape=[None, 1], dtype="float32")
    flat = paddle.reshape(ids, [-1, 1])
    init = paddle.nn.initializer.Uniform(-0.01, 0.01)
    emb = paddle.static.nn.sparse_embedding(flat, size=[2 ** 40, DIM], param_attr=paddle.ParamAttr(name="embedding", initializer=init))
    wide = paddle.static.nn.sparse_embedding(flat, size=[2 ** 40, 1], param_attr=paddle.ParamAttr(name="wide", initializer=init))
    x = paddle.concat([paddle.reshape(emb, [-1, SLOTS * DIM]), dense], axis=1)
    for width in HIDDEN:
        x = paddle.static.nn.fc(x, width, activation="relu")
    logit = paddle.static.nn.fc(x, 1) + paddle.sum(paddle.reshape(wide, [-1, SLOTS]), axis=1, keepdim=True)
    loss = paddle.mean(paddle.nn.functional.binary_cross_entropy_with_logits(logit, label))
    return loss, paddle.nn.functional.sigmoid(logit)


def auc(labels, scores):
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives = labels > 0.5
    n_pos, n_neg = positives.sum(), (~positives).sum()
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / max(1, n_pos * n_neg))


def train_from_dataset(exe, program, loss, batches, ids, dense, labels, batch, threads):
    """Paddle's own fast path: this worker's batches written in its MultiSlot text (untimed, as
    the parse is), loaded into an InMemoryDataset, and trained by its C++ data feed."""
    path = f"paddle_ps_data.{fleet.worker_index()}.txt"
    with open(path, "w") as out:
        for rows in batches:
            for r in rows:
                out.write(f"{SLOTS} {' '.join(map(str, ids[r]))} {DENSE} {' '.join(f'{x:.6g}' for x in dense[r])} 1 {labels[r][0]:g}\n")
    block = program.global_block()
    dataset = paddle.distributed.InMemoryDataset()
    dataset.init(batch_size=batch, thread_num=threads, pipe_command="cat",
                 use_var=[block.var("ids"), block.var("dense"), block.var("label")])
    dataset.set_filelist([path])
    dataset.load_into_memory()
    started = time.time()
    exe.train_from_dataset(program=program, dataset=dataset, fetch_list=[loss], fetch_info=["loss"], print_period=10 ** 9)
    return time.time() - started


def main():
    path, batch = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 512
    feed = sys.argv[3] if len(sys.argv) > 3 else "feed"
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    paddle.enable_static()
    fleet.init()
    loss, prob = model()
    strategy = fleet.DistributedStrategy()
    strategy.a_sync = True
    fleet.distributed_optimizer(paddle.optimizer.Adam(learning_rate=0.001), strategy).minimize(loss)
    # After minimize, so that the test program's lookups pull from the servers as the training program's do.
    test_program = paddle.static.default_main_program().clone(for_test=True)
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()
    labels, dense, ids = read_criteo(path)
    train = int(len(labels) * 0.8)
    order = np.random.default_rng(2021).permutation(train)
    batches = [order[i:i + batch] for i in range(0, train - batch + 1, batch)][fleet.worker_index()::fleet.worker_num()]
    main_program = paddle.static.default_main_program()
    if feed == "dataset":
        seconds = train_from_dataset(exe, main_program, loss, batches, ids, dense, labels, batch, threads)
        last = None
    else:
        started = time.time()
        for rows in batches:
            last = exe.run(main_program, feed={"ids": ids[rows], "dense": dense[rows], "label": labels[rows]}, fetch_list=[loss])
        seconds = time.time() - started
    result = {"worker": fleet.worker_index(), "feed": feed, "samples": len(batches) * batch, "seconds": seconds,
              "last_loss": float(np.asarray(last[0])) if last else None}
    print(json.dumps(result), flush=True)
    fleet.barrier_worker()
    if fleet.worker_index() == 0:
        scores = []
        for at in range(train, len(labels), 4096):
            end = min(len(labels), at + 4096)
            out = exe.run(test_program, feed={"ids": ids[at:end], "dense": dense[at:end], "label": labels[at:end]},
                          fetch_list=[prob], use_prune=True)
            scores.append(np.asarray(out[0]).reshape(-1))
        print(json.dumps({"test_auc": auc(labels[train:].reshape(-1), np.concatenate(scores))}), flush=True)
    fleet.stop_worker()


if __name__ == "__main__":
    main()
