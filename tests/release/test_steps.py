"""Step kinds: every treatment has one, planned costs are the mechanisms', needs are declared."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.frames import PRIVACY_ATTR
from veil.release.engine import DaskEngine, PandasEngine
from veil.release.plan import ColumnSpec, InputSpec, LocationSpec
from veil.release.progress import Reporter
from veil.release.steps import (
    ANONYMIZATION,
    COLUMN_KINDS,
    LOCATIONS,
    TREATMENTS,
    Treatment,
    column_step,
    planned_column,
)
from veil.release.steps.anonymize import AnonymizationSpec
from veil.release.steps.base import RECORDS, Counted, Finished

CENTRE = [40.75, -73.98]


def test_every_treatment_spec_has_a_kind_and_back() -> None:
    union = typing.get_args(typing.get_args(Treatment)[0])
    methods = {spec.model_fields["method"].default for spec in union}
    assert methods == set(COLUMN_KINDS) == set(TREATMENTS)


@pytest.mark.parametrize(
    "treatment",
    [
        {"method": "laplace", "epsilon": 0.7, "bounds": [0, 100]},
        {"method": "gaussian", "epsilon": 0.7, "delta": 1e-6, "bounds": [0, 100]},
        {"method": "exponential", "epsilon": 0.7, "domain": [1, 2, 3], "ordinal": True},
        {"method": "randomized_response", "epsilon": 0.7, "domain": [1, 2, 3]},
        {"method": "randomized_response", "epsilon": 0.7, "domain": [1, 2]},
    ],
)
def test_a_noise_step_records_what_its_kind_planned(treatment: dict[str, Any]) -> None:
    spec = ColumnSpec.model_validate({"role": "sensitive", "treatment": treatment}).treatment
    planned = planned_column("x", spec)
    step = column_step("x", spec)
    assert step is not None and step.need == "row" and step.apply is not None
    frame = pd.DataFrame({"x": np.tile([1, 2], 30)})
    out = step.apply(frame, np.random.default_rng(0))
    (recorded,) = out.attrs[PRIVACY_ATTR]
    assert planned.cost is not None
    assert recorded["epsilon"] == pytest.approx(planned.cost.epsilon)
    assert recorded["delta"] == pytest.approx(planned.cost.delta)
    assert frame["x"].tolist() == np.tile([1, 2], 30).tolist()  # input untouched


@pytest.mark.parametrize(
    ("location", "need"),
    [
        ({"centre": CENTRE, "mask": {"method": "planar_laplace", "epsilon": 0.01}}, "row"),
        ({"projection": "data", "mask": {"method": "planar_laplace", "epsilon": 0.01}}, "table"),
        ({"region": [40, -75, 41, -73], "mask": {"method": "jitter", "radius_m": 50}}, "row"),
        ({"centre": CENTRE, "mask": {"method": "grid", "cell_m": 100}}, "row"),
        ({"centre": CENTRE, "mask": {"method": "grid", "cell_m": 100, "min_count": 3}}, "counts"),
        (
            {"projection": "data", "mask": {"method": "grid", "cell_m": 100, "min_count": 3}},
            "table",
        ),
        ({"centre": CENTRE, "mask": {"method": "cloak", "k": 5}}, "table"),
    ],
)
def test_a_location_step_declares_what_it_needs(location: dict[str, Any], need: str) -> None:
    loc = LocationSpec.model_validate({"lat": "la", "lon": "lo", **location})
    step = LOCATIONS.build(loc)
    assert step.need == need
    assert step.columns == ("la", "lo")
    assert (step.counted is not None) == (need == "counts")
    if step.counted is not None:
        assert step.counted.keys == ("la", "lo") and step.counted.present_only


def test_the_anonymization_counts_its_classes_and_finishes_after_the_drops(
    tmp_path: Path,
) -> None:
    (tmp_path / "zip.csv").write_text("4301,430*,*\n4302,430*,*\n4401,440*,*\n")
    spec = AnonymizationSpec.model_validate(
        {
            "quasi_identifiers": {"zip": str(tmp_path / "zip.csv")},
            "models": [{"k_anonymity": 2}, {"distinct_l_diversity": {"attribute": "d", "l": 2}}],
            "max_suppression": 0.2,
        }
    )
    step = ANONYMIZATION.build(spec)
    assert (step.need, step.apply, step.scope) == ("counts", None, "table")
    assert step.counted is not None and step.counted.after_drop
    assert step.counted.keys == ("zip", "d")
    counts = pd.DataFrame(
        {"zip": ["4301", "4302", "4401"], "d": ["a", "b", "a"], RECORDS: [3, 3, 1]}
    )
    finished = step.counted.from_counts(counts, 7)
    assert finished.facts is not None and finished.facts["levels"] == {"zip": 1}
    frame = pd.DataFrame({"zip": ["4301", "4302", "4401"], "d": ["a", "b", "a"]})
    released = finished.finish(frame)
    assert released["zip"].tolist() == ["430*", "430*"]  # the lone 440* record is suppressed
    assert "7 records over zip, d gave 3 classes" in finished.detail


def test_both_engines_count_the_same_classes_of_the_noised_rows(tmp_path: Path) -> None:
    gen = np.random.default_rng(2)
    frame = pd.DataFrame({"c": gen.choice(["a", "b", "c"], 3000), "z": gen.integers(0, 3, 3000)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    spec = ColumnSpec.model_validate(
        {
            "role": "sensitive",
            "treatment": {
                "method": "randomized_response",
                "epsilon": 1.0,
                "domain": ["a", "b", "c"],
            },
        }
    ).treatment
    step = column_step("c", spec)
    assert step is not None
    # Any counted step will do: records per (c, z) after the noise.
    keys = Counted(("c", "z"), lambda counts, rows: Finished(lambda f: f, ""))
    spec_in = InputSpec(path=tmp_path / "in.csv")
    reporter = Reporter()
    totals = []
    for engine in (PandasEngine(), DaskEngine("threads", npartitions=1)):
        with engine.session():
            data = engine.read(spec_in)
            rows = engine.rows(data, [step], [np.random.default_rng(9)], reporter)
            counts, _ = engine.count(rows, {"k": keys}, reporter)
        table = counts["k"].sort_values(["c", "z"]).reset_index(drop=True)
        totals.append(table)
        assert int(table[RECORDS].sum()) == 3000
    # One partition, the same stream: the same noise, hence the same class counts.
    pd.testing.assert_frame_equal(totals[0], totals[1], check_dtype=False)


def test_merged_masking_adds_the_counts_of_every_part_and_keeps_the_steps_order() -> None:
    """Partitions of one table: a drop recorded by some parts only is counted once, summed."""
    from veil.frames import merge_masking

    token = {"column": "id", "method": "vault token", "key_id": "k1", "namespace": "id"}
    drop = {"method": "outside the projection's region: dropped", "columns": ["lat", "lon"]}
    ff1 = {"column": "ssn", "method": "ff1", "key_id": "k2", "radix": 10}
    first = [token, ff1]
    second = [token, {**drop, "dropped": 3}, ff1]
    third = [token, {**drop, "dropped": 4}, ff1]
    merged = merge_masking(merge_masking(first, second), third)
    assert merged == [token, {**drop, "dropped": 7}, ff1]  # radix is no count: not summed
    assert first == [token, ff1] and second[1]["dropped"] == 3  # inputs left as they were
