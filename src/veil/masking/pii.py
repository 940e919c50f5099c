"""Personal data in free text: find e-mail addresses, phone numbers, card numbers, IBANs and
IP addresses in text columns, report them per column, and replace them.

This is detection, not anonymisation: a text with its e-mail addresses replaced can still
name its author in words. What it guarantees is narrower: every span one of the
recognizers finds is replaced, and the report holds counts and row labels only, never the
text it found.

Two engines find the same entity types under the same names:

``"presidio"``
    The predefined pattern recognizers of Microsoft Presidio (``presidio-analyzer``, the
    ``pii`` extra): ``EmailRecognizer``, ``PhoneRecognizer`` (Google's ``phonenumbers``),
    ``CreditCardRecognizer`` (Luhn check), ``IbanRecognizer`` (country formats and the
    ISO 13616 mod-97 check) and ``IpRecognizer``. It runs offline: the NLP engine is a
    blank spaCy pipeline (a tokenizer, no trained model to download) and the e-mail
    recognizer's domain check uses the public-suffix list bundled with ``tldextract``
    instead of fetching it.
``"patterns"``
    Regular expressions run by pandas over the whole column, with the same checksums
    (Luhn, mod-97), ``ipaddress`` validation and, when ``phonenumbers`` is installed,
    the same phone-number validation as Presidio (without it: 7 to 15 digits in a
    phone-like layout). It needs no extra package and is several times faster.

Each distinct text is analysed once, whatever the number of rows or columns holding it,
and only by the recognizers that can match it: a text without a digit, an "@" or a ":"
holds nothing any of the five can find (their patterns require these characters), so the
Presidio engine skips it, with the same findings as Presidio analysing every text. The
rest goes through Presidio's ``BatchAnalyzerEngine`` (spaCy's ``nlp.pipe``); most of its
time is then Google's phone-number matcher, run once per text and region.
Digits of any script are read as ASCII digits (full-width ``４１１１``, Arabic-Indic ...):
a text holding such digits is analysed, and if something is found in it returned, in
NFKC with ASCII digits (:func:`veil.masking.unicode_digits.ascii_digits`).
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import re
import tempfile
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.frames import output_frame, record_masking
from veil.masking.unicode_digits import ascii_digits

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine

__all__ = ["ENTITIES", "PiiReport", "redact_pii", "scan_pii"]

#: Entity types both engines find, in Presidio's names.
ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
)

Engine = Literal["presidio", "patterns"]

# Regions whose numbering plans validate a phone number: Presidio's PhoneRecognizer default.
_PHONE_REGIONS = ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR")

# The pattern engine runs the entity types in this order; a span taken by one is hidden
# from the next (the digits of an IBAN or a card are not also a phone number).
_PATTERN_ORDER = ("EMAIL_ADDRESS", "IBAN_CODE", "CREDIT_CARD", "IP_ADDRESS", "PHONE_NUMBER")

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PATTERNS: dict[str, str] = {
    "EMAIL_ADDRESS": (
        rf"(?<![\w.%+-])[\w%+-]+(?:\.[\w%+-]+)*@{_LABEL}(?:\.{_LABEL})*\.[A-Za-z]{{2,}}(?![\w-])"
    ),
    "IBAN_CODE": r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
    r"(?![A-Za-z0-9])",
    # 13 to 19 digits, optionally grouped by single spaces or hyphens (as in redact.py).
    "CREDIT_CARD": r"(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])",
    "IP_ADDRESS": r"(?<![\w.:])(?:(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?!\.?[0-9])"
    r"|(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4})(?![\w:])",
    "PHONE_NUMBER": r"(?<![\w+])(?:\+[0-9]{7,15}"
    r"|(?:\+[0-9]{1,3}[ .-]?)?(?:\([0-9]{1,4}\)[ .-]?)?[0-9]{2,5}(?:[ .-][0-9]{2,5}){1,4}"
    r"|\([0-9]{1,4}\)[ .-]?[0-9]{5,10})(?![\w])",
}
# Characters of the Unicode private-use area: a found span is replaced by one of them
# while the later patterns run, so that no pattern matches inside an earlier replacement.
_SENTINEL = {entity: chr(0xE000 + i) for i, entity in enumerate(ENTITIES)}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PiiReport:
    """Where personal data was found, per column: counts and row labels, never the text.

    Attributes
    ----------
    counts : DataFrame
        One row per scanned column, one column per entity type: the number of spans
        found (a text with two e-mail addresses counts two).
    share_with_pii : Series
        Per scanned column, the share of all rows (missing values included in the
        denominator) holding at least one span of the requested entity types.
    examples : Mapping[str, Mapping[str, tuple]]
        ``examples[column][entity]``: index labels of the first rows (at most
        ``n_examples``) where the entity type was found, to look the rows up.
    n_rows : int
        Rows in the scanned frame.
    engine : str
        ``"presidio"`` or ``"patterns"``.
    """

    counts: pd.DataFrame
    share_with_pii: pd.Series
    examples: Mapping[str, Mapping[str, tuple[Hashable, ...]]]
    n_rows: int
    engine: str

    def to_frame(self) -> pd.DataFrame:
        """The counts, with the share of rows holding any finding as a last column."""
        return self.counts.assign(share_with_pii=self.share_with_pii)

    def __repr__(self) -> str:
        header = f"PiiReport(engine={self.engine!r}, n_rows={self.n_rows})"
        if self.counts.empty:
            return f"{header}: no text columns scanned"
        return f"{header}\n{self.to_frame().to_string()}"

    __str__ = __repr__


def _check_entities(entities: Any) -> tuple[str, ...]:
    if isinstance(entities, str) or not isinstance(entities, Sequence):
        raise ParameterError(
            f"entities: must be a sequence of entity names from {list(ENTITIES)}, got {entities!r}"
        )
    unknown = [e for e in entities if e not in ENTITIES]
    if unknown:
        raise ParameterError(f"entities: unknown {unknown!r}; allowed are {list(ENTITIES)}")
    if not entities:
        raise ParameterError(f"entities: must name at least one of {list(ENTITIES)}")
    return tuple(dict.fromkeys(entities))


def _check_engine(engine: Any) -> Engine:
    if engine == "presidio":
        return "presidio"
    if engine == "patterns":
        return "patterns"
    raise ParameterError(f"engine: must be 'presidio' or 'patterns', got {engine!r}")


def _is_text(dtype: Any) -> bool:
    return isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)) or pd.api.types.is_object_dtype(
        dtype
    )


def _check_columns(df: pd.DataFrame, columns: Any) -> list[Hashable]:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: must be a pandas DataFrame, got {type(df).__name__}")
    if columns is None:
        return [c for c in df.columns if _is_text(df[c].dtype)]
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        columns = [columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ColumnError(f"columns: {missing!r} not in the data frame")
    for c in columns:
        if not _is_text(df[c].dtype):
            raise DataTypeError(
                f"columns: column {c!r} has dtype {df[c].dtype}; "
                "only object, string and categorical columns hold free text"
            )
    return list(dict.fromkeys(columns))


@dataclasses.dataclass(frozen=True)
class _Pool:
    """The distinct texts of the scanned columns, and each row's code into them."""

    texts: pd.Series  # object dtype, str values
    row_codes: dict[Hashable, np.ndarray]  # column -> code per row, -1 for missing
    category_codes: dict[Hashable, np.ndarray]  # categorical column -> code per category


