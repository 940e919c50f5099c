"""Arguments that used to give silently wrong output are refused with a clear message.

* A bare string (or bytes) passed as ``domain=`` was split into its characters.
* ``new_column=True`` silently replaced an existing ``dp_<column>`` column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError
from veil.ldp.categorical import (
    dp_exponential,
    dp_exponential_array,
    dp_randomized_response_binary,
    dp_randomized_response_binary_array,
    dp_randomized_response_kary,
    dp_randomized_response_kary_array,
)
from veil.ldp.numerical import dp_clip_gaussian, dp_clip_laplace
from veil.mechanisms._validation import unique_labels


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "letter": ["a", "b", "c", "a"],
            "pair": ["a", "b", "b", "a"],
            "age": [20, 30, 40, 50],
            "dp_age": [-1, -1, -1, -1],
            "dp_letter": ["x", "x", "x", "x"],
        }
    )


STRING_DOMAIN_CALLS = [
    lambda d: dp_exponential(_frame(), "letter", 1.0, domain=d, rng=_gen(0)),
    lambda d: dp_randomized_response_kary(_frame(), "letter", 1.0, domain=d, rng=_gen(0)),
    lambda d: dp_randomized_response_binary(_frame(), "pair", 1.0, domain=d, rng=_gen(0)),
    lambda d: dp_exponential_array(["a", "b", "c"], 1.0, domain=d, rng=_gen(0)),
    lambda d: dp_randomized_response_kary_array(["a", "b", "c"], 1.0, domain=d, rng=_gen(0)),
    lambda d: dp_randomized_response_binary_array(["a", "b"], 1.0, domain=d, rng=_gen(0)),
]
STRING_DOMAIN_IDS = ["exp", "kary", "binary", "exp-array", "kary-array", "binary-array"]


@pytest.mark.parametrize("call", STRING_DOMAIN_CALLS, ids=STRING_DOMAIN_IDS)
@pytest.mark.parametrize("domain", ["abc", b"abc", "ab"])
def test_a_bare_string_domain_is_refused(call: Any, domain: Any) -> None:
    # "ab" used to become the domain ["a", "b"] and run without a word.
    with pytest.raises(ParameterError, match=r"domain: must be a sequence of categories") as info:
        call(domain)
    assert repr(domain) in str(info.value)


def test_a_single_category_domain_as_a_list_is_still_a_list() -> None:
    with pytest.raises(ParameterError, match="needs exactly 2 categories"):
        dp_randomized_response_binary_array(["ab", "ab"], 1.0, domain=["ab"], rng=_gen(0))


def test_unique_labels_refuses_a_bare_string() -> None:
    with pytest.raises(ParameterError, match="domain: must be a sequence of categories"):
        unique_labels("abc")


NEW_COLUMN_CALLS = [
    ("age", lambda df, **kw: dp_clip_laplace(df, "age", 1.0, 0, 100, True, rng=_gen(1), **kw)),
    (
        "age",
        lambda df, **kw: dp_clip_gaussian(df, "age", 0.5, 0, 100, 1e-5, True, rng=_gen(1), **kw),
    ),
    (
        "letter",
        lambda df, **kw: dp_exponential(
            df, "letter", 1.0, True, domain=["a", "b", "c"], rng=_gen(1), **kw
        ),
    ),
    (
        "letter",
        lambda df, **kw: dp_randomized_response_kary(
            df, "letter", 1.0, True, domain=["a", "b", "c"], rng=_gen(1), **kw
        ),
    ),
    (
        "pair",
        lambda df, **kw: dp_randomized_response_binary(
            df.rename(columns={"dp_letter": "dp_pair"}),
            "pair",
            1.0,
            True,
            domain=["a", "b"],
            rng=_gen(1),
            **kw,
        ),
    ),
]
NEW_COLUMN_IDS = ["laplace", "gaussian", "exp", "kary", "binary"]


@pytest.mark.parametrize(("column", "call"), NEW_COLUMN_CALLS, ids=NEW_COLUMN_IDS)
def test_new_column_refuses_to_replace_an_existing_column(column: str, call: Any) -> None:
    df = _frame()
    before = df.copy(deep=True)
    with pytest.raises(ParameterError, match=f"new_column: .*'dp_{column}'.*overwrite=True"):
        call(df)
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize(("column", "call"), NEW_COLUMN_CALLS, ids=NEW_COLUMN_IDS)
def test_overwrite_replaces_the_existing_column_without_touching_the_input(
    column: str, call: Any
) -> None:
    df = _frame()
    before = df.copy(deep=True)
    out = call(df, overwrite=True)
    pd.testing.assert_frame_equal(df, before)
    assert not (out[f"dp_{column}"].astype(str) == "x").any()
    assert not (out[f"dp_{column}"].astype(str) == "-1").any()
    pd.testing.assert_series_equal(out[column], df[column])


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
def test_dp_clip_gaussian_names_the_sampler_it_used(sampler: Any) -> None:
    # dp_clip_gaussian said "discrete Gaussian" while drawing the rounded one; the
    # recorded cost now names the sampler, and sampler="discrete" is available.
    out = dp_clip_gaussian(_frame(), "age", 0.5, 0, 100, 1e-5, sampler=sampler, rng=_gen(2))
    assert f"gaussian (classic, {sampler}," in out.attrs["veil.privacy"][-1]["mechanism"]
