"""Masking and pseudonymization of direct identifiers, and audits of weak masking.

Treatments: redaction and format-aware partial masking, keyed pseudonyms (HMAC-SHA256
with a managed :class:`SecretKey`), tokenization with an encrypted :class:`Vault`
(SQLite or PostgreSQL), format-preserving encryption (:class:`FF1`, NIST SP 800-38G),
shuffling, data swapping and rank swapping. Audits: :func:`scan_pii` (and
:func:`redact_pii`) for personal data in free text, offline, and :func:`hash_reversal`, the
dictionary attack that recovers unkeyed hashes of small identifier spaces.

Keys never appear in outputs, reprs, logs or error messages; results record only a key id.
"""

from typing import Any

from veil.masking.audit import (
    CandidateSpace,
    HashReversalReport,
    digits,
    hash_reversal,
    phone_numbers,
)
from veil.masking.ff1 import FF1
from veil.masking.keys import SecretKey, hkdf_sha256
from veil.masking.pii import PiiReport, redact_pii, scan_pii
from veil.masking.pseudonym import collision_probability, pseudonymize, pseudonymize_columns
from veil.masking.redact import mask_card, mask_email, mask_partial, mask_phone, redact
from veil.masking.swapping import rank_swap, shuffle, swap

__all__ = [
    "FF1",
    "CandidateSpace",
    "HashReversalReport",
    "PiiReport",
    "SecretKey",
    "Vault",
    "VaultError",
    "collision_probability",
    "digits",
    "hash_reversal",
    "hkdf_sha256",
    "mask_card",
    "mask_email",
    "mask_partial",
    "mask_phone",
    "phone_numbers",
    "pseudonymize",
    "pseudonymize_columns",
    "rank_swap",
    "redact",
    "redact_pii",
    "scan_pii",
    "shuffle",
    "swap",
]


def __getattr__(name: str) -> Any:
    # The vault needs SQLAlchemy and cryptography (the ``masking`` extra): import it on
    # first use so that the rest of veil.masking works without them.
    if name in ("Vault", "VaultError"):
        try:
            from veil.masking import vault
        except ImportError as exc:  # pragma: no cover - exercised without the extra
            raise ImportError("veil.masking.Vault needs: pip install 'veil[masking]'") from exc
        return getattr(vault, name)
    raise AttributeError(f"module 'veil.masking' has no attribute {name!r}")
