"""Predicate counting on shared ranks agrees with pandas on the values themselves."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.attacks.encoding import encode
from veil.attacks.predicates import EQ, GE, GT, LE, LT, MISSING, NE, Predicates, count, rank

_OPS: dict[int, Callable[[Any, Any], Any]] = {
    EQ: operator.eq,
    NE: operator.ne,
    LT: operator.lt,
    LE: operator.le,
    GT: operator.gt,
    GE: operator.ge,
}

numbers = st.one_of(st.none(), st.integers(-3, 3).map(float))
labels = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(numbers, labels), min_size=1, max_size=25),
    conditions=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 6), st.integers(0, 24)),
        min_size=1,
        max_size=3,
    ),
)
def test_count_matches_pandas(
    rows: list[tuple[float | None, str | None]], conditions: list[tuple[int, int, int]]
) -> None:
    frame = pd.DataFrame(rows, columns=["x", "s"]).astype({"x": "float64", "s": "object"})
    ranked = rank(encode(["x", "s"], [frame]))
    expected = pd.Series(True, index=frame.index)
    columns, ops, ranks = [], [], []
    for column, op, row in conditions:
        row %= len(frame)
        name = ["x", "s"][column]
        if column == 1 and op in (LT, LE, GT, GE):
            op = EQ  # categories have no order
        value = frame[name].iloc[row]
        if pd.isna(value):
            op = MISSING
        held = frame[name]
        if op == MISSING:
            expected &= held.isna()
        else:
            expected &= held.notna() & _OPS[op](held, value)
        columns.append(column)
        ops.append(op)
        ranks.append(ranked.frames[0][column, row])
    predicates = Predicates(
        np.array([columns], dtype=np.intp),
        np.array([ops], dtype=np.int8),
        np.array([ranks], dtype=np.int32),
    )
    assert count(ranked.frames[0], predicates)[0] == int(expected.sum())


def test_below_the_smallest_value_holds_nowhere() -> None:
    ranked = rank(encode(["x"], [pd.DataFrame({"x": [1.0, 2.0, np.nan]})]))
    none = Predicates(np.array([[0]]), np.array([[LT]], dtype=np.int8), np.array([[0]], np.int32))
    above = Predicates(np.array([[0]]), np.array([[GT]], dtype=np.int8), np.array([[1]], np.int32))
    assert count(ranked.frames[0], Predicates.concat([none, above])).tolist() == [0, 0]


def test_distinct_predicates_ignore_the_order_of_conditions() -> None:
    predicates = Predicates(
        np.array([[0, 1], [1, 0], [0, 1]]),
        np.array([[EQ, LE], [LE, EQ], [EQ, GE]], dtype=np.int8),
        np.array([[2, 5], [5, 2], [2, 5]], dtype=np.int32),
    )
    assert predicates.first_unique().tolist() == [0, 2]


def test_a_predicate_reads_with_the_data_s_values() -> None:
    frame = pd.DataFrame({"age": [30, 71, 45], "job": ["Farming", "Sales", None]})
    ranked = rank(encode(["age", "job"], [frame]))
    predicate = Predicates(
        np.array([[0, 1]]), np.array([[GE, EQ]], dtype=np.int8), np.array([[2, 0]], np.int32)
    )
    assert predicate.describe(0, ranked) == "age >= 71 and job == Farming"
