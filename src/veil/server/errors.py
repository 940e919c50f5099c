"""Errors of the platform: each maps to an HTTP status and names the field at fault."""

from __future__ import annotations

from veil.errors import VeilError

__all__ = [
    "Conflict",
    "Forbidden",
    "InputError",
    "NotFound",
    "ServerError",
    "TooManyAttempts",
    "Unauthorized",
]


class ServerError(VeilError):
    """A refused request: ``status`` for HTTP, ``field`` the input at fault (or "")."""

    status = 400

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class InputError(ServerError, ValueError):
    """A field's value is not allowed (the message names the field, value and rule)."""

    status = 422


class Unauthorized(ServerError):
    """No valid session or token."""

    status = 401


class Forbidden(ServerError):
    """The role may not do this."""

    status = 403


class NotFound(ServerError):
    """No such object among those the account may see."""

    status = 404


class Conflict(ServerError):
    """The object is not in a state that allows this (a published release, a deleted dataset)."""

    status = 409


class TooManyAttempts(ServerError):
    """Too many failed logins: the account is locked or the client must wait."""

    status = 429
