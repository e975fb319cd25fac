"""A PyTorch DDP program as torchrun would run it: init_process_group from RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT, one all_reduce and one DDP step; prints one RESULT line."""
import json

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
torch.manual_seed(7)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.full((8, 4), rank + 1.0)).mean().backward()
optimizer.step()
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
print("RESULT " + json.dumps({"rank": rank, "world": world, "allreduce": total.item(),
                              "in_sync": all(torch.equal(g, gathered[0]) for g in gathered)}), flush=True)
dist.destroy_process_group()
