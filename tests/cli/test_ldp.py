"""``veil ldp`` end to end on small files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from veil.datasets import ADULT_DOMAINS

from .conftest import Veil


def test_ldp_laplace_reports_its_cost_and_stays_in_bounds(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "age.csv"
    result = veil(
        "ldp", adult_csv, "--column", "age", "--mechanism", "laplace", "--epsilon", "1",
        "--bounds", "16,100", "--drop-other", "--out", out, "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["total"]["epsilon"] == pytest.approx(1.0)
    assert data["costs"][0]["scope"] == "age" and data["costs"][0]["notion"] == "ldp"
    released = pd.read_csv(out)
    assert len(released) == 600
    assert released["age"].between(16, 100).all()


def test_ldp_categorical_with_a_declared_domain_and_a_seed(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    domain = ",".join(ADULT_DOMAINS["workclass"])
    args = ["ldp", adult_csv, "--column", "workclass", "--mechanism", "krr", "--epsilon", "2",
            "--domain", domain, "--missing", "keep", "--seed", "5", "--new-column",
            "--drop-other"]  # fmt: skip
    first = veil(*args, "--out", tmp_path / "a.csv")
    assert first.code == 0, first.err
    assert "ReproducibleNoiseWarning" in first.err
    assert "privacy per record: epsilon=2" in first.out
    second = veil(*args, "--out", tmp_path / "b.csv")
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(a, b)
    assert set(a["dp_workclass"].dropna()) <= set(ADULT_DOMAINS["workclass"])
    assert second.code == 0


def test_ldp_gaussian_and_exponential(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    gaussian = veil(
        "ldp", adult_csv, "--column", "hours-per-week", "--mechanism", "gaussian",
        "--epsilon", "2", "--bounds", "1,99", "--delta", "1e-6", "--calibration", "analytic",
        "--out", tmp_path / "g.csv", "--json", "--drop-other",
    )  # fmt: skip
    assert gaussian.code == 0, gaussian.err
    assert json.loads(gaussian.out)["total"]["delta"] == pytest.approx(1e-6)
    levels = ",".join(str(i) for i in range(1, 17))
    exponential = veil(
        "ldp", adult_csv, "--column", "education-num", "--mechanism", "exponential",
        "--epsilon", "2", "--domain", levels, "--ordinal", "--calibration", "full",
        "--out", tmp_path / "e.csv", "--keep-other", "--acknowledge", "fnlwgt,education",
    )  # fmt: skip
    assert exponential.code == 0, exponential.err
    assert pd.read_csv(tmp_path / "e.csv")["education-num"].between(1, 16).all()


def test_ldp_domain_from_data_warns_of_the_leak(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "sex", "--mechanism", "binary-rr", "--epsilon", "1",
        "--domain-from-data", "--out", tmp_path / "s.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 0
    assert "veil: warning: PrivacyLeakWarning" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mechanism", "laplace", "--epsilon", "1"], "--bounds: required by --mechanism laplace"),
        (["--mechanism", "laplace", "--epsilon", "-1", "--bounds", "16,100"], "epsilon"),
        (["--mechanism", "laplace", "--epsilon", "1", "--bounds", "16"], "expected 2"),
        (["--mechanism", "krr", "--epsilon", "1"], "--domain: --mechanism krr needs"),
        (["--mechanism", "gaussian", "--epsilon", "1", "--bounds", "1,2"], "--delta: required"),
        (["--mechanism", "krr", "--epsilon", "1", "--domain", "1,2", "--bounds", "1,2"], "not for"),
        (["--mechanism", "dp", "--epsilon", "1"], "--mechanism"),
        (["--mechanism", "krr", "--epsilon", "1", "--domain", "1,2", "--ordinal"], "--ordinal"),
    ],
)
def test_ldp_usage_errors(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "age", *args, "--drop-other", "--out", tmp_path / "x.csv"
    )
    assert result.code == 2
    assert message in result.err
    assert not (tmp_path / "x.csv").exists()


def test_ldp_values_outside_the_domain_are_refused(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "sex", "--mechanism", "krr", "--epsilon", "1",
        "--domain", "Female,Other", "--out", tmp_path / "x.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 2
    assert "not in the declared domain" in result.err
