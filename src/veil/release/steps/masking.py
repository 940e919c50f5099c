"""Direct identifiers: redaction, keyed pseudonyms, vault tokens and format-preserving encryption.

None of these spends privacy budget: each reveals what its ledger entry says (equality of
values, their format) and nothing more without the key. Keys are loaded when the step is
built, before any data is read; only their key id reaches the records. Columns treated
here are read as text (``"00123"`` keeps its zeros, a key sees the file's characters).
All are row steps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, ValidationInfo, field_validator, model_validator

from veil import masking
from veil.errors import DataTypeError, MissingValueError, ParameterError
from veil.frames import record_masking
from veil.gate import vault_kind
from veil.masking import SecretKey
from veil.masking.keys import check_env_name, check_key_path
from veil.release.schema import Missing, SpecModel, resolve_path
from veil.release.steps.base import LedgerStep, Step, public_parameters, replaced

__all__ = [
    "Ff1Treatment",
    "HmacTreatment",
    "MaskingKind",
    "RedactTreatment",
    "TokenTreatment",
]


class _Keyed(SpecModel):
    """A treatment keyed by a secret loaded from a file or an environment variable."""

    key_file: Path | None = None
    key_env: str | None = None
    key_id: str | None = None

    _resolve_key = field_validator("key_file")(resolve_path)

    @field_validator("key_file", mode="before")
    @classmethod
    def _not_key_material(cls, value: Any) -> Any:
        # Before the path is resolved: a key pasted here is refused, never echoed.
        if isinstance(value, (str, os.PathLike)):
            try:
                check_key_path(value, "key_file")
            except ParameterError as exc:
                raise ValueError(str(exc).removeprefix("key_file: ")) from None
        return value

    @field_validator("key_env", mode="before")
    @classmethod
    def _env_name(cls, value: Any) -> Any:
        # A key pasted in place of the variable's name is refused at load (so by a dry
        # run too), never echoed.
        if value is not None:
            try:
                check_env_name(value)
            except ParameterError as exc:
                raise ValueError(str(exc).removeprefix("key_env: ")) from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _no_inline_key(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and any(k in data for k in ("key", "secret", "password")):
            raise ValueError(
                "inline keys are not allowed in a plan (it is not a secret store); "
                "name a key file with key_file or an environment variable with key_env"
            )
        return data

    @model_validator(mode="after")
    def _one_key_source(self) -> _Keyed:
        if (self.key_file is None) == (self.key_env is None):
            raise ValueError("give exactly one of key_file or key_env")
        return self


class RedactTreatment(SpecModel):
    """Replace every present value with ``replacement`` (:func:`veil.masking.redact`)."""

    method: Literal["redact"] = "redact"
    replacement: str = "[REDACTED]"


class HmacTreatment(_Keyed):
    """Keyed pseudonyms, HMAC-SHA256 (:func:`veil.masking.pseudonymize_columns`)."""

    method: Literal["hmac"] = "hmac"
    length: Annotated[int, Field(ge=1, le=64)] | None = None
    normalize: Literal["case", "whitespace", "both"] | None = None
    namespace: str | None = None


class TokenTreatment(_Keyed):
    """Random tokens kept in an encrypted vault (:class:`veil.masking.Vault`).

    ``vault`` is a database URL (``sqlite:///...``, ``postgresql://...``) or a path to
    a SQLite file (relative to the plan). The key is the vault's master key.
    """

    method: Literal["token"] = "token"
    vault: str
    namespace: str | None = None

    @field_validator("vault")
    @classmethod
    def _vault_path(cls, value: str, info: ValidationInfo) -> str:
        if "://" in value:
            return value
        resolved = resolve_path(Path(value), info)
        return os.fspath(resolved) if resolved is not None else value


class Ff1Treatment(_Keyed):
    """Format-preserving encryption, FF1 (NIST SP 800-38G, :class:`veil.masking.FF1`)."""

    method: Literal["ff1"] = "ff1"
    alphabet: Annotated[str, Field(min_length=2)]
    tweak: str | None = None
    missing: Missing = "error"


MaskingTreatment = RedactTreatment | HmacTreatment | TokenTreatment | Ff1Treatment

_GUARANTEES = {
    "redact": "value removed (deterministic)",
    "hmac": "keyed pseudonym: reveals equality only, without the key",
    "token": "random token: reveals equality only, without the vault",
    "ff1": "format-preserving encryption: reveals equality and format, without the key",
}


def _key(spec: HmacTreatment | TokenTreatment | Ff1Treatment) -> SecretKey:
    key = (
        SecretKey.from_file(spec.key_file)
        if spec.key_file is not None
        else SecretKey.from_env(str(spec.key_env))
    )
    if spec.key_id is not None:
        key.require_id(spec.key_id)
    return key


def _ff1(column: str, spec: Ff1Treatment) -> Any:
    key = _key(spec)
    key_id = key.key_id
    cipher = masking.FF1(key, spec.alphabet)
    tweak = (spec.tweak if spec.tweak is not None else column).encode("utf-8")

    def apply(df: pd.DataFrame, _: Any) -> pd.DataFrame:
        # FF1 is deterministic: encrypt each distinct value once.
        codes, uniques = pd.factorize(df[column], use_na_sentinel=True)
        series = df[column]
        # A loop over the distinct values only: FF1 encrypts text.
        if not all(isinstance(u, str) for u in uniques):
            raise DataTypeError(
                f"column {column!r}: FF1 encrypts text, got {series.dtype} values; store the "
                "column as text (CSV columns of keyed treatments are read as text)"
            )
        if spec.missing == "error" and (codes < 0).any():
            raise MissingValueError(
                f"column {column!r}: holds {int((codes < 0).sum())} missing values; set "
                f"columns.{column}.treatment.missing: keep to leave them missing"
            )
        encrypted = np.asarray(cipher.encrypt_many(list(uniques), tweak=tweak), dtype=object)
        values = np.full(codes.shape, None, dtype=object)
        values[codes >= 0] = encrypted[codes[codes >= 0]]
        out = replaced(df, column, pd.Series(values, index=series.index, dtype=object))
        entry = {"column": column, "method": "ff1", "key_id": key_id, "radix": len(spec.alphabet)}
        record_masking(out, df, [entry])
        return out

    return apply


def _token(name: str, spec: TokenTreatment) -> Any:
    master = _key(spec)

    def tokenize(df: pd.DataFrame, _: Any) -> pd.DataFrame:
        namespace = spec.namespace or name
        with masking.Vault(spec.vault, master) as vault:
            tokens = vault.tokenize(df[name], namespace)
            entry = {
                "column": name,
                "method": "vault token",
                "key_id": vault.key_id,
                "namespace": namespace,
            }
        out = replaced(df, name, tokens)
        record_masking(out, df, [entry])
        return out

    return tokenize


def _redact(name: str, spec: RedactTreatment) -> Any:
    replacement = spec.replacement
    return lambda df, _: replaced(df, name, masking.redact(df[name], replacement))


def _hmac(name: str, spec: HmacTreatment) -> Any:
    key = _key(spec)
    return lambda df, _: masking.pseudonymize_columns(
        df, [name], key, normalize=spec.normalize, length=spec.length, namespace=spec.namespace
    )


class MaskingKind:
    """Redaction, keyed pseudonyms, vault tokens and FF1: row steps with no epsilon."""

    reads_text = True

    def planned(self, name: str, spec: MaskingTreatment) -> LedgerStep:
        """No privacy cost; the guarantee says what the masked values still reveal.

        A vault is shown by its kind only (:func:`veil.gate.vault_kind`): its URL may
        hold credentials and its path is the custodian's.
        """
        parameters = public_parameters(spec)
        if isinstance(spec, TokenTreatment):
            parameters["vault"] = vault_kind(spec.vault)
        return LedgerStep(name, spec.method, parameters, None, _GUARANTEES[spec.method])

    def build(self, name: str, spec: MaskingTreatment) -> Step:
        """A row step (its key loaded now)."""
        fn: Any
        if isinstance(spec, RedactTreatment):
            fn = _redact(name, spec)
        elif isinstance(spec, HmacTreatment):
            fn = _hmac(name, spec)
        elif isinstance(spec, TokenTreatment):
            fn = _token(name, spec)
        else:
            fn = _ff1(name, spec)
        return Step(f"{name}: {spec.method}", name, "row", fn, (name,))
