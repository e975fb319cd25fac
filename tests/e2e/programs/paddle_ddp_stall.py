"""A dygraph data-parallel Paddle program that trains a small model for STEPS steps, unmodified
Paddle style; with STALL_RANK=N and STALL_STEP=S, global rank N sleeps for an hour at step S just
before its backward pass (whose gradients the others wait for in an allreduce): a hang whose
culprit is in no collective."""
import os
import time

import numpy as np
import paddle
import paddle.distributed as dist


def stall():
    time.sleep(3600)


dist.init_parallel_env()
rank = dist.get_rank()
paddle.seed(7)
model = paddle.DataParallel(paddle.nn.Sequential(paddle.nn.Linear(64, 256), paddle.nn.ReLU(), paddle.nn.Linear(256, 1)))
optimizer = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
x = paddle.to_tensor(np.random.default_rng(rank).standard_normal((32, 64)).astype("float32"))
for step in range(int(os.environ.get("STEPS", "200"))):
    loss = model(x).mean()
    if os.environ.get("STALL_RANK") == str(rank) and step == int(os.environ.get("STALL_STEP", "-1")):
        print(f"rank {rank} stalls before its backward at step {step}", flush=True)
        stall()
    loss.backward()
    optimizer.step()
    optimizer.clear_grad()
    if step % 20 == 0:
        print(f"step {step} loss {float(loss):.4f}", flush=True)
print("done", flush=True)
