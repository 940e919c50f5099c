"""FF1 format-preserving encryption: NIST vectors, round trips, validation, key hygiene."""

from __future__ import annotations

import copy
import pickle
import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.errors import DataTypeError, MissingValueError, ParameterError
from veil.masking.ff1 import FF1, MAX_TWEAK_BYTES

DIGITS = string.digits
BASE36 = string.digits + string.ascii_lowercase
LOWER = string.ascii_lowercase
BASE64 = string.digits + string.ascii_uppercase + string.ascii_lowercase + "+/"

# --- NIST SP 800-38G FF1 samples (NIST "FF1samples.pdf", Samples 1-9) ------------------
K128 = "2B7E151628AED2A6ABF7158809CF4F3C"
K192 = K128 + "EF4359D8D580AA4F"
K256 = K192 + "7F036D6F04FC6A94"
T_NONE = ""
T_10 = "39383736353433323130"
T_11 = "3737373770717273373737"

NIST_SAMPLES = [
    (K128, T_NONE, DIGITS, "0123456789", "2433477484"),
    (K128, T_10, DIGITS, "0123456789", "6124200773"),
    (K128, T_11, BASE36, "0123456789abcdefghi", "a9tv40mll9kdu509eum"),
    (K192, T_NONE, DIGITS, "0123456789", "2830668132"),
    (K192, T_10, DIGITS, "0123456789", "2496655549"),
    (K192, T_11, BASE36, "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"),
    (K256, T_NONE, DIGITS, "0123456789", "6657667009"),
    (K256, T_10, DIGITS, "0123456789", "1001623463"),
    (K256, T_11, BASE36, "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"),
]

# --- NIST ACVP AES-FF1 vectors ----------------------------------------------------------
# From usnistgov/ACVP-Server, gen-val/json-files/ACVP-AES-FF1-1.0/internalProjection.json
# (test groups 1, 2, 3: AES-128 encrypt; 13, 14, 15: AES-192 decrypt; 17, 18: AES-256
# decrypt). Fields: tcId, key, tweak, alphabet, pt, ct.
ACVP = [
    (1, "CF11A34764AB09FFBF8B8A1660E881A2", "", DIGITS, "0846108952", "7759031405"),
    (
        2,
        "3544151C9CEB324C3C1ED31ADE99406D",
        "6CA0E692B2773C7ECA2ECA1E7793DAA1",
        DIGITS,
        "80013770071781669296061827483885771389518248319371666162",
        "09295026876845967206918789775693655654016802646140865387",
    ),
    (
        15,
        "09CDC38B30868E651E6CA3B71F406D09",
        "B4",
        DIGITS,
        "3267692153437219954377178",
        "8667463631955263288726067",
    ),
    (26, "C99B3CDC33EC9F06546405C94AAE548C", "", LOWER, "uhaekdtgya", "mysdvijyhu"),
    (
        27,
        "35BB510F46F954E6E30C66B7D2FA740B",
        "B726CF9FDA21BE995220DA27F9B5E07F",
        LOWER,
        "gcxlhzfozazwxyahmbtvuxzuuklqeyzxuiofxtam",
        "foarmyqmdyhigguanyzprvxbuaocltoyxevynmyu",
    ),
    (41, "21B34BDFD3DC538132A62E16983A72A9", "8BB373DB", LOWER, "kisatigoeiho", "reosjiejeiue"),
    (51, "D943FA73D0DFBBFE5CBBB51AE1883B1F", "", BASE64, "g0mbl8Ztx4", "4NNV4Ujcsq"),
    (
        52,
        "89D7519CCC4503C8677DA86659C1BD58",
        "DE11F4D9482BFAE2930E9B0109AB972F",
        BASE64,
        "uW0MALBLj7tiLxlZVCLxHzKpx/KV",
        "VXD9LcAWGKBXCJhBefiFKytCbss8",
    ),
    (
        53,
        "CDA2BF89FEBCEA57DC89622EB074E616",
        "DEE64526",
        BASE64,
        "stWWxFAGy4HI/d",
        "MUhwoK1+HQgtOO",
    ),
    (
        312,
        "3B9ED19CE3A4B164E72E243A387B563A59950133DAB715CD",
        "F767D0",
        DIGITS,
        "368906039514",
        "798666013879",
    ),
    (
        325,
        "2C7A5E3009C145908CCCDA62AA831C98EBA496D73114A138",
        "04069CE33672DBB5D3",
        DIGITS,
        "0219431947",
        "2473120922",
    ),
    (
        327,
        "9EAC5B5B3C7D6E3D68D6F07F6D2A8A357185D66EE74754F2",
        "FE5F96ABF466726750E5B26BAB81D3C6",
        LOWER,
        "tigjdzcfmkigtnyubqlhuhfjoaqhwnmqqxztkgto",
        "ojfjsxbnbquoiqpkdyvgnahcpnkovketjrshcrgk",
    ),
    (
        351,
        "A0191E4B79F7137ABBC9A27FD115562E40DF18A140DBE13B",
        "",
        BASE64,
        "2YoXJe3Di1",
        "P6mngXMiGp",
    ),
    (
        418,
        "F3C265E9E99EC0C4D82DF88CFF4E944A3CA3C9BDEA7EBBC5417E813FA32632CE",
        "220CBC21C2CD",
        LOWER,
        "hqsyzwveyunauybnqni",
        "duiclzkiwkjleaxcwmq",
    ),
    (
        426,
        "521E252307C7C2EB9DF9D253F598FC5FA8DEB5BCE185ED3366C1920C5566F7DD",
        "",
        BASE64,
        "9l0KE2GRjg",
        "wcYmNY8U9K",
    ),
    (
        427,
        "84254E06C81739BC2232BCF554AD92F8B799C4BA15F1991CFC3D9B74201FDF82",
        "401E690C7A225B7A4E8412503960CE98",
        BASE64,
        "RVRN7XjDSyLIX6tiCXEstS4jvTDn",
        "h73RGLJg55IJ76I7F9ub8V21kYTP",
    ),
    (
        439,
        "3FBCF8C94242C2FADAE2C45C3521CE9ED7C18A07D768888C9D9478F19EF8CF60",
        "EDEFE21AFE2AD1",
        BASE64,
        "Bg5WAzVnDe/aBt8RDN4XMGOMgA",
        "/4+/M+yBIgQJs0HUL+BtFWbYxW",
    ),
]

