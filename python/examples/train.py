"""Trains a model on the cmodel through torch.compile(backend=aot_backend)
next to the same model in eager PyTorch on the CPU, from the same weights
and batches (SGD), and prints per step both losses, the simulated cycles
and the wall time, then the compile counts and the compile time.

    python -m tpuc.examples.train --model resnet18 --steps 10
    python -m tpuc.examples.train --model bert --steps 10 --chip tpu_pro

bert-large needs --chip tpu_pro: its parameters alone (1.3 GB in float32)
exceed tpu_edge's 256 MB of DDR, and both graphs would run on the CPU.
"""
from __future__ import annotations

import argparse
import copy
import logging
import sys
import time
from dataclasses import dataclass, field

import torch

from ..dynamo import aot_backend, backend, cache, device
from . import models

log = logging.getLogger(__name__)

MODELS = {
    "resnet18": lambda: models.resnet("18"),
    "resnet50": lambda: models.resnet("50"),
    "resnet-small": lambda: models.resnet("small"),
    "bert": lambda: models.bert("small"),
    "bert-base": lambda: models.bert("base"),
    "bert-large": lambda: models.bert("large"),
}


@dataclass
class StepRecord:
    loss: float
    eager_loss: float
    cycles: int
    seconds: float

    @property
    def relative_error(self) -> float:
        return abs(self.loss - self.eager_loss) / max(abs(self.eager_loss), 1e-12)


@dataclass
class TrainResult:
    steps: list[StepRecord] = field(default_factory=list)
    graph_compiles: dict = field(default_factory=dict)   # forward / backward graphs
    device_compiles: int = 0                              # device subgraphs built
    compile_seconds: float = 0.0                          # in tpuc (Top → bmodel)
    model: torch.nn.Module | None = None                  # trained on the cmodel
    eager_model: torch.nn.Module | None = None            # trained in eager PyTorch


def batches(name: str, steps: int, batch: int, size: int, seed: int) -> list[tuple]:
    """Fixed random (inputs, labels) for every step."""
    g = torch.Generator().manual_seed(seed + 1)
    if name.startswith("bert"):
        return [(torch.randint(0, 100, (batch, size), generator=g),
                 torch.randint(0, 3, (batch,), generator=g)) for _ in range(steps)]
    return [(torch.randn(batch, 3, size, size, generator=g),
             torch.randint(0, 10, (batch,), generator=g)) for _ in range(steps)]


def default_lr(name: str) -> float:
    """SGD learning rates below the stability edge of plain gradient descent
    (2 / the largest Hessian eigenvalue). The small ResNet's top eigenvalue
    at initialization is about 250 (batch 16 of 32x32): at lr 0.01 the
    training is unstable along it, and eager PyTorch drifts from itself by
    1e-2 within 7 steps when its gradients get 1e-6 relative noise; at
    0.001 the same noise stays below 1e-6 for 10 steps."""
    return 1e-2 if name.startswith("bert") else 1e-3


def train(name: str, steps: int, chip: str = "tpu_edge", batch: int | None = None,
          size: int | None = None, lr: float | None = None, momentum: float = 0.0,
          seed: int = 0, compare: bool = True,
          model: torch.nn.Module | None = None) -> TrainResult:
    """SGD for `steps` steps on the chip, and, with `compare`, the same steps
    in eager PyTorch. Defaults: ResNets batch 16 of 32x32 images, BERT
    batch 4 of 16 tokens, `default_lr`."""
    torch.manual_seed(seed)
    net = model if model is not None else MODELS[name]()
    net.train()
    eager = copy.deepcopy(net) if compare else None
    is_bert = name.startswith("bert")
    batch = batch or (4 if is_bert else 16)
    size = size or (16 if is_bert else 32)
    lr = default_lr(name) if lr is None else lr
    data = batches(name, steps, batch, size, seed)

    compiled = torch.compile(models.WithLoss(net), backend=aot_backend, dynamic=False,
                             options={"chip": chip})
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    eager_loss_fn = models.WithLoss(eager) if compare else None
    eager_opt = (torch.optim.SGD(eager.parameters(), lr=lr, momentum=momentum)
                 if compare else None)
    graphs0 = dict(backend.GRAPH_COMPILES)
    compiles0, seconds0 = cache.STATS.compiles, sum(cache.STATS.compile_seconds)
    result = TrainResult(model=net, eager_model=eager)
    for step, (x, y) in enumerate(data):
        cycles0, start = device.RUNS.cycles, time.perf_counter()
        loss = compiled(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        seconds = time.perf_counter() - start
        eager_value = float("nan")
        if compare:
            eager_value = eager_loss_fn(x, y)
            eager_value.backward()
            eager_opt.step()
            eager_opt.zero_grad()
            eager_value = eager_value.item()
        result.steps.append(StepRecord(loss.item(), eager_value,
                                       device.RUNS.cycles - cycles0, seconds))
        log.info("step %d: loss %.6f (eager %.6f), %d cycles, %.2f s", step, loss.item(),
                 eager_value, result.steps[-1].cycles, seconds)
    result.graph_compiles = {k: v - graphs0.get(k, 0) for k, v in backend.GRAPH_COMPILES.items()
                             if v - graphs0.get(k, 0)}
    result.device_compiles = cache.STATS.compiles - compiles0
    result.compile_seconds = sum(cache.STATS.compile_seconds) - seconds0
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tpuc.examples.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="resnet18")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--chip", default="tpu_edge")
    p.add_argument("--batch", type=int, help="default 16 (ResNets), 4 (BERT)")
    p.add_argument("--size", type=int, help="image side (default 32) or sequence length (16)")
    p.add_argument("--lr", type=float, help="default 0.001 (ResNets), 0.01 (BERT)")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-compare", action="store_true", help="skip the eager run")
    p.add_argument("-v", "--verbose", action="store_true", help="log every compiled graph")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if args.verbose:
        logging.getLogger("tpuc.dynamo").setLevel(logging.INFO)
    if args.steps < 1:
        p.error("--steps must be at least 1")
    r = train(args.model, args.steps, args.chip, args.batch, args.size, args.lr,
              args.momentum, args.seed, compare=not args.no_compare)
    print(f"{'step':>4} {'loss':>12} {'eager loss':>12} {'rel err':>9} {'cycles':>12} "
          f"{'wall s':>7}")
    for i, s in enumerate(r.steps):
        print(f"{i:>4} {s.loss:>12.6f} {s.eager_loss:>12.6f} {s.relative_error:>9.2e} "
              f"{s.cycles:>12} {s.seconds:>7.2f}")
    graphs = ", ".join(f"{v} {k}" for k, v in sorted(r.graph_compiles.items()))
    print(f"compiled graphs: {graphs}; {r.device_compiles} device subgraphs in "
          f"{r.compile_seconds:.2f} s; first step {r.steps[0].seconds:.2f} s, "
          f"later steps {sum(s.seconds for s in r.steps[1:]) / max(len(r.steps) - 1, 1):.2f} s "
          f"each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