def _pool(df: pd.DataFrame, columns: list[Hashable]) -> _Pool:
    # A categorical column adds its categories, not its rows, to the pool.
    pieces = [
        pd.Series(df[c].cat.categories, dtype=object)
        if isinstance(df[c].dtype, pd.CategoricalDtype)
        else df[c].astype(object)
        for c in columns
    ]
    sizes = [len(p) for p in pieces]
    pooled = pd.concat(pieces, ignore_index=True) if pieces else pd.Series(dtype=object)
    codes, uniques = pd.factorize(pooled)
    texts = pd.Series(np.asarray(uniques, dtype=object), dtype=object).astype(str).astype(object)
    row_codes: dict[Hashable, np.ndarray] = {}
    category_codes: dict[Hashable, np.ndarray] = {}
    bounds = np.cumsum([0, *sizes])
    for c, start, stop in zip(columns, bounds[:-1], bounds[1:], strict=True):
        piece = np.asarray(codes[start:stop], dtype=np.intp)
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            cat = np.asarray(df[c].cat.codes, dtype=np.intp)
            category_codes[c] = piece
            row_codes[c] = np.where(cat >= 0, piece[np.maximum(cat, 0)], -1)
        else:
            row_codes[c] = piece
    return _Pool(texts, row_codes, category_codes)