KEY = bytes.fromhex(K128)


@pytest.mark.parametrize(
    ("key", "tweak", "alphabet", "pt", "ct"),
    NIST_SAMPLES,
    ids=[f"sample-{i}" for i in range(1, 10)],
)
def test_nist_samples(key: str, tweak: str, alphabet: str, pt: str, ct: str) -> None:
    fpe = FF1(bytes.fromhex(key), alphabet)
    assert fpe.encrypt(pt, tweak=bytes.fromhex(tweak)) == ct
    assert fpe.decrypt(ct, tweak=bytes.fromhex(tweak)) == pt


@pytest.mark.parametrize(
    ("tc_id", "key", "tweak", "alphabet", "pt", "ct"), ACVP, ids=[f"acvp-{v[0]}" for v in ACVP]
)
def test_acvp_vectors(tc_id: int, key: str, tweak: str, alphabet: str, pt: str, ct: str) -> None:
    fpe = FF1(bytes.fromhex(key), alphabet)
    assert fpe.encrypt(pt, bytes.fromhex(tweak)) == ct
    assert fpe.decrypt(ct, bytes.fromhex(tweak)) == pt


def test_vectors_through_the_batch_helpers() -> None:
    fpe = FF1(bytes.fromhex(K128), DIGITS)
    assert fpe.encrypt_many(["0123456789", "0123456789"], bytes.fromhex(T_10)) == [
        "6124200773",
        "6124200773",
    ]
    assert fpe.decrypt_many(["2433477484"]) == ["0123456789"]


# --- round trips over many radices ------------------------------------------------------

ALPHABETS = {
    2: "01",
    10: DIGITS,
    26: LOWER,
    36: BASE36,
    62: string.digits + string.ascii_letters,
    1000: "".join(chr(0x4E00 + i) for i in range(1000)),
    # every code point of the first supplementary plane: radix 65,536, the FF1 maximum
    65536: "".join(chr(0x10000 + i) for i in range(65536)),
}


@pytest.fixture(scope="module", params=sorted(ALPHABETS), ids=lambda r: f"radix-{r}")
def cipher(request: pytest.FixtureRequest) -> FF1:
    return FF1(bytes(range(32)), ALPHABETS[request.param])


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_round_trip(cipher: FF1, data: st.DataObject) -> None:
    n = data.draw(st.integers(cipher.min_length, cipher.min_length + 30), label="length")
    text = data.draw(
        st.text(alphabet=st.sampled_from(cipher.alphabet), min_size=n, max_size=n), label="text"
    )
    tweak = data.draw(st.binary(max_size=MAX_TWEAK_BYTES), label="tweak")
    out = cipher.encrypt(text, tweak)
    assert len(out) == len(text)
    assert set(out) <= set(cipher.alphabet)
    assert cipher.decrypt(out, tweak) == text


