"""The generalization lattice: nodes, their order, and predictive tagging.

A node picks one hierarchy level per quasi-identifier; node ``a`` is a predecessor of
``b`` (finer) when ``a <= b`` level by level. Feasibility under a *monotone* set of
privacy models is an up-set of this order: a feasible node's successors are feasible
and an infeasible node's predecessors are infeasible, so one evaluation settles
whole regions of the lattice ("predictive tagging", Flash [1]_). The nodes are held
as one integer array so that tagging a region is a single vectorized comparison.

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
        grids = np.indices([int(r) for r in radix], dtype=np.int8)
        self.nodes = grids.reshape(len(radix), -1).T.copy()
        self.level_sum = self.nodes.sum(axis=1, dtype=np.int64)
        self.status = np.zeros(self.size, dtype=np.int8)

    def index(self, node: Sequence[int]) -> int:
        """The index of a node given as levels."""
        return int(np.dot(np.asarray(node, dtype=np.int64), self.strides))

    def levels(self, i: int) -> tuple[int, ...]:
        """The levels of node ``i``."""
        return tuple(int(v) for v in self.nodes[i])

    def successors(self, i: int) -> list[int]:
        """Nodes one level coarser in one QI."""
        node = self.nodes[i]
        return [i + int(self.strides[j]) for j in np.flatnonzero(node < self.heights)]

    def predecessors(self, i: int) -> list[int]:
        """Nodes one level finer in one QI."""
        node = self.nodes[i]
        return [i - int(self.strides[j]) for j in np.flatnonzero(node > 0)]

    def up_set(self, i: int) -> _Bools:
        """Mask of ``i`` and every node coarser than it."""
        mask: _Bools = np.all(self.nodes >= self.nodes[i], axis=1)
        return mask

    def down_set(self, i: int) -> _Bools:
        """Mask of ``i`` and every node finer than it."""
        mask: _Bools = np.all(self.nodes <= self.nodes[i], axis=1)
        return mask

    def tag_feasible(self, i: int, status: npt.NDArray[np.int8] | None = None) -> None:
        """Node ``i`` is feasible under monotone models: so is everything above it.

        ``status`` is another status array of the same nodes to tag instead.
        """
        (self.status if status is None else status)[self.up_set(i)] = FEASIBLE

    def tag_infeasible(self, i: int, status: npt.NDArray[np.int8] | None = None) -> None:
        """Node ``i`` is infeasible under monotone models: so is everything below it."""
        (self.status if status is None else status)[self.down_set(i)] = INFEASIBLE

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
        path = [i]
        while True:
            candidates = [s for s in self.successors(path[-1]) if known[s] == UNKNOWN]
            if not candidates:
                return path
            path.append(min(candidates, key=lambda s: (priority[s], s)))
