"""Credentials removed from messages (:mod:`veil.gate.redact`), form by form.

Issue 18, defect 1: a vault URL's password reached the manifest, the custodian file and
the report, because only ``user:pw@`` was removed. Every error the command line prints,
every job error and audit line of the platform, and every warning a release records goes
through :func:`veil.gate.redact`; these tests pin each form a database URL or a libpq
setting can carry a credential in, and what is still shown (scheme, host, port, database
and the settings that hold no secret), since the message must still say which database
failed.
"""

from __future__ import annotations

import pytest

from veil.gate import is_clean, redact, redact_url
from veil.gate.redact import MASK, SAFE_QUERY

SECRET = "S3cretPassw0rd"

# (message, what redact() makes of it): the secret is gone, the rest is kept.
_FORMS = {
    "userinfo": (
        f"postgresql+psycopg://veil:{SECRET}@db.example:5432/vault",
        "postgresql+psycopg://db.example:5432/vault",
    ),
    "userinfo, IPv6 host": (
        f"postgresql://veil:{SECRET}@[::1]:5432/vault",
        "postgresql://[::1]:5432/vault",
    ),
    "userinfo, empty user": (f"redis://:{SECRET}@cache:6379/0", "redis://cache:6379/0"),
    "userinfo, several hosts": (
        f"postgresql://veil:{SECRET}@h1:5432,h2:5433/vault",
        "postgresql://h1:5432,h2:5433/vault",
    ),
    "?password=": (
        f"sqlite:///vault.db?password={SECRET}",
        f"sqlite:///vault.db?password={MASK}",
    ),
    "&password=": (
        f"postgresql+psycopg://db/vault?user=veil&password={SECRET}",
        f"postgresql+psycopg://db/vault?user={MASK}&password={MASK}",
    ),
    "&password= after a safe setting": (
        f"postgresql://db/vault?sslmode=require&password={SECRET}&connect_timeout=5",
        f"postgresql://db/vault?sslmode=require&password={MASK}&connect_timeout=5",
    ),
    "?sslpassword=": (
        f"postgresql://db/vault?sslpassword={SECRET}&sslmode=verify-full",
        f"postgresql://db/vault?sslpassword={MASK}&sslmode=verify-full",
    ),
    "userinfo and query at once": (
        f"postgresql://veil:{SECRET}@db/vault?sslpassword={SECRET}",
        f"postgresql://db/vault?sslpassword={MASK}",
    ),
    "a socket folder in the query": (
        f"postgresql+psycopg://postgres:{SECRET}@/vault?host=/run/pg&port=5433",
        f"postgresql+psycopg:///vault?host={MASK}&port={MASK}",
    ),
    "passfile and client key in the query": (
        "postgresql://db/vault?passfile=/home/u/.pgpass&sslkey=/home/u/k.pem",
        f"postgresql://db/vault?passfile={MASK}&sslkey={MASK}",
    ),
    "a fragment": (f"sqlite:///vault.db#{SECRET}", f"sqlite:///vault.db#{MASK}"),
    "percent-encoded userinfo": (
        "postgresql://veil:S3cret%40Passw%3Ard@db/vault",
        "postgresql://db/vault",
    ),
    "percent-encoded value": (
        "postgresql://db/vault?password=S3cret%26Pass%3D1",
        f"postgresql://db/vault?password={MASK}",
    ),
    "percent-encoded name": (
        f"postgresql://db/vault?pass%77ord={SECRET}",
        f"postgresql://db/vault?password={MASK}",
    ),
    "upper-case name": (
        f"postgresql://db/vault?PASSWORD={SECRET}",
        f"postgresql://db/vault?PASSWORD={MASK}",
    ),
    "mixed-case name": (
        f"postgresql://db/vault?SslPassword={SECRET}&sslmode=require",
        f"postgresql://db/vault?SslPassword={MASK}&sslmode=require",
    ),
    "upper-case URL": (f"POSTGRESQL://VEIL:{SECRET}@DB/VAULT", "postgresql://DB/VAULT"),
    "libpq keywords": (
        f"connection failed: host=db port=5432 password={SECRET} dbname=vault",
        f"connection failed: host=db port=5432 password={MASK} dbname=vault",
    ),
    "libpq keywords, quoted, upper case": (
        f"host=db PASSWORD = '{SECRET} with spaces' dbname=vault",
        f"host=db PASSWORD = {MASK} dbname=vault",
    ),
    "libpq sslpassword keyword": (
        f"host=db sslpassword={SECRET} sslmode=require",
        f"host=db sslpassword={MASK} sslmode=require",
    ),
    "PGPASSWORD": (
        f"environment: PGPASSWORD={SECRET} PGHOST=db",
        f"environment: PGPASSWORD={MASK} PGHOST=db",
    ),
    "PGSSLPASSWORD, quoted": (
        f"PGSSLPASSWORD='{SECRET}' PGSSLMODE=require",
        f"PGSSLPASSWORD={MASK} PGSSLMODE=require",
    ),
    "a prefixed name": (f"DB_PASSWORD={SECRET}", f"DB_PASSWORD={MASK}"),
    "userinfo without a scheme": (
        f"invalid address 'veil:{SECRET}@scheduler:8786'",
        "invalid address 'scheduler:8786'",
    ),
}


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_every_credential_form_is_removed_and_the_place_kept(form: str) -> None:
    message, expected = _FORMS[form]
    assert redact(message) == expected
    assert "S3cret" not in expected
    assert redact(expected) == expected  # a second pass changes nothing


