#!/usr/bin/env python3
"""PyTorch's ResNet-50 on one GPU, the peer scripts/bench_gpu.sh measures ours against.

torchvision's resnet50 (10 classes, as configs/resnet.json trains on Fashion-MNIST), channels_last,
eager, SGD with momentum 0.9, lr 0.1 and weight decay 1e-4 (the config's Momentum), cross entropy,
on synthetic 3x224x224 images and labels made on the device (a few batches, used in turn). cuDNN
picks its algorithms by measuring (cudnn.benchmark), as ours measures them once per shape.

Modes, named as bench_gpu.sh names ours:
  fp32      strict FP32 (TF32 off in cuBLAS and cuDNN)
  tf32      FP32 with TF32 tensor cores allowed
  amp-fp16  torch.autocast float16 with a GradScaler (FP32 weights; TF32 off, as ours)
  amp-bf16  torch.autocast bfloat16 (FP32 weights; TF32 off)
Other names (amp-fp16-o2) have no peer here and are reported as such.

Images/s is the steady state: WARMUP steps run first (cuDNN's search and the allocator's growth
fall there), then the device is synchronized around steps WARMUP+1..STEPS, the window ours reads
from its metrics log. Peak memory is torch.cuda.max_memory_allocated (tensors alone; reserved,
the caching allocator's whole pool, beside it), reset before each run.

One line per (batch, mode), fields KEY=VALUE separated by spaces:
  peer batch=256 mode=tf32 status=ok images_per_s=2500.3 steps=20..40 peak_allocated_mib=21000
       peak_reserved_mib=22000 loss=2.3026 seconds=2.05
status is ok, oom, unsupported or error (then reason="..." follows).
  scripts/bench_gpu_torch.py --batches 32 128 256 --modes tf32 amp-fp16 amp-bf16 --steps 40 --warmup 20
"""
import argparse
import gc
import sys
import time

MODES = {
    # name: (autocast dtype or None, TF32 allowed)
    "fp32": (None, False),
    "tf32": (None, True),
    "amp-fp16": ("float16", False),
    "amp-bf16": ("bfloat16", False),
}
NUM_CLASSES = 10
DATA_BATCHES = 2


def fields(**kv):
    return " ".join(f"{k}={v}" for k, v in kv.items())


def run_one(torch, torchvision, batch, mode, steps, warmup):
    dtype_name, tf32 = MODES[mode]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    amp_dtype = getattr(torch, dtype_name) if dtype_name else None
    device = torch.device("cuda")

    torch.manual_seed(2024)
    model = torchvision.models.resnet50(num_classes=NUM_CLASSES).to(device, memory_format=torch.channels_last)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    criterion = torch.nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    images = [torch.randn(batch, 3, 224, 224, device=device).contiguous(memory_format=torch.channels_last)
              for _ in range(DATA_BATCHES)]
    labels = [torch.randint(0, NUM_CLASSES, (batch,), device=device) for _ in range(DATA_BATCHES)]

    def step(i):
        x, y = images[i % DATA_BATCHES], labels[i % DATA_BATCHES]
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss

    for i in range(warmup):
        step(i)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(warmup, steps):
        loss = step(i)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return {
        "images_per_s": f"{(steps - warmup) * batch / seconds:.1f}",
        "steps": f"{warmup}..{steps}",
        "peak_allocated_mib": torch.cuda.max_memory_allocated() >> 20,
        "peak_reserved_mib": torch.cuda.max_memory_reserved() >> 20,
        "loss": f"{loss.item():.4f}",
        "seconds": f"{seconds:.2f}",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 128, 256])
    parser.add_argument("--modes", nargs="+", default=["tf32", "amp-fp16", "amp-bf16"])
    parser.add_argument("--steps", type=int, default=60, help="last step of the timed window")
    parser.add_argument("--warmup", type=int, default=20, help="steps run before the timed window")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit(f"bench_gpu_torch.py: --steps {args.steps} must exceed --warmup {args.warmup}")

    import torch
    import torchvision

    if not torch.cuda.is_available():
        sys.exit("bench_gpu_torch.py: torch sees no CUDA device")
    torch.backends.cudnn.benchmark = True
    print("peer-info " + fields(torch=torch.__version__, torchvision=torchvision.__version__,
                                cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                                device='"' + torch.cuda.get_device_name(0) + '"'), flush=True)
    failed = False
    for batch in args.batches:
        for mode in args.modes:
            head = fields(batch=batch, mode=mode)
            if mode not in MODES:
                print(f"peer {head} status=unsupported reason=\"no PyTorch peer for this mode\"", flush=True)
                continue
            try:
                result = run_one(torch, torchvision, batch, mode, args.steps, args.warmup)
                print(f"peer {head} status=ok {fields(**result)}", flush=True)
            except torch.cuda.OutOfMemoryError:
                print(f"peer {head} status=oom", flush=True)
            except Exception as error:  # one failed run is reported and the others go on
                failed = True
                reason = str(error).splitlines()[0].replace('"', "'") if str(error) else type(error).__name__
                print(f"peer {head} status=error reason=\"{reason}\"", flush=True)
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
