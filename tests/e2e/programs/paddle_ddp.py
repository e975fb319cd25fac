"""A dygraph data-parallel Paddle program, unmodified Paddle style: init_parallel_env(), an
all_reduce, one DataParallel step; prints one JSON line with what it saw. RANK_TO_FAIL=N makes
global rank N exit 3 after the rendezvous (in the first attempt only, with FIRST_ATTEMPT_ONLY=1)."""
import json
import os
import sys

import numpy as np
import paddle
import paddle.distributed as dist

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
first_attempt = os.environ.get("PADDLE_RESTART_COUNT", "0") == "0"
if os.environ.get("RANK_TO_FAIL") == str(rank) and (first_attempt or os.environ.get("FIRST_ATTEMPT_ONLY") != "1"):
    print(f"rank {rank} fails on purpose", flush=True)
    sys.exit(3)
total = paddle.to_tensor([float(rank + 1)])
dist.all_reduce(total)
paddle.seed(7)
model = paddle.DataParallel(paddle.nn.Linear(4, 1))
optimizer = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
x = paddle.to_tensor(np.full((8, 4), rank + 1.0, dtype="float32"))
loss = model(x).mean()
loss.backward()
optimizer.step()
weights = paddle.concat([p.flatten() for p in model.parameters()])
gathered = []
dist.all_gather(gathered, weights)
in_sync = all(bool(paddle.allclose(g, gathered[0])) for g in gathered)
print("RESULT " + json.dumps({"rank": rank, "world": world, "allreduce": float(total.numpy()[0]),
                              "in_sync": in_sync, "master": os.environ.get("PADDLE_MASTER")}), flush=True)
