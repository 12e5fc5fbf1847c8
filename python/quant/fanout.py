"""Fan-out of independent work items: in-process, local processes, or Ray.

Every work item is a picklable call of a module-level function on plain
arguments (paths, names, dicts), so the same items run in this process
(``workers=1``), in a pool of local processes (``workers=N``) or as Ray
tasks on a cluster (``ray_address``). Results come back in item order.
"""
from __future__ import annotations

import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence

log = logging.getLogger(__name__)


class FanOut:
    """Maps a function over argument tuples; see the module doc."""

    def __init__(self, workers: int = 1, ray_address: str | None = None):
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self.ray_address = ray_address
        self._pool: ProcessPoolExecutor | None = None
        self._ray = None
        if ray_address is not None:
            self._ray = _connect_ray(ray_address)
            self.workers = max(workers, int(self._ray.cluster_resources().get("CPU", 1)))
        elif workers > 1:
            # spawn: the parent holds MLIR contexts a fork must not share.
            self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

    @property
    def parallel(self) -> int:
        """How many items run at once."""
        return self.workers

    def map(self, fn: Callable[..., Any], items: Sequence[tuple]) -> list[Any]:
        if not items:
            return []
        if self._ray is not None:
            remote = self._ray.remote(fn)
            return self._ray.get([remote.remote(*args) for args in items])
        if self._pool is not None and len(items) > 1:
            futures = [self._pool.submit(fn, *args) for args in items]
            return [f.result() for f in futures]
        return [fn(*args) for args in items]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._ray is not None and self.ray_address == "local":
            self._ray.shutdown()  # the instance this call started
        self._ray = None

    def __enter__(self) -> "FanOut":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _connect_ray(address: str):
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs the 'ray' package (pip install ray)") from None
    if not ray.is_initialized():
        # "local" starts a Ray instance in this process's session.
        kwargs: dict[str, Any] = {"log_to_driver": False}
        if address != "local":
            kwargs["address"] = address
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ValueError(f"--ray {address}: cannot connect ({str(e).splitlines()[0]})") from None
    log.info("Ray: %s", ray.cluster_resources())
    return ray