# ----------------------------------------------------------------------------- checks


def _digit_matrix(strings: pd.Series, width: int) -> np.ndarray:
    """ASCII strings right-aligned (left-padded with "0") to ``width``, as a code matrix."""
    padded = strings.str.rjust(width, "0").str.slice(-width)
    raw = "".join(padded.tolist()).encode("ascii", errors="replace")
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, width).astype(np.int64)


def _luhn_valid(found: pd.Series) -> np.ndarray:
    """Luhn check (ISO/IEC 7812-1) of each match; leading zeros do not change the sum."""
    digits = _digit_matrix(found.str.replace(r"[^0-9]", "", regex=True), 19) - 48
    doubled = digits[:, 1::2] * 2  # every second digit counted from the right
    doubled = np.where(doubled > 9, doubled - 9, doubled)
    return np.asarray((digits[:, 0::2].sum(axis=1) + doubled.sum(axis=1)) % 10 == 0)


def _iban_valid(found: pd.Series) -> np.ndarray:
    """ISO 13616 check: the IBAN with its first four characters moved last, read as a
    number with A = 10 ... Z = 35, leaves 1 modulo 97. Runs over character positions."""
    compact = found.str.replace(" ", "", regex=False)
    length_ok = compact.str.len().between(15, 34).to_numpy(dtype=bool)
    rearranged = compact.str.slice(4) + compact.str.slice(0, 4)
    chars = _digit_matrix(rearranged, 34)
    remainder = np.zeros(len(found), dtype=np.int64)
    for j in range(chars.shape[1]):
        column = chars[:, j]
        letter = column >= 65
        remainder = (
            np.where(letter, remainder * 100 + column - 55, remainder * 10 + column - 48) % 97
        )
    return np.asarray(length_ok & (remainder == 1))


def _ip_valid(found: pd.Series) -> np.ndarray:
    def valid(text: str) -> bool:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            return False
        return True

    return found.map(valid).to_numpy(dtype=bool)


def _phone_valid(found: pd.Series) -> np.ndarray:
    n_digits = found.str.count(r"[0-9]").to_numpy()
    # Dates such as 2024-01-15 have a phone number's digits and layout, and so does a
    # date with the hour of its time (2016-06-09 21 of "2016-06-09 21:06:36").
    date = found.str.fullmatch(
        r"(?:[0-9]{4}[-./][0-9]{1,2}[-./][0-9]{1,2}|[0-9]{1,2}[-./][0-9]{1,2}[-./][0-9]{2,4})"
        r"(?:[ T][0-9]{1,2})?"
    ).to_numpy(dtype=bool)
    plausible = (n_digits >= 7) & (n_digits <= 15) & ~date
    try:
        import phonenumbers
    except ImportError:  # pragma: no cover - phonenumbers comes with the pii extra
        return np.asarray(plausible)

    def valid(text: str) -> bool:
        for region in _PHONE_REGIONS:
            try:
                number = phonenumbers.parse(text, region)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                return True
        return False

    return np.asarray(plausible & found.map(valid).to_numpy(dtype=bool))


