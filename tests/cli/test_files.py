"""Tables in and out of the command line: formats, encodings, blank lines, safe targets and
spreadsheet formulas."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from veil.cli.errors import CliUsageError
from veil.cli.files import (
    check_encoding,
    check_outputs,
    escape_csv_cells,
    input_separator,
    read_table,
    table_format,
    write_release,
    write_table,
)

from .conftest import Veil


def test_the_declared_format_must_agree_with_the_name() -> None:
    assert table_format(Path("a.csv.gz"), "--out", "csv") == "csv"
    assert table_format(Path("a.PARQUET"), "--out") == "parquet"
    with pytest.raises(CliUsageError, match="named as csv but the format is parquet"):
        table_format(Path("x.csv"), "--out", "parquet")
    with pytest.raises(CliUsageError, match="named as parquet but the format is csv"):
        table_format(Path("x.parquet"), "--out", "csv")


def test_unknown_encodings_are_refused_by_name() -> None:
    assert check_encoding(None) is None
    assert check_encoding("Latin-1") == "iso8859-1"
    with pytest.raises(CliUsageError, match="--encoding: unknown text encoding 'bogus'"):
        check_encoding("bogus")


def test_blank_lines_are_missing_values_in_one_column_only(tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    one.write_text("x\na\n\nb\n")
    assert read_table(one)["x"].isna().tolist() == [False, True, False]
    two = tmp_path / "two.csv"
    two.write_text("x,y\na,1\n\nb,2\n")
    assert len(read_table(two)) == 2


def test_a_file_in_another_encoding_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("x\nMálaga\n".encode("latin-1"))
    with pytest.raises(CliUsageError, match=r"is not valid utf-8 text .*--encoding"):
        read_table(path)
    assert read_table(path, encoding="latin-1")["x"].tolist() == ["Málaga"]


def test_outputs_are_checked_against_inputs_links_and_each_other(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("x\n1\n")
    hard = tmp_path / "hard.csv"
    hard.hardlink_to(data)
    with pytest.raises(CliUsageError, match=r"--out: .* is an input file"):
        check_outputs({"--out": hard}, [data])
    with pytest.raises(CliUsageError, match="--out, --map: both name"):
        check_outputs({"--out": tmp_path / "a.csv", "--map": tmp_path / "." / "a.csv"}, [])
    with pytest.raises(CliUsageError, match="does not exist"):
        check_outputs({"--out": tmp_path / "no" / "a.csv"}, [])
    check_outputs({"--out": tmp_path / "a.csv", "--map": None}, [data])


def test_formula_cells_are_escaped_but_signed_numbers_kept() -> None:
    frame = pd.DataFrame(
        {
            "t": ["=1+1", "-5", "+2.5e3", "-x", None, "ok"],
            "n": [-1, 2, 3, 4, 5, 6],
            "plain": ["-1", "2", "3", "4", "5", "6"],
        }
    )
    before = frame.copy()
    escaped, counts = escape_csv_cells(frame)
    assert counts == {"t": 2}
    assert escaped["t"].fillna("NA").tolist() == ["'=1+1", "-5", "+2.5e3", "'-x", "NA", "ok"]
    assert escaped["plain"].tolist() == before["plain"].tolist()
    pd.testing.assert_frame_equal(frame, before)
    only_numbers = frame[["plain"]]
    same, none = escape_csv_cells(only_numbers)
    assert same is only_numbers and none == {}


def test_csv_is_escaped_unless_raw_and_parquet_never(tmp_path: Path) -> None:
    frame = pd.DataFrame({"t": ["@cmd", "fine"]})
    assert write_table(frame, tmp_path / "a.csv") == {"t": 1}
    assert pd.read_csv(tmp_path / "a.csv")["t"][0] == "'@cmd"
    assert write_table(frame, tmp_path / "b.csv", raw_csv=True) == {}
    assert pd.read_csv(tmp_path / "b.csv")["t"][0] == "@cmd"
    assert write_table(frame, tmp_path / "c.parquet") == {}
    assert pd.read_parquet(tmp_path / "c.parquet")["t"][0] == "@cmd"


def test_an_extra_that_fails_to_build_leaves_nothing(tmp_path: Path) -> None:
    frame = pd.DataFrame({"t": [1]})

    def broken(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_release(frame, tmp_path / "t.csv", extras=[("--map", tmp_path / "m.html", broken)])
    assert list(tmp_path.iterdir()) == []

    def fine(tmp: str) -> None:
        Path(tmp).write_text("<html></html>")

    write_release(frame, tmp_path / "t.csv", extras=[("--map", tmp_path / "m.html", fine)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.html", "t.csv"]
    assert (tmp_path / "m.html").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("name", "text", "sep"),
    [
        ("a.csv", "x,y\n1,2\n3,4\n", ","),
        ("a.csv", 'x;y\n"1,5";2\n"3,25";4\n', ";"),  # decimal commas, quoted
        ("a.csv", "x;y\n1,5;2\n3,25;4\n", ";"),  # decimal commas, unquoted
        ("a.txt", "x\ty\n1\t2\n", "\t"),
        ("a.csv", "x|y|z\n1|2|3\n", "|"),
        ("a.csv", "note\na;b\nc\n", ","),  # one column: a ';' in a value is not a separator
        ("a.csv", "x,y\n1;2,3\n4;5,6\n", ","),  # the comma splits evenly: always the comma
        ("a.csv", "x\n1\n2\n", ","),
    ],
)
def test_the_separator_of_a_csv_is_the_one_that_splits_it(
    tmp_path: Path, name: str, text: str, sep: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert input_separator(path, None) == sep
    zipped = tmp_path / f"{name}.gz"
    zipped.write_bytes(gzip.compress(text.encode("utf-8")))
    assert input_separator(zipped, None) == sep
    # Given, --sep wins; the table is read with the separator found.
    assert input_separator(path, ",") == ","
    width = len(text.splitlines()[0].split(sep))
    assert read_table(path).shape[1] == width


def test_a_semicolon_table_reads_as_its_columns_in_every_command(
    veil: Veil, tmp_path: Path
) -> None:
    path = tmp_path / "t.csv"
    frame = pd.DataFrame({"age": [30, 41, 52, 30] * 5, "zip": ["a", "b", "c", "a"] * 5})
    frame.to_csv(path, sep=";", index=False)
    result = veil("risk", path, "--qi", "age,zip", "--json")
    assert result.code == 0, result.err
    said = json.loads(result.out)
    assert (said["n_records"], said["n_classes"]) == (len(frame), 3)


# UCI's page-blocks.data: numbers aligned with spaces, no header. Read as CSV it was one
# column named by its first line, and veil init drafted a plan for that.
_ALIGNED = (
    "   5   7     35  1.400 .400 .657     2.33     14     23      6 1\n"
    "   6   7     42  1.167 .429 .881     3.60     18     37      5 1\n"
    "   6  18    108  3.000 .287 .741     4.43     31     80      7 1\n"
)


def test_a_space_aligned_table_is_refused_in_one_line_and_text_with_spaces_is_not(
    veil: Veil, tmp_path: Path
) -> None:
    aligned = tmp_path / "blocks.txt"
    aligned.write_text(_ALIGNED, encoding="utf-8")
    for command in (["init", aligned], ["risk", aligned, "--qi", "x"]):
        result = veil(*command)
        assert result.code == 2 and "Traceback" not in result.err
        (line,) = [x for x in result.err.splitlines() if x.startswith("veil: error:")]
        assert "11 fields aligned with spaces" in line and "';', a tab or '|'" in line
    assert not (tmp_path / "blocks.plan.yaml").exists()
    # One column of text whose values hold words (single spaces) is a column, as before.
    names = tmp_path / "names.csv"
    names.write_text("name\nAna Maria Lopez\nJo Lee Park\nMax Otto Bauer\n", encoding="utf-8")
    expected = ["Ana Maria Lopez", "Jo Lee Park", "Max Otto Bauer"]
    assert read_table(names)["name"].tolist() == expected


@pytest.mark.parametrize("entry", ["library", "library on dask", "veil release"])
def test_a_plan_refuses_a_space_aligned_input_as_the_command_line_does(
    veil: Veil, tmp_path: Path, entry: str
) -> None:
    """The same check on a plan's input, on both engines (veil.formats.space_aligned)."""
    from veil.release import run
    from veil.release.engine import DaskEngine
    from veil.release.errors import PlanError

    aligned = tmp_path / "blocks.txt"
    aligned.write_text(_ALIGNED, encoding="utf-8")
    plan = {
        "version": 1,
        "name": "blocks",
        "input": {"path": str(aligned)},
        "columns": {"height": {"role": "insensitive", "treatment": "keep"}},
        "output": {"report": False},
    }
    out = tmp_path / "out"
    if entry == "veil release":
        path = tmp_path / "plan.yaml"
        path.write_text(json.dumps(plan), encoding="utf-8")
        result = veil("release", path, "--out", out)
        assert result.code == 2 and "Traceback" not in result.err
        assert "11 fields aligned with spaces" in result.err
    else:
        engine = DaskEngine("synchronous") if entry.endswith("dask") else None
        with pytest.raises(PlanError, match="11 fields aligned with spaces"):
            run(plan, out, rng=1, engine=engine)
    assert not out.exists()