@pytest.mark.parametrize(("radix", "length"), [(2, 20), (10, 6), (26, 5), (36, 4), (62, 4)])
def test_min_length_is_the_domain_minimum(radix: int, length: int) -> None:
    fpe = FF1(KEY, ALPHABETS[radix])
    assert fpe.min_length == length
    assert radix**length >= 1_000_000 > radix ** (length - 1)
    fpe.encrypt(ALPHABETS[radix][1] * length)
    with pytest.raises(ParameterError, match="length"):
        fpe.encrypt(ALPHABETS[radix][1] * (length - 1))


@pytest.mark.parametrize("radix", [1000, 65536])
def test_large_radix_needs_two_symbols(radix: int) -> None:
    fpe = FF1(KEY, ALPHABETS[radix])
    assert fpe.min_length == 2
    with pytest.raises(ParameterError, match="length 1"):
        fpe.encrypt(ALPHABETS[radix][7])


def test_tweak_changes_the_output() -> None:
    fpe = FF1(KEY, DIGITS)
    text = "4111111111111111"
    outs = {fpe.encrypt(text, t) for t in (b"", b"a", b"b", b"col:card", bytes(16))}
    assert len(outs) == 5
    assert fpe.decrypt(fpe.encrypt(text, b"a"), b"b") != text


def test_wrong_key_does_not_decrypt() -> None:
    text = "4111111111111111"
    secret = FF1(KEY, DIGITS).encrypt(text)
    other = bytearray(KEY)
    other[0] ^= 1
    assert FF1(bytes(other), DIGITS).decrypt(secret) != text
    assert FF1(bytes(24), DIGITS).decrypt(secret) != text


def test_deterministic_and_permutes() -> None:
    fpe = FF1(KEY, DIGITS)
    texts = [f"{i:06d}" for i in range(0, 1_000_000, 997)]
    enc = fpe.encrypt_many(texts)
    assert enc == fpe.encrypt_many(texts)
    assert len(set(enc)) == len(texts)


# --- batch helpers ----------------------------------------------------------------------


def test_encrypt_many_list_array_series() -> None:
    fpe = FF1(KEY, DIGITS)
    texts = ["4111111111111111", "5500000000000004", "340000000000009"]
    expected = [fpe.encrypt(t, b"t") for t in texts]
    assert fpe.encrypt_many(texts, b"t") == expected
    assert fpe.encrypt_many(iter(texts), b"t") == expected

    arr = np.array(texts)
    out_arr = fpe.encrypt_many(arr, b"t")
    assert isinstance(out_arr, np.ndarray)
    assert out_arr.dtype == arr.dtype
    assert out_arr.tolist() == expected
    obj2d = np.array([texts[:2], texts[1:]], dtype=object)
    out2d = fpe.encrypt_many(obj2d, b"t")
    assert out2d.shape == (2, 2)
    assert out2d.dtype == object
    assert fpe.decrypt_many(out2d, b"t").tolist() == obj2d.tolist()

    ser = pd.Series(texts, index=[10, 20, 30], name="card")
    out_ser = fpe.encrypt_many(ser, b"t")
    assert isinstance(out_ser, pd.Series)
    assert out_ser.tolist() == expected
    assert out_ser.index.tolist() == [10, 20, 30]
    assert out_ser.name == "card"
    pd.testing.assert_series_equal(fpe.decrypt_many(out_ser, b"t"), ser)


def test_many_missing_values() -> None:
    fpe = FF1(KEY, DIGITS)
    ser = pd.Series(["123456", None, "654321"], dtype=object)
    with pytest.raises(MissingValueError, match=r"values\[1\]"):
        fpe.encrypt_many(ser)
    out = fpe.encrypt_many(ser, missing="keep")
    assert out[1] is None
    assert out[0] == fpe.encrypt("123456")
    kept = fpe.encrypt_many([np.nan, "123456"], missing="keep")
    assert np.isnan(kept[0])
    with pytest.raises(ParameterError, match="missing"):
        fpe.encrypt_many(ser, missing="drop")  # type: ignore[arg-type]


def test_many_reports_the_bad_position() -> None:
    fpe = FF1(KEY, DIGITS)
    with pytest.raises(ParameterError, match=r"values\[2\] \(length 7\).*position 3"):
        fpe.encrypt_many(["123456", "234567", "123x567"])
    with pytest.raises(ParameterError, match=r"values\[1\] has length 3"):
        fpe.decrypt_many(["123456", "123"])
    with pytest.raises(DataTypeError, match=r"values\[0\] must be a str"):
        fpe.encrypt_many([1234567])
    with pytest.raises(DataTypeError, match="values must be"):
        fpe.encrypt_many("1234567")


# --- validation -------------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 8, 15, 17, 64])
def test_bad_key_length(length: int) -> None:
    with pytest.raises(ParameterError, match=f"key must be 16, 24 or 32 bytes.*got {length}"):
        FF1(b"k" * length, DIGITS)