def _always_valid(found: pd.Series) -> np.ndarray:
    return np.ones(len(found), dtype=bool)


_CHECKS: dict[str, Callable[[pd.Series], np.ndarray]] = {
    "EMAIL_ADDRESS": _always_valid,
    "IBAN_CODE": _iban_valid,
    "CREDIT_CARD": _luhn_valid,
    "IP_ADDRESS": _ip_valid,
    "PHONE_NUMBER": _phone_valid,
}


# ----------------------------------------------------------------------------- engines


def _scan_patterns(texts: pd.Series, entities: tuple[str, ...]) -> tuple[np.ndarray, pd.Series]:
    """Spans found per text and entity type (in ``entities`` order), and the texts with
    each span replaced by its entity's sentinel character."""
    counts = np.zeros((len(texts), len(entities)), dtype=np.int64)
    work = texts
    for entity in (e for e in _PATTERN_ORDER if e in entities):
        pattern = _PATTERNS[entity]
        found = work.str.extractall(f"({pattern})")[0] if len(work) else pd.Series()
        if found.empty:
            continue
        # Each distinct match is checked once; the replacement below looks it up.
        distinct = pd.Series(found.unique(), dtype=object)
        valid = frozenset(distinct[_CHECKS[entity](distinct)])
        hits = found.isin(valid).to_numpy()
        rows = found.index.get_level_values(0).to_numpy()[hits]
        counts[:, entities.index(entity)] = np.bincount(rows, minlength=len(texts))
        sentinel = _SENTINEL[entity]

        def replace(match: re.Match[str], valid: frozenset[str] = valid, s: str = sentinel) -> str:
            return s if match.group(0) in valid else match.group(0)

        work = work.str.replace(pattern, replace, regex=True)
    return counts, work


def _fill_sentinels(work: pd.Series, entities: tuple[str, ...], replacement: str) -> pd.Series:
    for entity in entities:
        work = work.str.replace(
            _SENTINEL[entity], replacement.replace("{entity}", entity), regex=False
        )
    return work


@functools.lru_cache(maxsize=4)
def _presidio_analyzer(language: str) -> AnalyzerEngine:
    """Presidio's pattern recognizers on a blank spaCy pipeline, built without network.

    ``SpacyNlpEngine`` downloads its model unless the model name is an existing path, so
    a blank pipeline (tokenizer only) is written to a temporary directory and loaded from
    there; spaCy reads it into memory, so the directory can go at once. The e-mail
    recognizer's domain check calls ``tldextract.extract``, whose module-level extractor
    fetches the public-suffix list on first use: the recognizer used here checks with an
    extractor that reads only the snapshot bundled with ``tldextract``.
    """
    try:
        import spacy
        import tldextract
        from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
        from presidio_analyzer.nlp_engine import NlpEngineProvider
        from presidio_analyzer.predefined_recognizers import (
            CreditCardRecognizer,
            EmailRecognizer,
            IbanRecognizer,
            IpRecognizer,
            PhoneRecognizer,
        )
    except ImportError as exc:
        raise ImportError(
            "scan_pii(engine='presidio') needs presidio-analyzer: pip install 'veil[pii]', "
            "or use engine='patterns'"
        ) from exc

    offline_suffixes = tldextract.TLDExtract(
        cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True
    )

    class OfflineEmailRecognizer(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            return bool(offline_suffixes(pattern_text).fqdn != "")

    try:
        blank = spacy.blank(language)
    except ImportError as exc:  # spaCy raises ImportError for an unknown language code
        raise ParameterError(f"language: spaCy has no language {language!r}") from exc
    with tempfile.TemporaryDirectory(prefix="veil-spacy-blank-") as model_dir:
        blank.to_disk(model_dir)
        nlp_engine = NlpEngineProvider(
            nlp_configuration={
                "nlp_engine_name": "spacy",
                "models": [{"lang_code": language, "model_name": model_dir}],
            }
        ).create_engine()

    registry = RecognizerRegistry(supported_languages=[language])
    for recognizer in (
        OfflineEmailRecognizer(supported_language=language),
        PhoneRecognizer(supported_language=language),
        CreditCardRecognizer(supported_language=language),
        IbanRecognizer(supported_language=language),
        IpRecognizer(supported_language=language),
    ):
        registry.add_recognizer(recognizer)
    return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=[language])