@pytest.mark.parametrize(
    "form",
    sorted(f for f in _FORMS if "://" in _FORMS[f][0] and not _FORMS[f][0].startswith("invalid")),
)
def test_redact_url_is_redact_on_one_url(form: str) -> None:
    message, expected = _FORMS[form]
    assert redact_url(message) == expected


def test_several_urls_in_one_message_each_lose_their_credentials() -> None:
    message = (
        f"vault postgresql+psycopg://veil:{SECRET}@db/vault unreachable; "
        f"fell back to 'sqlite:///v.db?password={SECRET}&mode=rwc', then "
        f"postgresql://db2/vault?sslpassword={SECRET} and "
        f"<https://admin:{SECRET}@example.org/status> (or POSTGRES://U:{SECRET}@db3/v)"
    )
    assert redact(message) == (
        "vault postgresql+psycopg://db/vault unreachable; "
        f"fell back to 'sqlite:///v.db?password={MASK}&mode=rwc', then "
        f"postgresql://db2/vault?sslpassword={MASK} and "
        "<https://example.org/status> (or postgres://db3/v)"
    )


@pytest.mark.parametrize(
    "message",
    [
        "postgresql+psycopg://db.example:5432/vault",
        "postgresql://db.example/vault?sslmode=require&connect_timeout=5&application_name=veil",
        "sqlite:///home/custodian/vault.db?mode=ro&cache=shared",
        "sqlite:///vault.db",
        "tcp://scheduler.internal:8786",
        "see https://example.org/docs/plans.html for the vault's forms",
        "columns.name.treatment.vault: 'vault.db' is a file (sqlite)",
        "host=db port=5432 dbname=vault sslmode=require",
        "a password is needed: give it in the URL",
    ],
)
def test_a_message_with_no_credential_is_left_unchanged(message: str) -> None:
    assert redact(message) == message
    assert is_clean(message)


def test_the_safe_settings_are_shown_and_every_other_value_masked() -> None:
    safe = "&".join(f"{name}=v{i}" for i, name in enumerate(sorted(SAFE_QUERY)))
    url = f"postgresql://db/vault?{safe}&unknown_setting=x"
    assert redact_url(url) == f"postgresql://db/vault?{safe}&unknown_setting={MASK}"


# is_clean checks the public manifest: URLs with a user part or a secret-named setting,
# and secret-named pairs (not a fragment, a key's path, or a scheme-less address, which
# no manifest field holds).
_UNCLEAN = sorted(
    set(_FORMS)
    - {"a fragment", "passfile and client key in the query", "userinfo without a scheme"}
)


@pytest.mark.parametrize("form", _UNCLEAN)
def test_is_clean_sees_every_credential_form(form: str) -> None:
    message, _ = _FORMS[form]
    assert not is_clean(message)


def test_key_material_is_replaced_unless_digests_are_expected() -> None:
    key = "c0ffee00" * 8
    message = f"key file: {key!r} is not a path; sha256 {'ab' * 32}"
    assert redact(message) == "key file: '[key material]' is not a path; sha256 [key material]"
    assert redact(message, key_material=False) == message
    assert redact(f"id {'ab' * 19}") == f"id {'ab' * 19}"  # 38 digits: not a key


def test_a_url_that_cannot_be_parsed_is_masked_whole() -> None:
    assert redact_url(f"postgresql://veil:{SECRET}@[::1/vault") == MASK
    assert SECRET not in redact(f"cannot open postgresql://veil:{SECRET}@[::1/vault")