def test_bad_types() -> None:
    with pytest.raises(DataTypeError, match="key must be bytes"):
        FF1(K128, DIGITS)  # type: ignore[arg-type]
    with pytest.raises(DataTypeError, match="alphabet must be a str"):
        FF1(KEY, list(DIGITS))  # type: ignore[arg-type]
    fpe = FF1(KEY, DIGITS)
    with pytest.raises(DataTypeError, match="text must be a str"):
        fpe.encrypt(1234567)  # type: ignore[arg-type]
    with pytest.raises(DataTypeError, match="tweak must be bytes"):
        fpe.encrypt("1234567", "tweak")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("alphabet", "pattern"),
    [
        ("", "2 to 65536 symbols, got 0"),
        ("0", "2 to 65536 symbols, got 1"),
        ("".join(chr(0x10000 + i) for i in range(65537)), "got 65537"),
        ("01234567891", "repeated.*position 10"),
        ("aba", "repeated.*position 2"),
    ],
)
def test_bad_alphabet(alphabet: str, pattern: str) -> None:
    with pytest.raises(ParameterError, match=f"alphabet.*{pattern}"):
        FF1(KEY, alphabet)


def test_value_outside_the_alphabet() -> None:
    fpe = FF1(KEY, DIGITS)
    with pytest.raises(ParameterError, match=r"text \(length 10\).*outside the alphabet.*9"):
        fpe.encrypt("123456789a")
    with pytest.raises(ParameterError, match="position 0"):
        fpe.decrypt(" 234567890")


def test_tweak_too_long() -> None:
    fpe = FF1(KEY, DIGITS)
    fpe.encrypt("1234567", bytes(MAX_TWEAK_BYTES))
    with pytest.raises(ParameterError, match=f"tweak is {MAX_TWEAK_BYTES + 1} bytes"):
        fpe.encrypt("1234567", bytes(MAX_TWEAK_BYTES + 1))
    with pytest.raises(ParameterError, match="tweak"):
        fpe.encrypt_many(["1234567"], bytes(MAX_TWEAK_BYTES + 1))


# --- key and plaintext hygiene -----------------------------------------------------------

SECRET_KEY = bytes.fromhex("00112233445566778899aabbccddeeff")


def _leaks(message: str, *secrets: str) -> bool:
    return any(s and s in message for s in secrets)


def _key_forms(key: bytes) -> list[str]:
    return [key.hex(), key.hex().upper(), repr(key), str(key), key.decode("latin-1")]


def test_repr_and_str_hide_the_key() -> None:
    fpe = FF1(SECRET_KEY, DIGITS)
    for text in (repr(fpe), str(fpe), f"{fpe!r}"):
        assert "hidden" in text
        assert "AES-128" in text
        assert not _leaks(text, *_key_forms(SECRET_KEY))
    assert "..." in repr(FF1(SECRET_KEY, ALPHABETS[1000]))
    assert not hasattr(fpe, "key")
    assert not hasattr(fpe, "__dict__")


def test_cannot_pickle_or_copy() -> None:
    fpe = FF1(SECRET_KEY, DIGITS)
    with pytest.raises(TypeError, match="key"):
        pickle.dumps(fpe)
    with pytest.raises(TypeError, match="key"):
        copy.deepcopy(fpe)


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.encrypt("987654321z"),
        lambda f: f.decrypt("98765"),
        lambda f: f.encrypt("987654321", bytes(MAX_TWEAK_BYTES + 1)),
        lambda f: f.encrypt_many(["987654321", "98765432x1"]),
        lambda f: f.decrypt_many(["98765"]),
        lambda f: f.encrypt_many(["987654321", None]),
    ],
    ids=["bad-char", "too-short", "long-tweak", "many-bad-char", "many-short", "many-missing"],
)
def test_errors_do_not_echo_key_or_text(call: object) -> None:
    fpe = FF1(SECRET_KEY, DIGITS)
    with pytest.raises(ValueError) as info:
        call(fpe)  # type: ignore[operator]
    err = info.value
    message = str(err) + repr(err)
    assert not _leaks(message, *_key_forms(SECRET_KEY))
    for text in ("987654321z", "98765", "987654321", "98765432x1"):
        assert text not in message
    assert "'z'" not in message
    assert "'x'" not in message
    # No chained exception (libffx's own message names the character) is kept around.
    assert err.__cause__ is None
    assert err.__context__ is None or err.__suppress_context__


def test_key_errors_do_not_echo_the_key() -> None:
    bad_key = bytes.fromhex("00112233445566778899aabbccddee")  # 15 bytes
    with pytest.raises(ParameterError) as info:
        FF1(bad_key, DIGITS)
    assert not _leaks(str(info.value), *_key_forms(bad_key))