# What a text must hold for a recognizer to find anything in it: every pattern of
# Presidio's e-mail recognizer has an "@"; the phone matcher's candidates (Google's
# phonenumbers), the card and IBAN patterns need a decimal digit; the IPv4 patterns
# need digits and every IPv6 pattern a ":". A text lacking them is not analysed for
# that entity type, which cannot change the findings.
_NEEDS: dict[str, tuple[str, ...]] = {
    "EMAIL_ADDRESS": ("@",),
    "PHONE_NUMBER": ("digit",),
    "CREDIT_CARD": ("digit",),
    "IBAN_CODE": ("digit",),
    "IP_ADDRESS": ("digit", ":"),
}


def _possible(texts: pd.Series, entities: tuple[str, ...]) -> np.ndarray:
    """Per text and entity type (texts x entities), whether the text holds what the
    recognizer needs (:data:`_NEEDS`); one pass over the texts per character class.

    Python's ``re`` decides what a digit is, as in the recognizers (``\\d`` is any
    Unicode decimal digit there, not only ASCII ones).
    """
    strings = texts.astype(object).str
    holds = {
        c: found.to_numpy(dtype=bool, na_value=False)
        for c, found in (
            ("digit", strings.contains(r"\d", regex=True)),
            ("@", strings.contains("@", regex=False)),
            (":", strings.contains(":", regex=False)),
        )
    }
    columns = [np.logical_or.reduce([holds[c] for c in _NEEDS[e]]) for e in entities]
    return np.stack(columns, axis=1) if columns else np.zeros((len(texts), 0), dtype=bool)


def _presidio_results(
    texts: pd.Series, entities: tuple[str, ...], language: str
) -> list[list[Any]]:
    """Presidio's findings for each text, as ``AnalyzerEngine.analyze`` returns them.

    Texts are grouped by the entity types they can hold (:func:`_possible`); each group
    goes through Presidio's ``BatchAnalyzerEngine`` (spaCy's ``nlp.pipe`` in batches)
    with those entity types only, and texts that can hold none are not analysed. A
    recognizer that cannot match a text adds nothing to its findings, so they are the
    same as analysing every text for every type.
    """
    from presidio_analyzer import BatchAnalyzerEngine

    batch = BatchAnalyzerEngine(_presidio_analyzer(language))
    strings: list[str] = texts.tolist()
    found: list[list[Any]] = [[] for _ in strings]
    possible = _possible(texts, entities)
    if not len(strings):
        return found
    kinds, group = np.unique(possible, axis=0, return_inverse=True)
    group = np.asarray(group).ravel()
    for k, kind in enumerate(kinds):
        if not kind.any():
            continue
        rows = np.flatnonzero(group == k)
        results = batch.analyze_iterator(
            [strings[i] for i in rows],
            language=language,
            batch_size=256,
            entities=[e for e, ok in zip(entities, kind, strict=True) if ok],
        )
        for i, result in zip(rows.tolist(), results, strict=True):
            found[i] = result
    return found


