"""Timing helper shared by the benchmarks."""
import statistics
import time


def best_of(fn, repeat):
    """(best, median) wall seconds of `repeat` calls of fn()."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def interleaved_best(fns, repeat):
    """{name: (best wall, best CPU of the calling thread)} seconds of
    `repeat` rounds, each calling every fn once in turn, so that on a
    machine shared with other work all of them meet the same load."""
    best = {name: (float("inf"), float("inf")) for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            fn()
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best
