"""PII in free text: both engines find each entity type, report per column, redact spans."""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.masking import pii
from veil.masking.pii import ENTITIES, redact_pii, scan_pii

# The test extra installs presidio: both engines always run (a missing extra fails).
ENGINES = ["patterns", "presidio"]

POSITIVE = {
    "EMAIL_ADDRESS": ["write to jane.doe@example.com today", "cc: a_b+tag@mail.example.org."],
    "PHONE_NUMBER": [
        "call +1 415-555-2671 now",
        "ring (212) 555-0187 after six",
        "office +44 20 7946 0958",
    ],
    "CREDIT_CARD": ["card 4111 1111 1111 1111 on file", "paid with 5500-0000-0000-0004"],
    "IBAN_CODE": ["iban GB82 WEST 1234 5698 7654 32", "to DE89370400440532013000 please"],
    "IP_ADDRESS": ["from 192.168.0.1 yesterday", "host 2001:db8::1 is up"],
}
NEGATIVE = {
    "CREDIT_CARD": "card 4111 1111 1111 1112 fails Luhn",
    "IBAN_CODE": "iban GB82 WEST 1234 5698 7654 33 fails mod-97",
    "IP_ADDRESS": "version 999.1.1.1 is not an address",
}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with outbound connections refused: the engines must work offline."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access attempted during a PII test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("entity", ENTITIES)
def test_each_entity_type_is_found(engine: str, entity: str) -> None:
    texts = POSITIVE[entity]
    report = scan_pii(pd.DataFrame({"t": texts}), entities=[entity], engine=engine)  # type: ignore[arg-type]
    assert int(report.counts.loc["t", entity]) == len(texts)
    assert report.share_with_pii["t"] == 1.0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("entity", sorted(NEGATIVE))
def test_checksums_reject_invalid_numbers(engine: str, entity: str) -> None:
    report = scan_pii(pd.DataFrame({"t": [NEGATIVE[entity]]}), engine=engine)  # type: ignore[arg-type]
    assert int(report.counts.loc["t", entity]) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_report_is_per_column_with_example_rows(engine: str) -> None:
    df = pd.DataFrame(
        {
            "a": ["mail ann@example.com", "nothing", None, "x bob@example.org y"],
            "b": ["from 10.0.0.1", "no", "no", "no"],
            "n": [1, 2, 3, 4],
        },
        index=[10, 11, 12, 13],
    )
    report = scan_pii(df, engine=engine)  # type: ignore[arg-type]
    assert list(report.counts.index) == ["a", "b"]  # numeric column not scanned
    assert report.counts.loc["a", "EMAIL_ADDRESS"] == 2
    assert report.counts.loc["b", "IP_ADDRESS"] == 1
    assert report.counts.loc["b", "EMAIL_ADDRESS"] == 0
    assert report.share_with_pii["a"] == 0.5
    assert report.share_with_pii["b"] == 0.25
    assert report.examples["a"]["EMAIL_ADDRESS"] == (10, 13)
    assert report.examples["b"]["IP_ADDRESS"] == (10,)
    assert report.n_rows == 4
    frame = report.to_frame()
    assert "share_with_pii" in frame.columns


@pytest.mark.parametrize("engine", ENGINES)
def test_report_never_shows_the_found_text(engine: str) -> None:
    secrets = ["jane.doe@example.com", "415-555-2671", "4111 1111 1111 1111", "192.168.0.1"]
    df = pd.DataFrame({"t": [f"x {s} y" for s in secrets], "u": secrets})
    report = scan_pii(df, engine=engine)  # type: ignore[arg-type]
    shown = repr(report) + str(report) + repr(report.examples) + report.to_frame().to_string()
    for secret in [*secrets, "jane", "2671", "1111", "192.168"]:
        assert secret not in shown


@pytest.mark.parametrize("engine", ENGINES)
def test_redact_replaces_spans_and_keeps_other_text(engine: str) -> None:
    df = pd.DataFrame(
        {
            "t": [
                "mail jane.doe@example.com or call +1 415-555-2671 today",
                "card 4111 1111 1111 1111, not 4111 1111 1111 1112",
                "iban GB82 WEST 1234 5698 7654 32 from 2001:db8::1",
                "nothing to see",
                None,
            ],
            "n": [1, 2, 3, 4, 5],
        }
    )
    before = df.copy(deep=True)
    out = redact_pii(df, engine=engine)  # type: ignore[arg-type]
    assert out["t"].tolist()[:4] == [
        "mail <EMAIL_ADDRESS> or call <PHONE_NUMBER> today",
        "card <CREDIT_CARD>, not 4111 1111 1111 1112",
        "iban <IBAN_CODE> from <IP_ADDRESS>",
        "nothing to see",
    ]
    assert pd.isna(out["t"].iloc[4])
    pd.testing.assert_frame_equal(df, before)  # input not mutated
    assert out["n"].tolist() == [1, 2, 3, 4, 5]
    assert out.attrs["veil.masking"][-1]["method"] == "redact_pii"


@pytest.mark.parametrize("engine", ENGINES)
def test_redact_options_and_dtypes(engine: str) -> None:
    df = pd.DataFrame(
        {
            "s": pd.Series(["ip 10.1.2.3", None, "mail a@example.com"], dtype="string"),
            "c": pd.Categorical(["ip 10.1.2.3", None, "ip 10.9.9.9"]),
        }
    )
    out = redact_pii(
        df,
        ["s", "c"],
        entities=["IP_ADDRESS"],
        replacement="[{entity} removed]",
        engine=engine,  # type: ignore[arg-type]
    )
    assert out["s"].dtype == df["s"].dtype
    assert out["s"].tolist()[0] == "ip [IP_ADDRESS removed]"
    assert out["s"].tolist()[2] == "mail a@example.com"  # not a requested entity
    assert pd.isna(out["s"].iloc[1])
    assert isinstance(out["c"].dtype, pd.CategoricalDtype)
    # Two categories become the same text: one category remains.
    assert list(out["c"].cat.categories) == ["ip [IP_ADDRESS removed]"]
    assert pd.isna(out["c"].iloc[1])


