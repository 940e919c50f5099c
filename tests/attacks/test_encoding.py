"""The shared encoding of a release and the attacker's views, and the nearest-row search."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.attacks.encoding import encode, groups
from veil.attacks.neighbours import nearest


def test_numbers_are_scaled_by_the_release_s_range_for_every_frame() -> None:
    release = pd.DataFrame({"x": [0.0, 10.0]})
    near, far = pd.DataFrame({"x": [5.0]}), pd.DataFrame({"x": [5.0, 40.0]})
    one = encode(["x"], [release, near])
    two = encode(["x"], [release, far])
    # The same target gets the same code whatever else is encoded beside it.
    assert one.frames[1][0, 0] == two.frames[1][0, 0] == 0.5
    assert one.spans[0] == two.spans[0] == 10.0


def test_text_that_reads_as_numbers_is_a_number_and_categories_share_codes() -> None:
    release = pd.DataFrame({"n": ["1", "2", None], "c": ["a", "b", None]})
    raw = pd.DataFrame({"n": [2, 1, 3], "c": ["b", "z", None]})
    encoded = encode(["n", "c"], [release, raw])
    assert encoded.numeric.tolist() == [True, False]
    assert np.isnan(encoded.frames[0][2, 0])
    rel, tgt = encoded.frames
    assert tgt[0, 1] == rel[1, 1]  # "b" is "b" in both
    assert rel[2, 1] == tgt[2, 1] == -1  # missing is missing
    assert encoded.decode(1, tgt[1, 1]) == "z" and encoded.decode(0, 1.0) == "1"


def test_groups_number_rows_and_miss_what_the_release_lacks() -> None:
    ours, theirs = groups(
        np.array([[1.0, np.nan], [2.0, 0.0], [1.0, np.nan]]), np.array([[1.0, np.nan], [5.0, 5.0]])
    )
    assert ours[0] == ours[2] != ours[1]
    assert theirs.tolist() == [ours[0], -1]


def test_nearest_breaks_ties_at_random() -> None:
    base = np.zeros((4, 1))  # four identical released rows
    query = np.zeros((2000, 1))
    index, distance = nearest(query, base, np.array([False]), np.random.default_rng(1))
    assert (distance == 0).all()
    # Each search orders the rows afresh, so over many searches every row is picked.
    picks = [
        nearest(query[:1], base, np.array([False]), np.random.default_rng(s))[0][0, 0]
        for s in range(40)
    ]
    assert set(picks) == {0, 1, 2, 3}
    assert set(index[:, 0]) <= {0, 1, 2, 3}


def test_nearest_adds_numbers_and_mismatched_categories() -> None:
    base = np.array([[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]])
    query = np.array([[0.45, 1.0], [np.nan, 0.0]])
    index, distance = nearest(query, base, np.array([True, False]), np.random.default_rng(2), k=2)
    assert index[0].tolist() == [1, 0]
    assert distance[0].tolist() == pytest.approx([0.05, 1.45], abs=1e-6)
    # A missing number differs by 1 from everything: the category decides.
    assert set(index[1].tolist()) == {0, 2} and distance[1].tolist() == [1.0, 1.0]
