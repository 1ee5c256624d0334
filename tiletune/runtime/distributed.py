"""All ranks of a process group agree on one config; tuning work split across ranks.

Every tuner (the kernel autotuner, the function tuner, the contextual tuner)
uses these primitives so that, with a ``torch.distributed`` process group,
every rank ends with the same config for every key.  Ranks that pick
different configs for a kernel that communicates can deadlock, so agreement
is not optional once a group is given.

Rules every primitive keeps:

* ``pg=None``, a group of one rank, or torch.distributed not initialised:
  a no-op that returns the local answer without any communication.
* Every rank reaches the same collectives in the same order.  Nothing raises
  between two collectives on one rank only: a local failure (a candidate that
  raises, an object that is not JSON) is turned into data, exchanged, and then
  the same exception is raised on every rank.
* Only tensors cross ranks (no pickle): JSON text travels as a ``uint8``
  tensor.  Tensors live on the group's device (CUDA for NCCL, NPU for HCCL,
  CPU otherwise: gloo, or ``"cpu:gloo,cuda:nccl"`` groups).
* Times are milliseconds; ``None`` (or inf/nan) means the candidate failed.

The building blocks, lowest first: :func:`all_gather_json`,
:func:`broadcast_choice`, :func:`check_consistent`, :func:`agree_on_cached`
(reuse a cached winner or tune, decided once for all ranks), :func:`combine_timings`,
:func:`shard_indices` / :func:`gather_sharded`, :func:`pick_winner`,
:func:`time_candidates`; and the whole protocol in one call:
:func:`agree_on_best`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tiletune.errors import TuningError

__all__ = [
    "is_active",
    "group_rank",
    "group_size",
    "collective_device",
    "barrier",
    "all_gather_json",
    "broadcast_choice",
    "digest",
    "check_consistent",
    "agree_on_cached",
    "combine_timings",
    "pick_winner",
    "shard_indices",
    "gather_sharded",
    "time_candidates",
    "Agreement",
    "agree_on_best",
]


# --------------------------------------------------------------------------- the group


def _dist():
    import torch.distributed as dist

    return dist


def is_active(pg: Any) -> bool:
    """True when ``pg`` is a process group of more than one rank that can communicate.

    False for ``None``, when torch.distributed is unavailable or not
    initialised, and for a group of one rank: every primitive is then a no-op.
    """
    if pg is None:
        return False
    try:
        dist = _dist()
    except ImportError:
        return False
    if not (dist.is_available() and dist.is_initialized()):
        return False
    return dist.get_world_size(pg) > 1


def group_rank(pg: Any) -> int:
    """This process's rank inside ``pg`` (0 when the group is not active)."""
    return _dist().get_rank(pg) if is_active(pg) else 0


def group_size(pg: Any) -> int:
    """Number of ranks in ``pg`` (1 when the group is not active)."""
    return _dist().get_world_size(pg) if is_active(pg) else 1


def collective_device(pg: Any):
    """The device that collectives on ``pg`` need their tensors on.

    ``cuda:<current>`` for a pure NCCL group, ``npu:<current>`` for HCCL, CPU
    for gloo, MPI and mixed groups that include gloo for CPU tensors.
    """
    import torch

    backend = str(_dist().get_backend(pg)).lower()
    if "gloo" in backend or "mpi" in backend:
        return torch.device("cpu")
    if "nccl" in backend and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if "hccl" in backend:
        npu = getattr(torch, "npu", None)
        if npu is not None:
            return torch.device("npu", npu.current_device())
    return torch.device("cpu")


def _src_global(pg: Any, src: int) -> int:
    """Global rank of group rank ``src``."""
    return _dist().get_global_rank(pg, src)


def barrier(pg: Any) -> None:
    """Wait until every rank of ``pg`` gets here (an all-reduce of one element; no-op when inactive).

    Used instead of ``dist.barrier`` so that NCCL groups need no device guess.
    """
    if not is_active(pg):
        return
    import torch

    t = torch.zeros(1, dtype=torch.int32, device=collective_device(pg))
    _dist().all_reduce(t, group=pg)


# --------------------------------------------------------------------------- JSON across ranks