def _scan_presidio(
    texts: pd.Series, entities: tuple[str, ...], language: str, replacement: str | None
) -> tuple[np.ndarray, pd.Series]:
    """Spans found per text and entity type, and the texts with the spans replaced.

    Overlapping spans (Presidio reports them across entity types) are resolved as in
    Presidio's anonymizer: the higher score wins, then the longer span; the counts are
    of the spans kept, so that they match what :func:`redact_pii` replaces.
    """
    results = _presidio_results(texts, entities, language)
    counts = np.zeros((len(texts), len(entities)), dtype=np.int64)
    strings: list[str] = texts.tolist()
    redacted = list(strings)
    # Only texts with findings reach this loop.
    for i in (i for i, found in enumerate(results) if found):
        ranked = sorted(results[i], key=lambda r: (-r.score, r.start - r.end, r.start))
        kept: list[tuple[int, int, str]] = []
        for r in ranked:
            if all(r.end <= s or r.start >= e for s, e, _ in kept):
                kept.append((r.start, r.end, r.entity_type))
        for _, _, entity in kept:
            counts[i, entities.index(entity)] += 1
        if replacement is not None:
            text = strings[i]
            for start, end, entity in sorted(kept, reverse=True):
                text = text[:start] + replacement.replace("{entity}", entity) + text[end:]
            redacted[i] = text
    return counts, pd.Series(redacted, index=texts.index, dtype=object)


def _analyse(
    texts: pd.Series,
    entities: tuple[str, ...],
    engine: Engine,
    language: str,
    replacement: str | None,
) -> tuple[np.ndarray, pd.Series]:
    # Full-width and other non-ASCII digits are read as ASCII ones by both engines.
    texts = ascii_digits(texts.astype("string")).astype(object)
    if engine == "presidio":
        if not isinstance(language, str) or not language:
            raise ParameterError(f"language: must be a spaCy language code, got {language!r}")
        return _scan_presidio(texts, entities, language, replacement)
    counts, work = _scan_patterns(texts, entities)
    if replacement is not None:
        work = _fill_sentinels(work, entities, replacement)
    return counts, work


# ----------------------------------------------------------------------------- public API


def scan_pii(
    df: pd.DataFrame,
    columns: Hashable | Sequence[Hashable] | None = None,
    *,
    entities: Sequence[str] = ENTITIES,
    engine: Engine = "presidio",
    language: str = "en",
    n_examples: int = 3,
) -> PiiReport:
    """Count e-mail addresses, phone numbers, card numbers, IBANs and IP addresses per column.

    The report holds counts and row labels only: no found text appears in it, its repr
    or its string form.

    Parameters
    ----------
    df : DataFrame
        The data; it is not modified.
    columns : label or sequence of labels, optional
        Columns to scan (object, string or categorical dtype). Default: every such column.
    entities : sequence of str
        Entity types to look for, from :data:`ENTITIES` (Presidio's names).
    engine : {"presidio", "patterns"}
        ``"presidio"`` (needs the ``pii`` extra; runs offline) or the faster pure-regex
        ``"patterns"``; see the module documentation.
    language : str
        spaCy language code for the Presidio engine; the pattern engine does not depend
        on the language.
    n_examples : int
        Row labels kept per column and entity type (>= 0).

    Returns
    -------
    PiiReport

    Examples
    --------
    >>> df = pd.DataFrame({"note": ["mail ann@example.com", "none", None]})
    >>> report = scan_pii(df, engine="patterns")
    >>> int(report.counts.loc["note", "EMAIL_ADDRESS"]), float(report.share_with_pii["note"])
    (1, 0.3333333333333333)
    >>> "ann@" in repr(report)
    False
    """
    ents = _check_entities(entities)
    eng = _check_engine(engine)
    if isinstance(n_examples, bool) or not isinstance(n_examples, (int, np.integer)):
        raise ParameterError(f"n_examples: must be an integer >= 0, got {n_examples!r}")
    if n_examples < 0:
        raise ParameterError(f"n_examples: must be an integer >= 0, got {n_examples!r}")
    cols = _check_columns(df, columns)
    pool = _pool(df, cols)
    per_text, _ = _analyse(pool.texts, ents, eng, language, None)

    n_rows = len(df)
    counts = np.zeros((len(cols), len(ents)), dtype=np.int64)
    share = np.zeros(len(cols), dtype=np.float64)
    examples: dict[str, dict[str, tuple[Hashable, ...]]] = {}
    # One extra all-zero row for the missing values' code -1.
    padded = np.vstack([per_text, np.zeros((1, len(ents)), dtype=np.int64)])
    for k, c in enumerate(cols):
        per_row = padded[pool.row_codes[c]]
        counts[k] = per_row.sum(axis=0)
        share[k] = (per_row.any(axis=1).mean()) if n_rows else 0.0
        examples[str(c)] = {
            e: tuple(df.index[np.flatnonzero(per_row[:, j])[:n_examples]])
            for j, e in enumerate(ents)
        }
    index = pd.Index(cols, name="column")
    return PiiReport(
        counts=pd.DataFrame(counts, index=index, columns=pd.Index(ents, name="entity")),
        share_with_pii=pd.Series(share, index=index, name="share_with_pii"),
        examples=examples,
        n_rows=n_rows,
        engine=eng,
    )


