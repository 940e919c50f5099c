"""The seed's lattice table (section 83.4), reproduced by the search's lattice.

The seed enumerates every (zip, age, sex) generalization of a registry, keeps those that
are 10-anonymous after suppressing at most 1% of records, and ranks them by
discernibility (sum of squared class sizes plus n per suppressed record). Here the
seed's procedure is re-run with pandas group-bys on a registry of the same shape and
compared, node by node, with the lattice table of :func:`veil.anonymity.anonymize`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import Hierarchy, KAnonymity, anonymize, entropy_l_diversity, l_diversity

LEVELS = {"zip": 4, "age": 4, "sex": 2}


def _gen_zip(z: str, level: int) -> str:
    return z if level == 0 else (z[: 5 - level] + "*" * level if level < 3 else "*")


def _gen_age(a: int, level: int) -> str:
    width = [1, 5, 10, 20][level]
    lo = (a // width) * width
    return str(a) if level == 0 else f"{lo}-{lo + width - 1}"


def _registry(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(83)
    zips = [f"652{i:02d}" for i in range(15)]
    return pd.DataFrame(
        {
            "zip": rng.choice(zips, n, p=np.linspace(1, 3, 15) / np.linspace(1, 3, 15).sum()),
            "age": np.clip(rng.normal(50, 15, n).round(), 18, 95).astype(int),
            "sex": rng.choice(["F", "M"], n),
            "diagnosis": rng.choice(["flu", "cancer", "diabetes", "asthma"], n),
        }
    )


def _seed_lattice(registry: pd.DataFrame, k: int, max_suppress: float) -> pd.DataFrame:
    rows = []
    for lv in itertools.product(*(range(m) for m in LEVELS.values())):
        g = pd.DataFrame(
            {
                "zip": [_gen_zip(z, lv[0]) for z in registry["zip"]],
                "age": [_gen_age(a, lv[1]) for a in registry["age"]],
                "sex": registry["sex"] if lv[2] == 0 else "*",
            }
        )
        size = g.groupby(["zip", "age", "sex"])["zip"].transform("size")
        suppressed = int((size < k).sum())
        kept = g[size >= k].groupby(["zip", "age", "sex"]).size()
        rows.append(
            {
                "levels": lv,
                "feasible": suppressed <= max_suppress * len(g),
                "suppressed": suppressed,
                "discernibility": float((kept**2).sum() + suppressed * len(g)),
                "classes": len(kept),
            }
        )
    return pd.DataFrame(rows)


def _hierarchies(registry: pd.DataFrame) -> dict[str, Hierarchy]:
    """The seed's generalizations; veil's hierarchies end at "*", so age gets a level 4."""
    zips = sorted(registry["zip"].unique())
    ages = list(range(18, 96))
    zip_levels = {lv: [_gen_zip(z, lv) for z in zips] for lv in range(4)}
    age_levels = {lv: [_gen_age(a, lv) for a in ages] for lv in range(4)} | {4: ["*"] * len(ages)}
    return {
        "zip": Hierarchy.from_frame(pd.DataFrame(zip_levels)),
        "age": Hierarchy.from_frame(pd.DataFrame(age_levels)),
        "sex": Hierarchy.from_frame(pd.DataFrame({0: ["F", "M"], 1: ["*", "*"]})),
    }


@pytest.mark.parametrize(("k", "max_suppress"), [(10, 0.01), (5, 0.0), (25, 0.05)])
def test_lattice_table_matches_the_seed_procedure(k: int, max_suppress: float) -> None:
    registry = _registry()
    hierarchies = _hierarchies(registry)
    seed = _seed_lattice(registry, k, max_suppress)
    result = anonymize(
        registry, hierarchies, [KAnonymity(k)], max_suppression=max_suppress,
        metric="discernibility", sensitive="diagnosis",
    )  # fmt: skip
    lattice = result.lattice
    assert len(seed) == 32
    assert len(lattice) == 40  # the seed's 32 nodes and the 8 with age at "*"
    ours = {tuple(int(r[q]) for q in LEVELS): r for _, r in lattice.iterrows()}
    decided = measured = 0
    for _, row in seed.iterrows():
        mine = ours[row["levels"]]
        if not pd.isna(mine["feasible"]):
            decided += 1
            assert bool(mine["feasible"]) == row["feasible"], row["levels"]
        if mine["evaluated"] and row["feasible"]:
            measured += 1
            assert mine["suppressed"] == row["suppressed"]
            assert mine["discernibility"] == row["discernibility"]
            assert mine["classes"] == row["classes"]
    # Nodes left undecided were pruned by the bound; tagged nodes carry no metrics.
    assert decided >= 16
    assert measured >= 1
    best = seed.loc[seed["feasible"]].sort_values("discernibility").iloc[0]
    assert result.metrics["discernibility"] <= best["discernibility"]
    if result.levels["age"] < 4:
        assert result.metrics["discernibility"] == best["discernibility"]
        assert tuple(result.levels[q] for q in LEVELS) == best["levels"]
    # The seed's extra columns for the chosen release: distinct and entropy l.
    released = result.data
    groups = released.groupby(list(LEVELS))["diagnosis"]
    assert l_diversity(released, list(LEVELS), ["diagnosis"]) == groups.nunique().min()
    shares = released.groupby(list(LEVELS))["diagnosis"].value_counts(normalize=True)
    entropy = -(shares * np.log(shares)).groupby(level=list(range(len(LEVELS)))).sum()
    assert entropy_l_diversity(released, list(LEVELS), ["diagnosis"]) == pytest.approx(
        float(np.exp(entropy.min()))
    )