def _encode(obj: Any) -> tuple:
    """``(bytes, None)`` or ``(None, error text)``: never raises."""
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)
        return text.encode("utf-8"), None
    except (TypeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def all_gather_json(obj: Any, pg: Any) -> List[Any]:
    """Every rank's ``obj`` (JSON-able), in group-rank order, on every rank.

    Two collectives: the lengths, then the padded bytes.  If any rank's
    object is not JSON, every rank raises TypeError naming that rank.
    Inactive group: ``[obj]`` (still checked to be JSON).
    """
    data, err = _encode(obj)
    if not is_active(pg):
        if err is not None:
            raise TypeError(f"tiletune: cannot exchange {obj!r} between ranks: {err}")
        return [obj]
    import torch

    dist = _dist()
    dev = collective_device(pg)
    world = dist.get_world_size(pg)
    n = -1 if data is None else len(data)
    lengths = [torch.zeros(1, dtype=torch.int64, device=dev) for _ in range(world)]
    dist.all_gather(lengths, torch.tensor([n], dtype=torch.int64, device=dev), group=pg)
    sizes = [int(t.item()) for t in lengths]
    width = max(1, max(sizes))
    buf = torch.zeros(width, dtype=torch.uint8, device=dev)
    if data:
        buf[: len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(dev)
    bufs = [torch.zeros(width, dtype=torch.uint8, device=dev) for _ in range(world)]
    dist.all_gather(bufs, buf, group=pg)
    bad = [r for r, s in enumerate(sizes) if s < 0]
    if bad:
        raise TypeError(
            f"tiletune: rank(s) {bad} passed an object that is not JSON to all_gather_json"
            + (f" (here: {err})" if err else "")
            + "; only JSON-able values (dict/list/str/int/float/bool/None) cross ranks"
        )
    return [json.loads(bytes(b[:s].cpu().tolist()).decode("utf-8")) for b, s in zip(bufs, sizes)]


def broadcast_choice(obj: Any, pg: Any, src: int = 0) -> Any:
    """``obj`` as rank ``src`` (a rank inside ``pg``) has it, on every rank.

    ``obj`` must be JSON-able on ``src``; other ranks' ``obj`` is ignored.  The
    result is the decoded JSON, so tuples come back as lists on every rank
    (src included) and all ranks hold equal values.  If ``src``'s object is
    not JSON, every rank raises TypeError.  Inactive group: ``obj`` unchanged.
    """
    if not is_active(pg):
        return obj
    import torch

    dist = _dist()
    dev = collective_device(pg)
    me = dist.get_rank(pg)
    data, err = _encode(obj) if me == src else (b"", None)
    n = torch.tensor([-1 if data is None else len(data)], dtype=torch.int64, device=dev)
    dist.broadcast(n, src=_src_global(pg, src), group=pg)
    size = int(n.item())
    if size < 0:
        raise TypeError(
            f"tiletune: rank {src} broadcast an object that is not JSON" + (f": {err}" if err else "")
        )
    buf = torch.zeros(max(1, size), dtype=torch.uint8, device=dev)
    if me == src and size:
        buf[:size] = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(dev)
    dist.broadcast(buf, src=_src_global(pg, src), group=pg)
    return json.loads(bytes(buf[:size].cpu().tolist()).decode("utf-8"))


def digest(obj: Any) -> int:
    """A 56-bit integer hash of ``obj``'s canonical JSON (non-JSON values by ``repr``), equal across processes."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:7], "big")


def check_consistent(obj: Any, pg: Any, what: str = "tuning problem") -> None:
    """Raise TuningError on every rank unless all ranks pass an equal ``obj``.

    ``obj`` is hashed (canonical JSON; non-JSON values by ``repr``), so pass
    what must match across ranks before tuning: the key and the candidate
    list.  Ranks tuning different problems would pair up unrelated
    collectives.  One all-gather of one integer per rank.
    """
    if not is_active(pg):
        return
    import torch

    dist = _dist()
    dev = collective_device(pg)
    world = dist.get_world_size(pg)
    mine = torch.tensor([digest(obj)], dtype=torch.int64, device=dev)
    got = [torch.zeros(1, dtype=torch.int64, device=dev) for _ in range(world)]
    dist.all_gather(got, mine, group=pg)
    digests = [int(t.item()) for t in got]
    if len(set(digests)) > 1:
        groups: Dict[int, List[int]] = {}
        for r, d in enumerate(digests):
            groups.setdefault(d, []).append(r)
        parts = "; ".join(f"ranks {rs}" for rs in groups.values())
        raise TuningError(
            f"tiletune: the ranks of the process group disagree on the {what} ({parts} each see a "
            "different one). Every rank must call the tuned function or kernel with the same key "
            "and the same candidate list (check key_fn/prune_fn for rank-dependent results)."
        )


def agree_on_cached(
    choice: Any,
    pg: Any,
    *,
    problem: Any = None,
    refused: Optional[str] = None,
    what: str = "tuning",
) -> Any:
    """Decide on every rank, in one exchange, between reusing a cached winner and tuning.

    Each rank passes what its own cache lookup found: ``choice`` (any
    JSON-able value, e.g. a config index or its JSON form; None = miss, stale
    or always-tune), ``problem`` (what must be equal on every rank: the key and
    the candidate list) and ``refused`` (the message of a
    StaleCacheEntryError that strict version checking raised here, else
    None).  Then, identically on every rank:

    * any rank refused -> StaleCacheEntryError (naming that rank) everywhere;
    * ranks disagree on ``problem`` -> TuningError everywhere;
    * any rank missed -> returns None: all ranks tune together;
    * all hit -> returns rank 0's choice (decoded from JSON), so ranks whose
      caches differ still use one config.

    Inactive group: the same rules for this rank alone (``choice`` returned
    as given).  One all-gather (two collectives).
    """
    mine = {"problem": digest(problem), "choice": choice, "refused": refused}
    views = all_gather_json(mine, pg) if is_active(pg) else [mine]
    for r, v in enumerate(views):
        if v["refused"]:
            from tiletune.runtime.cache import StaleCacheEntryError

            raise StaleCacheEntryError(v["refused"] + (f" (rank {r})" if len(views) > 1 else ""))
    if len({v["problem"] for v in views}) > 1:
        groups: Dict[int, List[int]] = {}
        for r, v in enumerate(views):
            groups.setdefault(v["problem"], []).append(r)
        raise TuningError(
            f"tiletune: {what}: the ranks of the process group disagree on the key or the candidate list "
            f"({'; '.join(f'ranks {rs}' for rs in groups.values())} each see their own). Every rank must "
            "make the same call; check key functions and pruning for rank-dependent results."
        )
    if any(v["choice"] is None for v in views):
        return None
    return views[0]["choice"]


# --------------------------------------------------------------------------- timings


def _as_time(t: Optional[float]) -> float:
    """A float for the wire: failures (None, nan, inf, negative) become +inf."""
    if t is None:
        return math.inf
    t = float(t)
    if math.isnan(t) or t < 0:
        return math.inf
    return t


def _from_time(t: float) -> Optional[float]:
    return t if math.isfinite(t) else None


def _check_lengths(n: int, pg: Any) -> None:
    """Raise TuningError on every rank unless all ranks pass the same ``n`` (one all-reduce)."""
    import torch

    dist = _dist()
    lens = torch.tensor([n, -n], dtype=torch.int64, device=collective_device(pg))
    dist.all_reduce(lens, op=dist.ReduceOp.MAX, group=pg)
    hi, lo = int(lens[0].item()), -int(lens[1].item())
    if hi != lo:
        raise TuningError(
            f"tiletune: ranks have different numbers of candidates (between {lo} and {hi}); "
            "every rank must tune the same candidate list"
        )


def combine_timings(local: Sequence[Optional[float]], pg: Any) -> List[Optional[float]]:
    """Per-candidate times agreed by every rank: the max over ranks, None where any rank failed.

    ``local[i]`` is this rank's time for candidate ``i`` (None, inf or nan =
    failed).  A candidate that failed on any rank has failed for all; the
    combined time of the others is the slowest rank's (a collective runs at
    the pace of its slowest rank).  Every rank gets the identical list.  If the
    ranks pass lists of different lengths, every rank raises TuningError.
    Two all-reduces (length check, MAX of the times).  Inactive group: the
    local list with failures normalised to None.
    """
    if not is_active(pg):
        return [_from_time(_as_time(t)) for t in local]
    import torch

    dist = _dist()
    dev = collective_device(pg)
    n = len(local)
    _check_lengths(n, pg)
    if n == 0:
        return []
    t = torch.tensor([_as_time(x) for x in local], dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=pg)
    return [_from_time(x) for x in t.cpu().tolist()]


def pick_winner(times: Sequence[Optional[float]], labels: Optional[Sequence[str]] = None) -> int:
    """Index of the lowest time; ties go to the lowest index (identical on every rank).

    None, inf and nan are failures.  If every candidate failed (or there are
    none), raises TuningError, naming the candidates by ``labels`` when given.
    """
    best: Optional[tuple] = None
    for i, t in enumerate(times):
        v = _as_time(t)
        if math.isfinite(v) and (best is None or v < best[0]):
            best = (v, i)
    if best is None:
        names = ", ".join(labels) if labels else f"{len(times)} candidate(s)"
        raise TuningError(f"tiletune: every candidate failed or none was given ({names})")
    return best[1]


def shard_indices(n: int, pg: Any) -> List[int]:
    """The candidate indices (of ``range(n)``) this rank times: round-robin by group rank.

    Rank ``r`` of ``w`` gets ``r, r + w, r + 2w, ...``; together the ranks
    cover every index exactly once.  Inactive group: all of ``range(n)``.
    """
    if not is_active(pg):
        return list(range(n))
    dist = _dist()
    return list(range(dist.get_rank(pg), n, dist.get_world_size(pg)))


def gather_sharded(local: Mapping[int, Optional[float]], n: int, pg: Any) -> List[Optional[float]]:
    """Assemble every rank's share (``{index: time or None}``) into one list of ``n`` times.

    The same list on every rank.  Indices no rank timed come back as None.
    Two all-reduces (length check; MAX over a tensor where other ranks'
    entries are -inf); if ranks pass different ``n``, every rank raises
    TuningError.
    Inactive group: ``[local.get(i) for i in range(n)]`` with failures as None.
    """
    if not is_active(pg):
        return [_from_time(_as_time(local.get(i))) for i in range(n)]
    import torch

    dist = _dist()
    dev = collective_device(pg)
    _check_lengths(n, pg)
    if n == 0:
        return []
    vals = [-math.inf] * n
    for i, t in local.items():
        if 0 <= int(i) < n:
            vals[int(i)] = _as_time(t)
    t = torch.tensor(vals, dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=pg)
    return [_from_time(x) for x in t.cpu().tolist()]


def time_candidates(
    indices: Sequence[int],
    bench_one: Callable[[int], float],
    *,
    pg: Any = None,
    sync: bool = False,
    on_error: Optional[Callable[[int, BaseException], None]] = None,
) -> tuple:
    """Time each candidate with ``bench_one(index) -> ms``; never raises for a candidate.

    Returns ``(times, errors)``: ``{index: ms or None}`` and ``{index: "Type:
    message"}`` for candidates that raised or returned a non-finite time.
    ``Exception`` is caught (KeyboardInterrupt and SystemExit are not).
    ``sync=True`` puts a :func:`barrier` before each candidate so that ranks
    start timing together (for candidates that communicate); every rank must
    then pass the same number of indices.  ``on_error(index, exc)`` is called
    for each failure (for logging).
    """
    times: Dict[int, Optional[float]] = {}
    errors: Dict[int, str] = {}
    for i in indices:
        if sync:
            barrier(pg)
        try:
            t = float(bench_one(i))
            if not math.isfinite(t) or t < 0:
                raise TuningError(f"benchmark returned {t!r} ms")
            times[i] = t
        except Exception as exc:  # a failing candidate is data, never an early exit
            times[i] = None
            errors[i] = f"{type(exc).__name__}: {exc}"
            if on_error is not None:
                try:
                    on_error(i, exc)
                except Exception:
                    pass
    return times, errors


# --------------------------------------------------------------------------- the whole protocol


@dataclass
class Agreement:
    """What :func:`agree_on_best` settled on (identical on every rank except ``local_*``).

    ``index``: the winner; ``times``: the agreed time (ms) per candidate, None
    = failed on some rank or untimed; ``timed``: the indices this rank timed;
    ``local_times`` / ``local_errors``: this rank's own measurements and
    failures; ``world_size`` / ``rank`` / ``sharded``: how it was run.
    """

    index: int
    times: List[Optional[float]]
    timed: List[int]
    local_times: Dict[int, Optional[float]] = field(default_factory=dict)
    local_errors: Dict[int, str] = field(default_factory=dict)
    world_size: int = 1
    rank: int = 0
    sharded: bool = False


def agree_on_best(
    n: int,
    bench_one: Callable[[int], float],
    pg: Any = None,
    *,
    shard: bool = False,
    sync: Optional[bool] = None,
    labels: Optional[Sequence[str]] = None,
    what: str = "tuning",
    on_error: Optional[Callable[[int, BaseException], None]] = None,
    fatal: Tuple[type, ...] = (),
) -> Agreement:
    """Time ``n`` candidates across the ranks of ``pg`` and return the winner every rank agrees on.

    ``bench_one(i)`` times candidate ``i`` on this rank and returns ms (or
    raises: the candidate then counts as failed on every rank).  Without
    ``shard`` every rank times every candidate and the times are combined by
    :func:`combine_timings` (slowest rank decides, a failure anywhere
    excludes); with ``shard=True`` each rank times only
    :func:`shard_indices` and the shares are assembled by
    :func:`gather_sharded` (use it only for candidates that do not
    communicate: ranks run different candidates at the same time).  ``sync``
    (default: on when the group is active and not sharding) barriers before
    each candidate.  If every candidate failed, every rank raises the same
    TuningError listing each candidate (``labels``) with its errors from all
    ranks.

    ``fatal``: exception types that must stop tuning instead of failing one
    candidate (e.g. TiletuneError for a bad launch).  The rank that meets one
    skips its remaining candidates (still reaching every barrier), the ranks
    exchange what they met (one extra all-gather, made whenever ``fatal`` is
    given), and then that rank re-raises its exception and the others raise
    TuningError naming it.  Inactive group: plain local tuning.
    """
    active = is_active(pg)
    rank, world = group_rank(pg), group_size(pg)
    if sync is None:
        sync = active and not shard
    indices = shard_indices(n, pg) if shard else list(range(n))
    stopped: List[BaseException] = []

    def guarded(i: int) -> float:
        if stopped:
            raise TuningError("not run: tuning stopped after a fatal error")
        try:
            return bench_one(i)
        except fatal as exc:
            stopped.append(exc)
            raise

    local_times, local_errors = time_candidates(
        indices, guarded if fatal else bench_one, pg=pg, sync=sync, on_error=on_error
    )
    if fatal:
        met = all_gather_json(f"{type(stopped[0]).__name__}: {stopped[0]}" if stopped else None, pg)
        if stopped:
            raise stopped[0]
        for r, m in enumerate(met):
            if m is not None:
                raise TuningError(f"tiletune: {what}: stopped because rank {r} failed: {m}")
    if shard:
        times = gather_sharded(local_times, n, pg)
    else:
        times = combine_timings([local_times.get(i) for i in range(n)], pg)
    if all(t is None for t in times):  # same decision on every rank: times are identical
        per_rank = all_gather_json({str(i): e for i, e in local_errors.items()}, pg)
        raise TuningError(_all_failed_message(n, labels, per_rank, what))
    index = pick_winner(times, labels)
    return Agreement(
        index=index,
        times=times,
        timed=indices,
        local_times=local_times,
        local_errors=local_errors,
        world_size=world,
        rank=rank,
        sharded=shard,
    )


def _all_failed_message(n: int, labels: Optional[Sequence[str]], per_rank: List[dict], what: str) -> str:
    if n == 0:
        return f"tiletune: {what}: no candidate to tune (the candidate list is empty after pruning)"
    lines = [f"tiletune: {what}: every one of the {n} candidate(s) failed:"]
    for i in range(n):
        label = labels[i] if labels is not None and i < len(labels) else f"candidate {i}"
        errs = [(r, errs[str(i)]) for r, errs in enumerate(per_rank) if str(i) in errs]
        if not errs:
            detail = "failed (no error recorded)"
        elif len(per_rank) == 1:
            detail = errs[0][1]
        else:
            detail = "; ".join(f"rank {r}: {e}" for r, e in errs)
        lines.append(f"  {label}: {detail}")
    lines.append("Fix the failing configs or remove them from the candidate list (prune_fn).")
    return "\n".join(lines)
