"""Tests of the lattice of generalization levels and its predictive tagging."""

from __future__ import annotations

import itertools

import numpy as np

from veil.anonymity.lattice import FEASIBLE, INFEASIBLE, UNKNOWN, Lattice


def test_nodes_are_in_lexicographic_order_and_indexable() -> None:
    lattice = Lattice([1, 2, 3])
    expected = list(itertools.product(range(2), range(3), range(4)))
    assert lattice.size == len(expected) == 24
    assert [lattice.levels(i) for i in range(lattice.size)] == expected
    assert all(lattice.index(node) == i for i, node in enumerate(expected))
    assert lattice.level_sum.tolist() == [sum(node) for node in expected]


def test_neighbours_differ_by_one_level_in_one_qi() -> None:
    lattice = Lattice([1, 2, 3])
    i = lattice.index((0, 1, 3))
    assert sorted(lattice.levels(s) for s in lattice.successors(i)) == [(0, 2, 3), (1, 1, 3)]
    assert sorted(lattice.levels(p) for p in lattice.predecessors(i)) == [(0, 0, 3), (0, 1, 2)]
    assert lattice.successors(lattice.index((1, 2, 3))) == []
    assert lattice.predecessors(0) == []


def test_tagging_marks_the_up_set_and_the_down_set() -> None:
    lattice = Lattice([2, 2])
    lattice.tag_feasible(lattice.index((1, 1)))
    lattice.tag_infeasible(lattice.index((1, 0)))
    status = {lattice.levels(i): int(lattice.status[i]) for i in range(lattice.size)}
    for node, value in status.items():
        if node[0] >= 1 and node[1] >= 1:
            assert value == FEASIBLE
        elif node[0] <= 1 and node[1] == 0:
            assert value == INFEASIBLE
        else:
            assert value == UNKNOWN


def test_chain_climbs_through_unknown_nodes_by_priority() -> None:
    lattice = Lattice([2, 2])
    priority = np.array([float(a + 10 * b) for a, b in itertools.product(range(3), range(3))])
    # Cheapest first: raise QI 0 (priority +1) before QI 1 (+10).
    path = [lattice.levels(i) for i in lattice.chain(0, priority)]
    assert path == [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)]
    lattice.tag_feasible(lattice.index((1, 0)))
    path = [lattice.levels(i) for i in lattice.chain(0, priority)]
    assert path == [(0, 0), (0, 1), (0, 2)]


def test_tagged_blocks_are_exactly_the_up_and_down_sets() -> None:
    # Tagging writes a block of the n-dimensional grid: it must be the order's up-set
    # and down-set, node by node, on a lattice of uneven heights.
    lattice = Lattice([2, 0, 3, 1])
    for i in range(lattice.size):
        node = lattice.nodes[i]
        assert np.array_equal(lattice.up_set(i), np.all(lattice.nodes >= node, axis=1))
        assert np.array_equal(lattice.down_set(i), np.all(lattice.nodes <= node, axis=1))
        other = np.zeros(lattice.size, dtype=np.int8)
        lattice.tag_feasible(i, other)
        assert np.array_equal(other == FEASIBLE, lattice.up_set(i))
        lattice.tag_infeasible(i, other)
        assert np.array_equal(other == INFEASIBLE, lattice.down_set(i))
        assert np.array_equal(other == FEASIBLE, lattice.up_set(i) & ~lattice.down_set(i))
    assert not lattice.status.any()  # the lattice's own status was never touched
