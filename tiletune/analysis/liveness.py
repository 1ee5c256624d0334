"""Peak live bytes of a kernel body by a linear liveness scan.

The body interpreter calls :meth:`LiveRanges.tick` once per simple statement
(in source order, loop bodies once), :meth:`define` when a tile is bound to a
name, :meth:`use` when a name is read, and brackets loop bodies with
:meth:`enter_loop`/:meth:`exit_loop`.  A variable version lives from its
definition to its last use; a version defined before a loop and read inside
it lives to the end of the loop (it is needed again on the next iteration),
and re-assigning such a name inside the loop updates the same version (a
loop-carried value such as an accumulator).  :meth:`temp` adds bytes live
only during one statement (a load or dot result that is never named).

:meth:`peak` returns the maximum, over statements, of the summed bytes live
there: an ``emax`` of sums, keeping only live sets not contained in another.
"""

from __future__ import annotations

from typing import Optional

from .expr import Expr, const, emax, total
from .values import collect

__all__ = ["LiveRanges"]


class _Version:
    __slots__ = ("name", "bytes", "start", "end")

    def __init__(self, name: str, nbytes: Expr, start: int):
        self.name = name
        self.bytes = nbytes
        self.start = start
        self.end = start


class LiveRanges:
    """Live intervals of tile-valued variables (see the module docstring)."""

    def __init__(self) -> None:
        self.t = 0
        self._versions: list[_Version] = []
        self._current: dict[str, _Version] = {}
        self._loops: list[tuple[int, list[_Version]]] = []

    def tick(self) -> int:
        """Advance to the next statement; returns its time index."""
        self.t += 1
        return self.t

    def use(self, name: str) -> None:
        """``name`` is read at the current statement."""
        v = self._current.get(name)
        if v is None:
            return
        v.end = max(v.end, self.t)
        for start, carried in self._loops:
            if v.start < start:
                carried.append(v)

    def define(self, name: str, nbytes: Optional[Expr], augmented: bool = False) -> None:
        """``name`` is bound to a tile of ``nbytes`` bytes (``None``: not a tile)."""
        v = self._current.get(name)
        carried = v is not None and self._loops and v.start < self._loops[-1][0]
        if v is not None and (augmented or carried):
            if nbytes is not None and nbytes != v.bytes:
                v.bytes = nbytes if v.bytes is None else emax(v.bytes, nbytes)
            v.end = max(v.end, self.t)
            if carried:
                self._loops[-1][1].append(v)
            return
        if nbytes is None:
            self._current.pop(name, None)
            return
        nv = _Version(name, nbytes, self.t)
        self._versions.append(nv)
        self._current[name] = nv

    def temp(self, nbytes: Expr) -> None:
        """Bytes live during the current statement only."""
        v = _Version("", nbytes, self.t)
        self._versions.append(v)

    def enter_loop(self) -> None:
        """The statements that follow, up to :meth:`exit_loop`, form a loop body."""
        self._loops.append((self.t + 1, []))

    def exit_loop(self) -> None:
        """End of the innermost loop body."""
        _, carried = self._loops.pop()
        for v in carried:
            v.end = max(v.end, self.t)
        if self._loops:
            self._loops[-1][1].extend(v for v in carried if v.start < self._loops[-1][0])

    def snapshot(self) -> dict:
        """The current name -> version map (for joining ``if`` branches)."""
        return dict(self._current)

    def restore(self, snap: dict) -> None:
        """Reset the name -> version map (the other branch of an ``if``)."""
        self._current = dict(snap)

    def merge(self, other: dict) -> None:
        """Names bound in another branch stay live too."""
        for k, v in other.items():
            self._current.setdefault(k, v)

    def peak(self) -> Expr:
        """The peak live bytes (see the module docstring)."""
        vs = [v for v in self._versions if v.bytes is not None]
        if not vs:
            return const(0)
        sets: list[frozenset] = []
        seen: set[frozenset] = set()
        for t in range(1, self.t + 1):
            live = frozenset(i for i, v in enumerate(vs) if v.start <= t <= v.end)
            if live and live not in seen:
                seen.add(live)
                sets.append(live)
        maximal = [s for s in sets if not any(s < o for o in sets)]
        sums: list[Expr] = []
        for s in maximal:
            e = collect(total(vs[i].bytes for i in sorted(s)))
            if e not in sums:
                sums.append(e)
        return emax(*sums) if sums else const(0)
