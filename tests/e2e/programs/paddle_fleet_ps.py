"""A Fleet parameter-server program in Paddle's own static-graph style, unmodified for
paddle-launch: fleet.init() takes the role from the launcher's variables (TRAINING_ROLE,
PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINER_ID, ...). Workers train STEPS steps of a linear
model in async mode (worker SLOW_WORKER sleeping STEP_DELAY seconds a step), call stop_worker()
and print one RESULT line (WORKER_TO_FAIL=N: worker N exits 5 instead); servers serve until the
launcher stops them."""
import json
import os
import time

import numpy as np
import paddle
import paddle.distributed.fleet as fleet

STEPS = int(os.environ.get("STEPS", "20"))
paddle.enable_static()
fleet.init()
x = paddle.static.data(name="x", shape=[None, 4], dtype="float32")
y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
loss = paddle.mean(paddle.square(paddle.static.nn.fc(x, 1) - y))
strategy = fleet.DistributedStrategy()
strategy.a_sync = True
optimizer = fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=0.01), strategy)
optimizer.minimize(loss)
if fleet.is_server():
    fleet.init_server()
    fleet.run_server()
else:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()
    rng = np.random.default_rng(fleet.worker_index())
    delay = float(os.environ.get("STEP_DELAY", "0")) if fleet.worker_index() == int(os.environ.get("SLOW_WORKER", "-1")) else 0
    losses = []
    for _ in range(STEPS):
        time.sleep(delay)
        xs = rng.normal(size=(16, 4)).astype("float32")
        ys = xs.sum(axis=1, keepdims=True).astype("float32")
        losses.append(float(np.asarray(exe.run(feed={"x": xs, "y": ys}, fetch_list=[loss])[0])))
    if os.environ.get("WORKER_TO_FAIL") == str(fleet.worker_index()):
        print(f"worker {fleet.worker_index()} fails on purpose", flush=True)
        os._exit(5)
    fleet.stop_worker()
    print("RESULT " + json.dumps({"index": fleet.worker_index(), "workers": fleet.worker_num(), "steps": len(losses),
                                  "servers": os.environ["PADDLE_PSERVERS_IP_PORT_LIST"], "ended": time.time()}),
          flush=True)
