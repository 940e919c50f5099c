"""The generalization lattice: nodes, their order, and predictive tagging.

A node picks one hierarchy level per quasi-identifier; node ``a`` is a predecessor of
``b`` (finer) when ``a <= b`` level by level. Feasibility under a *monotone* set of
privacy models is an up-set of this order: a feasible node's successors are feasible
and an infeasible node's predecessors are infeasible, so one evaluation settles
whole regions of the lattice ("predictive tagging", Flash [1]_). The nodes are held
in lexicographic order, so a status array read as an n-dimensional grid (one axis per
QI) holds an up-set or a down-set as one rectangular block: tagging a region is a
single slice assignment, whatever the lattice's size.

References
----------
.. [1] F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, "Flash: efficient,
   stable and optimal k-anonymity", SocialCom/PASSAT 2012.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["MATERIALIZE_LIMIT", "Lattice"]

#: Largest lattice held as an array (nodes x QIs, one byte each); larger lattices are
#: explored lazily (see :mod:`veil.anonymity.search`).
MATERIALIZE_LIMIT = 2_000_000

UNKNOWN, FEASIBLE, INFEASIBLE = 0, 1, -1

_Bools = npt.NDArray[np.bool_]


class Lattice:
    """Every node of a lattice with its status.

    Node ``i`` is the ``i``-th tuple of ``itertools.product(range(h0 + 1), ...)``
    (lexicographic order); ``status[i]`` is :data:`UNKNOWN`, :data:`FEASIBLE` or
    :data:`INFEASIBLE`.
    """

    def __init__(self, heights: Sequence[int]) -> None:
        self.heights = np.asarray(heights, dtype=np.int64)
        radix = self.heights + 1
        self.size = math.prod(int(r) for r in radix)
        # strides[j]: how far node indices move when QI j goes up one level.
        self.strides = np.ones(len(radix), dtype=np.int64)
        for j in range(len(radix) - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * radix[j + 1]
        self._shape = tuple(int(r) for r in radix)
        # (QI, stride, height) per QI, as Python ints for the per-node loops.
        self._steps = [
            (j, int(s), int(h))
            for j, (s, h) in enumerate(zip(self.strides, self.heights, strict=True))
        ]
        grids = np.indices(self._shape, dtype=np.int8)
        self.nodes = grids.reshape(len(radix), -1).T.copy()
        self.level_sum = self.nodes.sum(axis=1, dtype=np.int64)
        self.status = np.zeros(self.size, dtype=np.int8)

    def index(self, node: Sequence[int]) -> int:
        """The index of a node given as levels."""
        return int(np.dot(np.asarray(node, dtype=np.int64), self.strides))

    def levels(self, i: int) -> tuple[int, ...]:
        """The levels of node ``i``."""
        return tuple(self.nodes[i].tolist())

    def successors(self, i: int) -> list[int]:
        """Nodes one level coarser in one QI."""
        node = self.nodes[i].tolist()
        return [i + stride for j, stride, height in self._steps if node[j] < height]

    def predecessors(self, i: int) -> list[int]:
        """Nodes one level finer in one QI."""
        node = self.nodes[i].tolist()
        return [i - stride for j, stride, _ in self._steps if node[j] > 0]

    def up_set(self, i: int) -> _Bools:
        """Mask of ``i`` and every node coarser than it."""
        mask = np.zeros(self._shape, dtype=bool)
        mask[self._block(i, up=True)] = True
        return mask.reshape(-1)

    def down_set(self, i: int) -> _Bools:
        """Mask of ``i`` and every node finer than it."""
        mask = np.zeros(self._shape, dtype=bool)
        mask[self._block(i, up=False)] = True
        return mask.reshape(-1)

    def _block(self, i: int, *, up: bool) -> tuple[slice, ...]:
        """The up-set (or down-set) of node ``i`` as a block of the n-dimensional grid."""
        node = self.nodes[i].tolist()
        if up:
            return tuple(slice(v, None) for v in node)
        return tuple(slice(0, v + 1) for v in node)

    def tag_feasible(self, i: int, status: npt.NDArray[np.int8] | None = None) -> None:
        """Node ``i`` is feasible under monotone models: so is everything above it.

        ``status`` is another status array of the same nodes to tag instead.
        """
        target = self.status if status is None else status
        target.reshape(self._shape)[self._block(i, up=True)] = FEASIBLE

    def tag_infeasible(self, i: int, status: npt.NDArray[np.int8] | None = None) -> None:
        """Node ``i`` is infeasible under monotone models: so is everything below it."""
        target = self.status if status is None else status
        target.reshape(self._shape)[self._block(i, up=False)] = INFEASIBLE

    def chain(
        self,
        i: int,
        priority: npt.NDArray[np.float64],
        status: npt.NDArray[np.int8] | None = None,
    ) -> list[int]:
        """A path upwards from ``i`` through unknown nodes, cheapest step first.

        Each step moves to the unknown successor of lowest ``priority`` (ties: lowest
        index); the path ends where no successor is unknown. Along the path
        feasibility is monotone, so a binary search finds its lowest feasible node.
        """
        known = self.status if status is None else status
        node = self.nodes[i].tolist()
        path = [i]
        while True:
            here = path[-1]
            candidates = [
                (float(priority[here + stride]), here + stride, j)
                for j, stride, height in self._steps
                if node[j] < height and known[here + stride] == UNKNOWN
            ]
            if not candidates:
                return path
            _, step, j = min(candidates)
            node[j] += 1
            path.append(step)
