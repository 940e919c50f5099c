"""``veil mask``: masking of direct identifiers (:mod:`veil.masking`).

Keyed methods read their key from a file or an environment variable; no message repeats
either option's value, and only the key's id is printed.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.cli.console import captured_warnings, emit_json, print_text, print_warnings
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.files import check_encoding, read_table, require_columns
from veil.cli.flags import as_flags
from veil.cli.one_table import (
    Data,
    MissingPolicy,
    Output,
    Treated,
    distinct,
    escaped_text,
    order_text,
    other_columns,
)
from veil.cli.options import (
    Acknowledge,
    DropOther,
    Encoding,
    Json,
    KeepOrder,
    KeepOther,
    OutFile,
    OutFormat,
    RawCsv,
    Sep,
)

if TYPE_CHECKING:
    from veil.masking import SecretKey

__all__ = ["MaskMethod", "mask"]


class MaskMethod(str, enum.Enum):
    """Masking treatments of :mod:`veil.masking`."""

    redact = "redact"
    hmac = "hmac"
    ff1 = "ff1"
    mask_email = "mask-email"
    mask_partial = "mask-partial"
    mask_phone = "mask-phone"
    mask_card = "mask-card"


_KEYED = (MaskMethod.hmac, MaskMethod.ff1)


def _scrub(text: str, secret: str | None, name: str) -> str:
    """``text`` without ``secret`` (an option value that may be a key passed by mistake)."""
    if not secret:
        return text
    for form in {secret, repr(secret), secret.strip()}:
        if form:
            text = text.replace(form, name)
    return text


def _load_key(key_file: Path | None, key_env: str | None, key_id: str | None) -> SecretKey:
    """The key of --key-file or --key-env; no message repeats either option's value.

    A key passed by mistake as the value (``--key-env "$VK"``) must not be printed: the
    variable name is replaced by a placeholder in every message, and a key file's name
    is shown only when it looks like a file name (holds a dot).
    """
    from veil.errors import VeilError
    from veil.masking import SecretKey

    hidden = str(key_env) if key_file is None else os.fspath(key_file)
    placeholder = (
        "the variable named by --key-env" if key_file is None else "the file named by --key-file"
    )
    if key_file is not None and "." in key_file.name:
        hidden = ""
    try:
        key = (
            SecretKey.from_file(key_file)
            if key_file is not None
            else SecretKey.from_env(str(key_env))
        )
        if key_id is not None:
            key.require_id(key_id)
    except (VeilError, OSError) as error:
        option = "--key-file" if key_file is not None else "--key-env"
        if isinstance(error, OSError) and not isinstance(error, VeilError):
            reason = error.strerror or type(error).__name__
            text = f"{os.fspath(key_file or '')!r}: {reason}"
        else:
            text = str(error)
        raise CliUsageError(f"{option}: {_scrub(text, hidden, placeholder)}") from None
    return key


@reporting_errors
def mask(
    data: Data,
    column: Annotated[
        list[str],
        typer.Option("--column", metavar="COLUMN", help="A column to mask; repeatable."),
    ],
    method: Annotated[
        MaskMethod,
        typer.Option(
            "--method",
            help="redact, hmac (keyed pseudonyms), ff1 (format-preserving encryption), "
            "mask-email, mask-partial, mask-phone or mask-card.",
        ),
    ],
    out: OutFile,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file", help="hmac/ff1: a file holding the key (hex, base64:..., or raw)."
        ),
    ] = None,
    key_env: Annotated[
        str | None,
        typer.Option("--key-env", help="hmac/ff1: an environment variable holding the key."),
    ] = None,
    key_id: Annotated[
        str | None,
        typer.Option(
            "--key-id",
            help="Refuse to run unless the key has this id (guards against the wrong key).",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", help="hmac: namespace of the pseudonyms (default: column)."),
    ] = None,
    length: Annotated[
        int | None, typer.Option("--length", help="hmac: hex characters kept, 1 to 64.")
    ] = None,
    normalize: Annotated[
        str | None,
        typer.Option("--normalize", help="hmac: case, whitespace or both before hashing."),
    ] = None,
    alphabet: Annotated[
        str,
        typer.Option("--alphabet", help="ff1: the symbols of the values (a string)."),
    ] = "0123456789",
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="ff1: missing values raise (error) or stay (keep)."),
    ] = MissingPolicy.error,
    replacement: Annotated[
        str, typer.Option("--replacement", help="redact: the replacement text.")
    ] = "[REDACTED]",
    keep_last: Annotated[
        int,
        typer.Option("--keep-last", help="mask-partial/mask-phone: characters left visible."),
    ] = 4,
    keep_other: KeepOther = False,
    acknowledge: Acknowledge = None,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Mask direct identifiers (veil.masking); keys come from a file or a variable.

    Keyed methods (hmac, ff1) need exactly one of --key-file or --key-env; the key is
    never printed or written, only its id. The other columns need --drop-other or
    --keep-other; released rows are in a random order.
    """
    from veil import masking
    from veil.rng import resolve_rng

    if method in _KEYED:
        if (key_file is None) == (key_env is None):
            raise CliUsageError(
                f"--key-file, --key-env: --method {method.value} needs exactly one of them"
            )
    elif key_file is not None or key_env is not None or key_id is not None:
        raise CliUsageError(f"--key-file, --key-env, --key-id: not for --method {method.value}")
    distinct(column, "--column")
    check_encoding(encoding)
    inputs = (data,) if key_file is None else (data, key_file)
    output = Output(out, sep, out_format, raw_csv, keep_order, inputs)
    output.check()
    key = _load_key(key_file, key_env, key_id) if method in _KEYED else None
    # Text throughout: the columns passed through are written back as they were read.
    frame = read_table(data, sep=sep, all_text=True, encoding=encoding)
    require_columns(frame, column, "--column", data.name)
    with as_flags("missing"), captured_warnings() as caught:
        frame = other_columns(
            frame,
            Treated(identifiers=tuple(column)),
            keep_other,
            drop_other,
            data.name,
            acknowledge,
        )
        if key is not None and method is MaskMethod.hmac:
            released = masking.pseudonymize_columns(
                frame,
                column,
                key,
                normalize=normalize,  # type: ignore[arg-type]  # checked by veil.masking
                length=length,
                namespace=namespace,
            )
        else:
            released = frame.copy()
            cipher = masking.FF1(key, alphabet) if key is not None else None
            for name in column:
                values = frame[name]
                if cipher is not None:
                    released[name] = cipher.encrypt_many(
                        values, tweak=name.encode("utf-8"), missing=missing.value
                    )
                elif method is MaskMethod.redact:
                    released[name] = masking.redact(values, replacement)
                elif method is MaskMethod.mask_email:
                    released[name] = masking.mask_email(values)
                elif method is MaskMethod.mask_partial:
                    released[name] = masking.mask_partial(values, keep_last)
                elif method is MaskMethod.mask_phone:
                    released[name] = masking.mask_phone(values, keep_last)
                else:
                    released[name] = masking.mask_card(values)
        released, written = output.publish(released, resolve_rng(None))
    print_warnings(caught)
    payload = {
        "out": out,
        "columns": column,
        "method": method.value,
        "key_id": None if key is None else key.key_id,
        "rows": len(released),
        **written,
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    keyed = f" with key {key.key_id}" if key is not None else ""
    print_text(
        f"masked {', '.join(column)} ({method.value}{keyed}) in {len(released)} rows "
        f"({order_text(keep_order)}); wrote {out}{escaped_text(written)}"
    )
