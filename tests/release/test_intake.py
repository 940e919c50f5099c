"""Streaming profile, uniform sample and risk guidance of an uploaded CSV."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError
from veil.release.intake import profile_csv, read_header, risk_guidance


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_profile_counts_rows_types_and_missing_across_chunks(tmp_path: Path) -> None:
    rows = ["id,age,score,city,empty"]
    rows += [
        f"{i},{20 + i % 50},{i / 3:.3f},{'' if i % 10 == 0 else 'c' + str(i % 4)},"
        for i in range(1000)
    ]
    profile = profile_csv(
        _csv(tmp_path, "\n".join(rows) + "\n"), rng=np.random.default_rng(1), chunk_rows=64
    )
    assert profile.rows == 1000
    types = {c.name: (c.type, c.missing) for c in profile.columns}
    assert types == {
        "id": ("integer", 0),
        "age": ("integer", 0),
        "score": ("float", 0),
        "city": ("text", 100),
        "empty": ("empty", 1000),
    }
    assert not profile.sampled and len(profile.sample) == 1000
    assert profile.sample["age"].dtype == np.int64


def test_the_sample_is_bounded_and_uniform_over_the_file(tmp_path: Path) -> None:
    text = "i\n" + "\n".join(str(i) for i in range(20_000)) + "\n"
    # Seeded; tolerance: the mean of 2,000 of 0..19,999 has sd about 129, so +-600 is 4.6 sd.
    profile = profile_csv(
        _csv(tmp_path, text), rng=np.random.default_rng(3), sample_size=2000, chunk_rows=1000
    )
    assert profile.sampled and len(profile.sample) == 2000
    assert profile.sample["i"].is_unique
    assert abs(profile.sample["i"].mean() - 9999.5) < 600


def test_profile_reads_from_an_opener_such_as_a_decrypting_stream() -> None:
    data = b"a,b\n1,x\n2,y\n"
    profile = profile_csv(lambda: io.BytesIO(data), rng=np.random.default_rng(0))
    assert profile.rows == 2 and [c.type for c in profile.columns] == ["integer", "text"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "file: is empty"),
        ("a,,c\n1,2,3\n", r"header columns \[2\] have no name"),
        ("a,a\n1,2\n", r"repeats the column names \['a'\]"),
        ("a,b\n1,2\n3,4,5\n", "file: not a valid CSV table"),
    ],
)
def test_malformed_files_are_refused_naming_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        profile_csv(_csv(tmp_path, text), rng=np.random.default_rng(0))


def test_non_utf8_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes("name\nJosé\n".encode("latin-1"))
    with pytest.raises(ParameterError, match="utf-8"):
        profile_csv(path, rng=np.random.default_rng(0))


def test_risk_guidance_names_identifiers_and_suggests_quasi_identifiers(
    tmp_path: Path, adult: pd.DataFrame
) -> None:
    frame = adult.head(3000).copy()
    frame.insert(0, "patient_id", range(3000))
    path = tmp_path / "adult.csv"
    frame.to_csv(path, index=False)
    guidance = risk_guidance(profile_csv(path, rng=np.random.default_rng(0)))
    assert {"column": "patient_id", "kind": "identifier", "uniqueness": 1.0}.items() <= (
        guidance.identifiers[0].items()
    )
    assert "patient_id" not in guidance.quasi_identifiers
    assert {"sex", "race"} <= set(guidance.quasi_identifiers)
    assert guidance.summary is not None and guidance.summary["n_records"] == 3000
    assert (
        guidance.combinations
        and guidance.combinations[0]["unique_rate"] >= guidance.combinations[-1]["unique_rate"]
    )
    assert guidance.to_dict()["sample_rows"] == 3000


def test_risk_guidance_finds_locations_and_personal_data_in_text(tmp_path: Path) -> None:
    n = 200
    frame = pd.DataFrame(
        {
            "home_lat": np.linspace(40.0, 41.0, n),
            "home_lon": np.linspace(-74.0, -73.0, n),
            "note": [f"call me at person{i % 20}@example.org about the visit" for i in range(n)],
            "sex": ["F", "M"] * (n // 2),
            "score": np.arange(n) % 7,
        }
    )
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    guidance = risk_guidance(profile_csv(path, rng=np.random.default_rng(0)))
    assert guidance.locations == [{"latitude": "home_lat", "longitude": "home_lon"}]
    kinds = {d["column"]: d["kind"] for d in guidance.identifiers}
    assert kinds == {"note": "free-text"}
    assert "sex" in guidance.quasi_identifiers
    roles = {r["column"]: r["role"] for r in guidance.roles}
    assert roles["score"] == "sensitive" and roles["note"] == "identifier"


def test_the_profile_reports_its_progress_and_the_header_reads_one_line(tmp_path: Path) -> None:
    path = _csv(tmp_path, "a,b\n" + "".join(f"{i},x\n" for i in range(250)))
    seen: list[int] = []
    profile_csv(path, rng=np.random.default_rng(0), chunk_rows=100, progress=seen.append)
    assert seen == [100, 200, 250]
    assert read_header(path) == ["a", "b"]
    with pytest.raises(ParameterError, match="repeats the column names"):
        read_header(_csv(tmp_path, "a,a\n1,2\n"))


_MEASURE = """
import sys
import numpy as np
from veil.release.intake import profile_csv

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

path, rows = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1)
with open(path, "w") as out:
    out.write("id,age,sex,city,income,note\\n")
    for start in range(0, rows, 100_000):
        n = min(100_000, rows - start)
        out.writelines(
            f"{i},{a},{'FM'[i % 2]},city{c},{m},some words here\\n"
            for i, a, c, m in zip(
                range(start, start + n), rng.integers(16, 90, n), rng.integers(0, 400, n),
                rng.integers(0, 200_000, n),
            )
        )
before = rss("VmRSS")
profile = profile_csv(path, rng=np.random.default_rng(0), chunk_rows=50_000, sample_size=10_000)
assert profile.rows == rows
print(rss("VmHWM") - before)
"""


def _profile_growth(tmp_path: Path, rows: int) -> int:
    """Peak resident memory added by profiling a generated file of ``rows`` records."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(tmp_path / f"t{rows}.csv"), str(rows)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return int(done.stdout.split()[-1])


def test_the_profile_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    # Each size in its own process (a process's peak only grows). Measured: about 50 MiB
    # for 250,000 rows (10 MB) and 58 MiB for 1,000,000 rows (40 MB): a block of rows and
    # the sample, never the table (pandas reads the 1,000,000 rows whole in about 216 MiB).
    # Tolerance: four times the rows may add at most 24 MiB.
    small = _profile_growth(tmp_path, 250_000)
    large = _profile_growth(tmp_path, 1_000_000)
    assert large < small + (24 << 20), (small >> 20, large >> 20)
    assert large < 96 << 20