def redact_pii(
    df: pd.DataFrame,
    columns: Hashable | Sequence[Hashable] | None = None,
    *,
    entities: Sequence[str] = ENTITIES,
    replacement: str = "<{entity}>",
    engine: Engine = "presidio",
    language: str = "en",
) -> pd.DataFrame:
    """Replace each e-mail address, phone number, card number, IBAN and IP address in text.

    Only the found spans change; the text around them, missing values and values without
    findings are kept as they are. The result is a new frame (``df`` is not modified);
    its ``attrs["veil.masking"]`` records the treatment.

    Parameters
    ----------
    df : DataFrame
        The data.
    columns : label or sequence of labels, optional
        Columns to treat (object, string or categorical dtype). Default: every such column.
    entities : sequence of str
        Entity types to replace, from :data:`ENTITIES`.
    replacement : str
        What a span becomes; ``"{entity}"`` in it is replaced by the entity type, so the
        default turns ``ann@example.com`` into ``<EMAIL_ADDRESS>``.
    engine : {"presidio", "patterns"}
        As for :func:`scan_pii`.
    language : str
        spaCy language code for the Presidio engine.

    Examples
    --------
    >>> df = pd.DataFrame({"note": ["mail ann@example.com today", None]}, dtype=object)
    >>> redact_pii(df, engine="patterns")["note"].tolist()
    ['mail <EMAIL_ADDRESS> today', None]
    """
    ents = _check_entities(entities)
    eng = _check_engine(engine)
    if not isinstance(replacement, str):
        raise ParameterError(f"replacement: must be a string, got {type(replacement).__name__}")
    cols = _check_columns(df, columns)
    pool = _pool(df, cols)
    per_text, redacted = _analyse(pool.texts, ents, eng, language, replacement)
    changed = np.asarray(per_text.any(axis=1), dtype=bool)
    # The pool's own values where nothing was found, so non-string objects stay as they are.
    new_texts = np.asarray(redacted, dtype=object)

    out = output_frame(df)
    for c in cols:
        column = df[c]
        if isinstance(column.dtype, pd.CategoricalDtype):
            piece = pool.category_codes[c]
            labels = np.where(changed[piece], new_texts[piece], np.asarray(column.cat.categories))
            label_codes, categories = pd.factorize(pd.Series(labels, dtype=object))
            cat = np.asarray(column.cat.codes, dtype=np.intp)
            codes = np.where(cat >= 0, label_codes[np.maximum(cat, 0)], -1)
            out[c] = pd.Series(
                pd.Categorical.from_codes(
                    codes, categories=categories, ordered=bool(column.cat.ordered)
                ),
                index=column.index,
            )
        else:
            rows = pool.row_codes[c]
            hit = (rows >= 0) & changed[np.maximum(rows, 0)]
            out[c] = column.where(~hit, new_texts[np.maximum(rows, 0)])
    record_masking(
        out,
        df,
        [
            {
                "method": "redact_pii",
                "columns": [str(c) for c in cols],
                "entities": list(ents),
                "engine": eng,
                "replacement": replacement,
            }
        ],
    )
    return out
