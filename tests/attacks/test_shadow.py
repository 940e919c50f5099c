"""The shadow release: a random part of the records released in memory, the rest held out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.attacks import AttackSpec, Release, shadow_release
from veil.errors import DataTypeError, ParameterError

SPEC = AttackSpec(["a"])


def _records(n: int = 100) -> pd.DataFrame:
    return pd.DataFrame(
        {"a": np.arange(n) % 7, "b": np.arange(n)}, index=[f"r{i}" for i in range(n)]
    )


def test_the_split_is_eighty_percent_capped_by_sample_and_the_rest_is_control() -> None:
    raw = _records()
    seen: list[pd.DataFrame] = []

    def release(frame: pd.DataFrame) -> pd.DataFrame:
        seen.append(frame)
        return frame.sample(frac=1.0, random_state=0)  # shuffled, labels kept

    shadow = shadow_release(raw, release, SPEC, rng=np.random.default_rng(1))
    assert len(shadow.train) == 80 and len(shadow.control) == 20
    assert seen[0].equals(shadow.train)
    together = np.concatenate([shadow.train.index, shadow.control.index])
    assert sorted(together) == list(range(100))  # every record once, labelled by position
    assert shadow.train["b"].tolist() == shadow.train.index.tolist()
    assert sorted(shadow.release.source) == sorted(shadow.train.index)
    capped = shadow_release(raw, release, SPEC, sample=30, rng=np.random.default_rng(1))
    assert len(capped.train) == 30 and len(capped.control) == 70


def test_the_same_seed_gives_the_same_split() -> None:
    raw = _records()

    def split(seed: int) -> list[int]:
        return shadow_release(
            raw, lambda f: f, SPEC, rng=np.random.default_rng(seed)
        ).train.index.tolist()

    assert split(4) == split(4) != split(5)


def test_raw_is_not_modified_and_repeated_labels_still_trace_each_row() -> None:
    raw = _records(50).set_axis([0] * 50)
    before = raw.copy()

    def release(frame: pd.DataFrame) -> pd.DataFrame:
        frame["a"] = -1  # a careless release function
        return frame

    shadow = shadow_release(raw, release, SPEC, rng=np.random.default_rng(2))
    pd.testing.assert_frame_equal(raw, before)
    assert shadow.release.source is not None and shadow.release.source.is_unique


def test_nothing_is_written(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    shadow_release(
        _records(), lambda f: f.copy(), SPEC, other_fn=lambda f: f, rng=np.random.default_rng(3)
    )
    assert list(tmp_path.iterdir()) == []  # type: ignore[attr-defined]


def test_a_record_release_must_keep_the_records_labels() -> None:
    raw = _records()
    with pytest.raises(
        ParameterError, match="released rows have index labels that are not the records given"
    ):
        shadow_release(raw, lambda f: f.reset_index(drop=True), SPEC, rng=np.random.default_rng(4))
    with pytest.raises(ParameterError, match="other_fn"):
        shadow_release(
            raw,
            lambda f: f,
            SPEC,
            other_fn=lambda f: f.set_axis(range(len(f))),
            rng=np.random.default_rng(4),
        )
    synthetic = AttackSpec(["a"], synthetic=True)
    shadow = shadow_release(
        raw, lambda f: f.reset_index(drop=True), synthetic, rng=np.random.default_rng(4)
    )
    assert shadow.release.source is None
    given = shadow_release(
        raw,
        lambda f: Release(f.reset_index(drop=True), source=f.index),
        SPEC,
        rng=np.random.default_rng(4),
    )
    assert given.release.source is not None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fraction": 1.0}, ParameterError, r"fraction: must be a number in \(0, 1\)"),
        ({"fraction": "half"}, ParameterError, "fraction"),
        ({"fraction": 0.001}, ParameterError, "leaves 0 to release"),
        ({"sample": 0}, ParameterError, "sample: must be an integer >= 1"),
        ({"release_fn": "plan.yaml"}, ParameterError, "release_fn: must be a function"),
        ({"release_fn": lambda f: f.to_numpy()}, DataTypeError, "release_fn: must return"),
    ],
)
def test_bad_input_is_named(kwargs: dict[str, object], error: type, message: str) -> None:
    arguments: dict[str, object] = {"release_fn": lambda f: f, **kwargs}
    fn = arguments.pop("release_fn")
    with pytest.raises(error, match=message):
        shadow_release(_records(), fn, SPEC, rng=np.random.default_rng(5), **arguments)  # type: ignore[arg-type]
