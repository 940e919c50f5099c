"""Dictionary attack on hashed columns: the seed's PIN example, detection, keyed hashes."""

from __future__ import annotations

import base64
import hashlib

import numpy as np
import pandas as pd
import pytest

from veil.errors import DataTypeError, ParameterError
from veil.masking.audit import HashReversalReport, digits, hash_reversal, phone_numbers
from veil.masking.keys import SecretKey
from veil.masking.pseudonym import pseudonymize


def _pins(n: int = 200, seed: int = 1201) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Series([f"{p:04d}" for p in rng.integers(0, 10_000, n)], name="pin")


def test_seed_pin_example_unkeyed_sha256_truncated_is_fully_recovered() -> None:
    pins = _pins()
    hashed = pins.map(lambda p: hashlib.sha256(p.encode()).hexdigest()[:16])
    report = hash_reversal(hashed, digits(4))
    assert report.algorithm == "sha256"
    assert report.truncation == 16
    assert report.encoding == "hex"
    assert report.recovered_fraction == 1.0
    assert report.n_recovered == report.n == 200
    assert report.candidates_tried == 10_000
    assert report.seconds > 0
    pd.testing.assert_series_equal(report.recovered, pins, check_names=False, check_dtype=False)


def test_seed_pin_example_hmac_pseudonyms_recover_nothing() -> None:
    pins = _pins()
    pseudonyms = pseudonymize(pins, SecretKey.generate(), length=16)
    report = hash_reversal(pseudonyms, digits(4))
    assert report.n_recovered == 0
    assert report.recovered_fraction == 0.0
    assert report.algorithm is None
    assert report.recovered.empty
    assert "no value recovered" in report.summary()


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha256"])
def test_detects_the_algorithm(algorithm: str) -> None:
    values = [f"{i:03d}" for i in range(0, 1000, 7)]
    hashed = [hashlib.new(algorithm, v.encode()).hexdigest().upper() for v in values]
    report = hash_reversal(hashed, digits(3))
    assert report.algorithm == algorithm
    assert report.truncation is None
    assert report.recovered_fraction == 1.0


def test_partial_recovery_and_missing_values() -> None:
    known = [hashlib.md5(b"0042").hexdigest(), hashlib.md5(b"0007").hexdigest()]
    unknown = hashlib.md5(b"not a pin").hexdigest()
    values = pd.Series([known[0], None, unknown, known[1]], index=list("abcd"))
    report = hash_reversal(values, digits(4), algorithms="md5")
    assert report.n == 3
    assert report.n_recovered == 2
    assert report.recovered_fraction == pytest.approx(2 / 3)
    assert report.recovered.to_dict() == {"a": "0042", "d": "0007"}


def test_base64_encoding_and_explicit_truncation() -> None:
    values = ["0001", "0002"]
    hashed = [base64.b64encode(hashlib.sha1(v.encode()).digest()).decode() for v in values]
    report = hash_reversal(hashed, digits(4), encodings=("hex", "base64"))
    assert (report.algorithm, report.encoding) == ("sha1", "base64")
    assert report.recovered_fraction == 1.0
    short = [hashlib.sha256(v.encode()).hexdigest()[:10] for v in values]
    assert hash_reversal(short, digits(4), truncations=[8]).n_recovered == 0
    assert hash_reversal(short, digits(4), truncations=[10]).truncation == 10


def test_known_salt_is_tried_before_and_after() -> None:
    hashed = [hashlib.sha256(b"pepper" + b"1234").hexdigest()]
    assert hash_reversal(hashed, digits(4)).n_recovered == 0
    report = hash_reversal(hashed, digits(4), salt="pepper")
    assert report.salt_position == "prefix"
    assert report.recovered.tolist() == ["1234"]
    suffixed = [hashlib.sha256(b"1234" + b"pepper").hexdigest()]
    assert hash_reversal(suffixed, digits(4), salt=b"pepper").salt_position == "suffix"


def test_phone_number_space() -> None:
    space = phone_numbers("555-###-##")
    assert space.size == 100_000
    first = next(space.chunks(5))
    assert first.tolist() == ["555-000-00", "555-000-01", "555-000-02", "555-000-03", "555-000-04"]
    hashed = [hashlib.sha1(b"555-123-45").hexdigest()]
    report = hash_reversal(hashed, space, algorithms=["sha1"])
    assert report.recovered.tolist() == ["555-123-45"]


def test_limit_bounds_the_space() -> None:
    assert phone_numbers("###-###-####", limit=1000).size == 1000
    assert digits(9, limit=50).size == 50
    hashed = [hashlib.md5(b"999999999").hexdigest()]
    report = hash_reversal(hashed, digits(9, limit=1000), algorithms="md5")
    assert report.candidates_tried == 1000
    assert report.n_recovered == 0


def test_list_of_candidates() -> None:
    names = ["alice", "bob", "carol"]
    hashed = [hashlib.sha256(b"bob").hexdigest()]
    report = hash_reversal(hashed, names)
    assert report.recovered.tolist() == ["bob"]
    assert report.candidate_space == "list of 3 candidates"


def test_report_repr_hides_the_plaintexts() -> None:
    hashed = [hashlib.sha256(b"0420").hexdigest()[:16]]
    report = hash_reversal(hashed, digits(4))
    assert isinstance(report, HashReversalReport)
    assert "0420" not in repr(report)
    assert "0420" not in report.summary()
    assert "recovered 1 of 1 values (100.0%)" in report.summary()
    assert any(a[-1] == 1 for a in report.attempts)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"algorithms": ["rot13"]}, "algorithms"),
        ({"algorithms": []}, "algorithms"),
        ({"encodings": ["hexadecimal"]}, "encodings"),
        ({"truncations": [0]}, "truncations"),
        ({"salt": 5}, "salt"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        hash_reversal(["ab"], digits(2), **kwargs)  # type: ignore[arg-type]


def test_bad_spaces_and_values() -> None:
    with pytest.raises(ParameterError, match="n"):
        digits(0)
    with pytest.raises(ParameterError, match="pattern"):
        phone_numbers("555-0100")
    with pytest.raises(ParameterError, match="limit"):
        digits(4, limit=0)
    with pytest.raises(ParameterError, match="empty"):
        hash_reversal(["ab"], [])
    with pytest.raises(DataTypeError):
        hash_reversal(pd.DataFrame({"h": ["ab"]}), digits(2))


def test_input_is_not_mutated() -> None:
    s = pd.Series([" " + hashlib.md5(b"12").hexdigest().upper(), None])
    before = s.copy()
    report = hash_reversal(s, digits(2))
    assert report.n_recovered == 1
    pd.testing.assert_series_equal(s, before)