def test_presidio_engine_builds_and_scans_offline() -> None:
    # Built afresh under the autouse fixture: no model download, no public-suffix fetch.
    pii._presidio_analyzer.cache_clear()
    df = pd.DataFrame({"t": ["mail jane.doe@example.com", "ip 10.0.0.1"]})
    report = scan_pii(df, engine="presidio")
    assert report.counts.loc["t", "EMAIL_ADDRESS"] == 1
    assert report.counts.loc["t", "IP_ADDRESS"] == 1


def test_engines_agree_on_crafted_texts() -> None:
    texts = [t for ts in POSITIVE.values() for t in ts] + list(NEGATIVE.values())
    df = pd.DataFrame({"t": texts})
    fast = scan_pii(df, engine="patterns")
    slow = scan_pii(df, engine="presidio")
    pd.testing.assert_frame_equal(fast.counts, slow.counts)


def test_errors_name_the_parameter() -> None:
    df = pd.DataFrame({"t": ["a"], "n": [1]})
    with pytest.raises(ColumnError, match="nope"):
        scan_pii(df, ["nope"], engine="patterns")
    with pytest.raises(ColumnError):
        redact_pii(df, "nope", engine="patterns")
    with pytest.raises(ParameterError, match="entities"):
        scan_pii(df, entities=["PERSON"], engine="patterns")
    with pytest.raises(ParameterError, match="entities"):
        redact_pii(df, entities="EMAIL_ADDRESS", engine="patterns")
    with pytest.raises(ParameterError, match="entities"):
        scan_pii(df, entities=[], engine="patterns")
    with pytest.raises(ParameterError, match="engine"):
        scan_pii(df, engine="spacy")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="replacement"):
        redact_pii(df, replacement=None, engine="patterns")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="n_examples"):
        scan_pii(df, n_examples=-1, engine="patterns")
    with pytest.raises(DataTypeError, match="'n'"):
        scan_pii(df, ["n"], engine="patterns")


def test_frame_without_text_columns_gives_empty_report() -> None:
    report = scan_pii(pd.DataFrame({"n": [1, 2]}), engine="patterns")
    assert report.counts.empty
    assert "no text columns" in repr(report)


@pytest.mark.parametrize("engine", ENGINES)
def test_digits_of_any_script_are_found(engine: str) -> None:
    df = pd.DataFrame(
        {
            "note": [
                "card ４１１１ １１１１ １１１１ １１１１ on file",
                "call +1 ٤١٥-٥٥٥-٢٦٧١ now",
                "plain text",
            ]
        },
        dtype=object,
    )
    report = scan_pii(df, engine=engine)
    assert int(report.counts.loc["note", "CREDIT_CARD"]) == 1
    assert int(report.counts.loc["note", "PHONE_NUMBER"]) == 1
    out = redact_pii(df, engine=engine)["note"].tolist()
    assert out == ["card <CREDIT_CARD> on file", "call <PHONE_NUMBER> now", "plain text"]


def _sample_texts(n: int, seed: int) -> list[str]:
    """Short notes, a fifth of them with one PII item (the benchmark's mix), and edge
    cases for the characters the recognizers need: e-mail addresses without digits,
    IPv6 addresses without digits, digits of other scripts, numbers that are no PII."""
    rng = np.random.default_rng(seed)
    words = ["order", "shipped", "late", "please", "refund", "customer", "the", "invoice"]
    items = [
        "mail user{m}@example.com",
        "mail ann@example.com",
        "call +1 415-555-{m:04d}",
        "ring (212) 555-0187 after six",
        "card 4111 1111 1111 1111",
        "iban GB82 WEST 1234 5698 7654 32",
        "from 10.0.{a}.{b}",
        "host fe80::abcd is up",
        "route :: default",
        "order {m} of 12 boxes",
        "paid ４１１１ １１１１ １１１１ １１１１",
        "on 2024-01-15 at 10:30",
    ]
    texts = []
    for _ in range(n):
        base = " ".join(rng.choice(words, size=int(rng.integers(3, 8))))
        if rng.random() < 0.4:
            m = int(rng.integers(0, 10_000))
            item = str(rng.choice(items)).format(m=m, a=m % 256, b=m // 256 % 256)
            base = f"{base} {item}"
        texts.append(base)
    return texts


@pytest.mark.parametrize(
    "entities", [ENTITIES, ("IP_ADDRESS",), ("EMAIL_ADDRESS", "PHONE_NUMBER")], ids=str
)
def test_presidio_findings_are_presidios_own(entities: tuple[str, ...]) -> None:
    # The batched scan skips texts a recognizer cannot match and groups the others;
    # every text must still get exactly what AnalyzerEngine.analyze finds in it.
    texts = _sample_texts(400, seed=7)
    analyzer = pii._presidio_analyzer("en")
    expected = [
        sorted((r.entity_type, r.start, r.end, r.score) for r in found)
        for found in (analyzer.analyze(t, language="en", entities=list(entities)) for t in texts)
    ]
    batched = pii._presidio_results(pd.Series(texts, dtype=object), entities, "en")
    got = [sorted((r.entity_type, r.start, r.end, r.score) for r in found) for found in batched]
    assert got == expected
    # The sample holds findings of every requested type.
    assert {f[0] for found in expected for f in found} == set(entities)
