"""Bootstrap confidence intervals for per-level statistics (pure; NumPy; seeded).

Within a run the unit of resampling is the request: a level's successful requests are resampled with
replacement and the statistic recomputed. When a configuration was measured several times (``bench run
--repeat N`` writes N records sharing a ``run_group``), the bootstrap is hierarchical: runs are resampled
with replacement first, then requests within each chosen run, and the statistic is the mean over the chosen
runs. This carries both the request-to-request and the run-to-run variation into the interval.

Two kinds of statistic:

* ``mean``: the mean of a per-request value (per-request tok/s, TPOT, TTFT);
* ``rate``: the sum of a per-request token count over the level's ``duration_s`` (throughput). Resampling
  n requests with replacement keeps the count at n, so the sum stays on the scale of the level's duration.
  The duration is scaled too: at a fixed concurrency a level lasts about (Σ E2E) / concurrency, so a resample
  lasts ``duration_s`` × (its Σ E2E) / (the observed Σ E2E). Without this, a fixed-length workload
  (``ignore_eos``, every request the same token count) would get a zero-width interval.

How the draws are made. A resample of n requests is a row of counts (how often each request was drawn; the
counts sum to n), and every statistic above is linear in those counts: a mean is counts · values / n, a sum
counts · values. So ``n_boot`` resamples are one matrix ``W`` (``n_boot`` × n) of multinomial counts, and all the
figures of a run come out of one product ``W @ X`` (X: n × figures). ``W`` depends only on the :class:`Stream`
(the seed and a label naming the side), the run's position on its side and n; it is drawn once per process and
kept (``_BANK``), so a build that bootstraps thousands of levels draws each ``W`` once, not once per figure and
level, and :func:`bootstrap_many` multiplies it once by the columns of many levels. Every interval is the
percentile bootstrap with a fixed seed, as before; two levels with the same request count on the same stream
share their resampling pattern (as two bootstraps run with the same seed do). The two sides of a comparison use
different streams and the runs of one side different positions, so their draws are independent, as the ratio of
two independent bootstraps and the hierarchical bootstrap need.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "BootstrapResult",
    "RunValues",
    "Stream",
    "blas_on_one_thread",
    "bootstrap_many",
    "bootstrap_ratio",
    "bootstrap_side",
    "bootstrap_sides",
    "exact_columns",
    "forget_resamples",
    "percentiles",
    "rng_for",
    "stream",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
Kind = Literal["mean", "rate"]


@dataclass(frozen=True)
class RunValues:
    """One run's per-request values for one statistic; ``duration_s`` is required for ``rate``, and
    ``times`` (each request's E2E time, any unit) scales a resample's duration when given."""

    values: Sequence[float]
    kind: Kind
    duration_s: float | None = None
    times: Sequence[float] | None = None

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("a run needs at least one per-request value")
        if self.kind == "rate" and not self.duration_s:
            raise ValueError("a rate statistic needs the level's duration_s")
        if self.times is not None and (len(self.times) != len(self.values) or sum(self.times) <= 0):
            raise ValueError("times must hold one positive E2E time per value")

    def point(self) -> float:
        x = np.asarray(self.values, dtype=np.float64)
        if self.kind == "mean":
            return float(x.mean())
        assert self.duration_s
        return float(x.sum() / self.duration_s)


@dataclass(frozen=True)
class BootstrapResult:
    point: float
    draws: FloatArray
    n_requests: int
    n_runs: int


def rng_for(seed: int, *labels: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and stable labels, so one draw's numbers do not depend on the others'."""
    return np.random.default_rng([seed, *(zlib.crc32(label.encode()) for label in labels)])


class _Bank:
    """Resample matrices already drawn, by (seed, labels, what, run, n, n_boot); least recently used out first
    beyond ``budget`` bytes. Each entry is a pure function of its key, so keeping it changes no number."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.size = 0
        self._entries: OrderedDict[tuple[object, ...], npt.NDArray[np.generic]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> npt.NDArray[np.generic] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple[object, ...], value: npt.NDArray[np.generic]) -> None:
        value.setflags(write=False)
        if value.nbytes > self.budget // 4:  # too large to keep: used once
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = value
            self.size += value.nbytes
            while self.size > self.budget:
                _, old = self._entries.popitem(last=False)
                self.size -= old.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.size = 0


_BANK = _Bank(256 * 2**20)


def forget_resamples() -> int:
    """Drop the resample matrices this process keeps (``_BANK``): their bytes, now free. Nothing changes but time:
    a later bootstrap draws the same matrices again. A site build calls it once its pages' statistics are done, so
    that the record pages are made in less memory (up to the bank's 256 MiB at 10,000 records)."""
    freed = _BANK.size
    _BANK.clear()
    return freed


def _counts(idx: npt.NDArray[np.int64], n: int) -> FloatArray:
    """Rows of request indices (draws × n) as rows of counts (draws × n): how often each request was drawn."""
    rows = idx.shape[0]
    flat = idx + (np.arange(rows, dtype=np.int64) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


@dataclass(frozen=True)
class Stream:
    """Where a bootstrap's resamples come from: a seed and stable labels (a comparison's side, say)."""

    seed: int
    labels: tuple[str, ...] = ()

    def _rng(self, what: str, run: int, n: int) -> np.random.Generator:
        return rng_for(self.seed, *self.labels, what, str(run), str(n))

    def weights(self, run: int, n: int, n_boot: int) -> FloatArray:
        """``n_boot`` resamples of ``n`` requests of the run at position ``run``, as counts (n_boot × n)."""
        key = (self.seed, self.labels, "requests", run, n, n_boot)
        found = _BANK.get(key)
        if found is None:
            idx = self._rng("requests", run, n).integers(0, n, size=(n_boot, n))
            found = _counts(idx, n)
            _BANK.put(key, found)
        return np.asarray(found, dtype=np.float64)

    def runs(self, n_runs: int, n_boot: int) -> IntArray:
        """``n_boot`` resamples of ``n_runs`` runs, as run positions (n_boot × n_runs)."""
        key = (self.seed, self.labels, "runs", 0, n_runs, n_boot)
        found = _BANK.get(key)
        if found is None:
            found = self._rng("runs", 0, n_runs).integers(0, n_runs, size=(n_boot, n_runs)).astype(np.intp)
            _BANK.put(key, found)
        return np.asarray(found, dtype=np.intp)


def stream(seed: int, *labels: str) -> Stream:
    """The :class:`Stream` of ``seed`` and ``labels``."""
    return Stream(seed, labels)


PRODUCT_SIZE = 250_000
"""Multiply-adds per matrix product, at most, where BLAS may use threads. OpenBLAS runs a product of up to 262,144
multiply-adds on the calling thread and hands a larger one to its thread pool; on a machine whose cores are busy (a
site build beside other work) that hand-off costs more than the product: measured on a busy 2-core machine, W (2000 ×
96) @ X (96 × 8) took 11 ms in one product and 0.1 ms as blocks of rows. So where :func:`blas_on_one_thread` cannot
keep BLAS on the calling thread, every product is cut into blocks below that size."""

_OPENBLAS_THREADS = (  # (set, get) as NumPy's wheels (scipy-openblas, 64-bit ints) and plain OpenBLAS name them
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)
_one_thread: bool | None = None


def blas_on_one_thread() -> bool:
    """Keep this process's OpenBLAS (the one NumPy loaded) on the calling thread, once; True when it is.

    The bootstrap's products are many and small (a few million multiply-adds), and a site build already spreads its
    work over processes (:func:`bench.site.in_workers`, whose children inherit the setting): BLAS threads only add
    hand-offs. On one thread a whole product is about twice as fast as the same product in blocks small enough to
    stay off the thread pool (measured on a 2-core machine: W (2000 × 96) @ X (96 × 480), 4.4 against 9.0 ms).
    Another BLAS (MKL, Accelerate), or none found: False, and :func:`_product` cuts products into blocks. The numbers
    are the same either way (:func:`exact_columns`)."""
    global _one_thread
    if _one_thread is None:
        found = openblas_threads()
        if found is not None:
            found[0](1)
        _one_thread = found is not None and found[1]() == 1
    return _one_thread


def openblas_threads() -> tuple[Callable[[int], None], Callable[[], int]] | None:
    """The OpenBLAS loaded in this process (Linux): its functions that set and get its thread count; None if none."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = {line.split(None, 5)[-1].strip() for line in fh if "openblas" in line.lower()}
    except OSError:  # not Linux
        return None
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            continue
        for set_name, get_name in _OPENBLAS_THREADS:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None


def _product(w: FloatArray, x: FloatArray) -> FloatArray:
    """``w @ x`` (x: n × columns): one product where BLAS stays on this thread (:func:`blas_on_one_thread`), else in
    blocks of at most :data:`PRODUCT_SIZE` multiply-adds (same numbers)."""
    n_boot, n = w.shape
    cols = x.shape[1]
    if n_boot * n * cols <= PRODUCT_SIZE or blas_on_one_thread():
        return w @ x
    col_step = max(1, min(cols, PRODUCT_SIZE // (n * 8)))
    row_step = max(1, PRODUCT_SIZE // (n * col_step))
    out = np.empty((n_boot, cols), dtype=np.float64)
    for c in range(0, cols, col_step):
        xc = np.ascontiguousarray(x[:, c : c + col_step])
        for r in range(0, n_boot, row_step):
            out[r : r + row_step, c : c + col_step] = w[r : r + row_step] @ xc
    return out


_FINEST_EXPONENT = -1074
"""2**-1074 is the smallest positive float64 (a subnormal); every float64 is a multiple of it."""


def exact_columns(x: FloatArray, n: int) -> FloatArray:
    """Each row of ``x`` (a column of values: n per row) rounded to a multiple of a power of two, fine enough that
    any sum of n of its values, each taken up to n times in all (a resample), is exact in float64.

    Then ``W @ X`` has one possible result, whatever order BLAS adds in: the same on every machine, with one thread
    or many, for one level or a batch of them (BLAS kernels do add in an order that depends on the shapes). A
    resample's sum is at most n × the row's largest |value| (the counts sum to n), so the values keep 53 − ⌈log2
    (n + 1)⌉ bits below the row's largest power of two: 44 bits for 384 requests, a relative rounding of about 1e-13
    of the largest value."""
    bits = 53 - math.ceil(math.log2(n + 1))
    _, top = np.frexp(np.max(np.abs(x), axis=1, initial=0.0))  # every |value| of the row is below 2**top
    # never finer than the smallest float64 (2**-1074): a row of subnormal values is already on that grid, and a
    # finer quantum would underflow to 0 (x / 0 is NaN)
    quantum = np.ldexp(1.0, np.maximum(top - bits, _FINEST_EXPONENT))[:, None]
    return np.asarray(np.round(x / quantum) * quantum, dtype=np.float64)


def _sums(
    source: Stream, run: int, n: int, n_boot: int, columns: Sequence[Sequence[float]]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """counts · column for each resample (rows) and column (columns) on :func:`exact_columns`; each column's sum
    as observed and as rounded there."""
    x = np.asarray(columns, dtype=np.float64)
    exact = exact_columns(x, n)
    return _product(source.weights(run, n, n_boot), exact.T), x.sum(axis=1), exact.sum(axis=1)


def bootstrap_many(
    jobs: Sequence[Sequence[Sequence[RunValues]]], n_boot: int, source: Stream
) -> list[list[BootstrapResult]]:
    """:func:`bootstrap_sides` of many sides at once: ``jobs[j]`` is one side's figures (``jobs[j][k][i]``: figure
    k in run i). Every resample matrix is read once for all the columns that use it, so a batch of levels costs
    little more than its arithmetic; each figure gets exactly the draws it would get alone."""
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    blocks: dict[tuple[int, int], list[Sequence[float]]] = {}
    # a block's columns by the identity of their sequence: a sequence given twice (a level's E2E times, which
    # every rate figure of the level scales by) is one column of the product, not one per figure
    placed_at: dict[tuple[int, int], dict[int, int]] = {}
    # job -> figure -> run -> (block, column of the values, column of the times or -1)
    where: list[list[list[tuple[tuple[int, int], int, int]]]] = []

    def column(block: tuple[int, int], values: Sequence[float]) -> int:
        cols, at = blocks.setdefault(block, []), placed_at.setdefault(block, {})
        found = at.get(id(values))
        if found is None:
            found = at[id(values)] = len(cols)
            cols.append(values)
        return found

    for figures in jobs:
        n_runs = len(figures[0]) if figures else 0
        if not figures or n_runs == 0 or any(len(f) != n_runs for f in figures):
            raise ValueError("bootstrap needs at least one run, the same runs for every figure")
        placed = []
        for runs in figures:
            spots = []
            for i, rv in enumerate(runs):
                block = (i, len(rv.values))
                v = column(block, rv.values)
                t = column(block, rv.times) if rv.kind == "rate" and rv.times is not None else -1
                spots.append((block, v, t))
            placed.append(spots)
        where.append(placed)
    sums = {block: _sums(source, block[0], block[1], n_boot, cols) for block, cols in blocks.items()}
    made: dict[int, list[BootstrapResult]] = {}  # by job
    single: dict[tuple[int, int], list[int]] = {}  # block -> the jobs of one run whose figures all lie in it
    for j, (figures, placed) in enumerate(zip(jobs, where, strict=True)):
        if len(figures[0]) == 1 and len({spots[0][0] for spots in placed}) == 1:
            single.setdefault(placed[0][0][0], []).append(j)
        else:
            made[j] = _results(figures, placed, sums, n_boot, source)
    for block, js in single.items():
        made.update(zip(js, _single_run_results(block, sums[block], [(jobs[j], where[j]) for j in js]), strict=True))
    return [made[j] for j in range(len(jobs))]


Spots = list[list[tuple[tuple[int, int], int, int]]]  # figure -> run -> (block, column of the values, of the times)
Sums = tuple[FloatArray, FloatArray, FloatArray]  # a block's products, its columns' sums, their sums on the grid


def _results(
    figures: Sequence[Sequence[RunValues]],
    placed: Spots,
    sums: dict[tuple[int, int], Sums],
    n_boot: int,
    source: Stream,
) -> list[BootstrapResult]:
    """One side's results, figure by figure and run by run."""
    n_runs = len(figures[0])
    per_run = np.empty((n_runs, len(figures), n_boot), dtype=np.float64)  # each figure's draws contiguous
    points = np.empty((n_runs, len(figures)), dtype=np.float64)
    for k, (runs, spots) in enumerate(zip(figures, placed, strict=True)):
        for i, (rv, (block, v, t)) in enumerate(zip(runs, spots, strict=True)):
            drawn, observed, rounded = sums[block]
            s = drawn[:, v]
            if rv.kind == "mean":
                per_run[i, k] = s / block[1]
                points[i, k] = observed[v] / block[1]
                continue
            assert rv.duration_s
            points[i, k] = observed[v] / rv.duration_s
            if t < 0:
                per_run[i, k] = s / rv.duration_s
            else:
                per_run[i, k] = s / (rv.duration_s * drawn[:, t] / rounded[t])
    if n_runs == 1:
        draws = per_run[0]
    else:  # runs resampled with replacement: the mean over each resample's chosen runs
        chosen = source.runs(n_runs, n_boot)
        at = np.arange(n_boot)
        total = per_run[chosen[:, 0], :, at].T  # figures × draws: the first chosen run of each resample
        for i in range(1, n_runs):  # added run by run: the same order whatever the number of figures
            total = total + per_run[chosen[:, i], :, at].T
        draws = total / n_runs
    return [
        BootstrapResult(
            point=float(np.mean(points[:, k])),
            draws=draws[k],
            n_requests=sum(len(r.values) for r in runs),
            n_runs=n_runs,
        )
        for k, runs in enumerate(figures)
    ]


def _single_run_results(
    block: tuple[int, int], sums: Sums, sides: Sequence[tuple[Sequence[Sequence[RunValues]], Spots]]
) -> list[list[BootstrapResult]]:
    """The results of sides of one run each, all of whose figures lie in ``block``: every figure's draws in a few
    array operations for all the sides (a site build's levels, one side each), element by element the operations of
    :func:`_results` (the same numbers, ``==``)."""
    drawn, observed, rounded = sums
    values: list[int] = []
    times: list[int] = []
    divisors: list[float] = []  # a mean's request count, a rate's duration
    for figures, placed in sides:
        for (rv,), ((_, v, t),) in zip(figures, placed, strict=True):
            values.append(v)
            times.append(t)
            divisors.append(float(block[1]) if rv.kind == "mean" else float(rv.duration_s or 0.0))
    v_at = np.asarray(values, dtype=np.intp)
    t_at = np.asarray(times, dtype=np.intp)
    div = np.asarray(divisors, dtype=np.float64)
    picked = drawn[:, v_at]
    draws = picked / div
    scaled = np.flatnonzero(t_at >= 0)  # rates whose resamples' durations scale with their E2E times
    if scaled.size:
        t_cols = t_at[scaled]
        draws[:, scaled] = picked[:, scaled] / (div[scaled] * drawn[:, t_cols] / rounded[t_cols])
    rows = np.ascontiguousarray(draws.T)  # one figure's draws per row
    points = observed[v_at] / div
    out: list[list[BootstrapResult]] = []
    at = 0
    for figures, _ in sides:
        own = rows[at : at + len(figures)].copy()  # each side's own array: no side holds the whole batch's
        out.append(
            [
                BootstrapResult(point=float(points[at + k]), draws=own[k], n_requests=len(runs[0].values), n_runs=1)
                for k, runs in enumerate(figures)
            ]
        )
        at += len(figures)
    return out


def bootstrap_sides(figures: Sequence[Sequence[RunValues]], n_boot: int, source: Stream) -> list[BootstrapResult]:
    """:func:`bootstrap_side` for several figures of the same runs at once: ``figures[k][i]`` is figure k's values
    in run i (every figure has the same runs, in the same order). Each figure gets the draws it would get alone."""
    if not figures:
        return []
    return bootstrap_many([figures], n_boot, source)[0]


def bootstrap_side(runs: Sequence[RunValues], n_boot: int, source: Stream) -> BootstrapResult:
    """Point estimate (mean over runs of each run's statistic) and ``n_boot`` hierarchical bootstrap draws."""
    if not runs:
        raise ValueError("bootstrap needs at least one run")
    return bootstrap_sides([runs], n_boot, source)[0]


def percentiles(rows: FloatArray, percents: Sequence[float]) -> FloatArray:
    """``np.percentile(rows, percents, axis=1)`` (its default, linear method): one row of results per percent, one
    column per row of ``rows``; the same numbers (``==``), made from each row sorted.

    NumPy's percentile partitions each row around the order statistics it needs, about four times slower than
    sorting the row with NumPy's vectorized sort (profiled: 3.7 against 1.0 ms for 80 rows of 2,000 draws, most of
    the intervals' cost in a cold site build). An order statistic does not depend on how it was found, and the
    interpolation between two of them is NumPy's own, step for step (``numpy.lib._function_base_impl._quantile``
    and ``_lerp``): the virtual index (n − 1)·q, its floor and the next index (the last index past the end), the
    weight γ = index − floor, then a + (b − a)·γ, or b − (b − a)·(1 − γ) where γ ≥ 0.5. A row holding a NaN gives
    NaN, as there."""
    data = np.sort(np.asarray(rows, dtype=np.float64), axis=1)
    n = data.shape[1]
    if n == 0:
        raise ValueError("percentiles of an empty row")
    q = np.true_divide(np.asarray(percents, dtype=np.float64), 100)
    if np.any(np.isnan(q)) or np.any(q < 0) or np.any(q > 1):
        raise ValueError("percents must lie in [0, 100]")
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    low, high = previous.astype(np.intp), following.astype(np.intp)
    gamma = np.asarray(virtual - low, dtype=np.float64).reshape(-1, 1)
    a, b = data[:, low].T, data[:, high].T  # percents × rows
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    nan = np.isnan(data[:, -1])  # a NaN sorts last
    if nan.any():
        out[:, nan] = np.nan
    return out


def bootstrap_ratio(
    baseline: BootstrapResult, candidate: BootstrapResult, confidence: float = 0.95
) -> tuple[float, float, float] | None:
    """(point, lo, hi) of candidate / baseline; None when a baseline figure is zero (no ratio exists)."""
    if baseline.point == 0 or np.any(baseline.draws == 0):
        return None
    ratios = candidate.draws / baseline.draws
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = percentiles(ratios[None, :], [tail, 100.0 - tail])[:, 0]
    return candidate.point / baseline.point, float(lo), float(hi)
