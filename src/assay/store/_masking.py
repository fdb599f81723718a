"""URLs fit for messages: the password replaced."""

from __future__ import annotations

from urllib.parse import unquote

__all__ = ["masked"]


def masked(url: str) -> str:
    """The URL with any password replaced, fit for messages and logs: in the authority
    (up to its last ``@``, so a password holding ``@``, ``/`` or ``?`` is hidden whole) or as a
    query parameter whose name, percent-decoded, holds "password" (``password``,
    ``%70assword``, ``sslpassword``: libpq reads them all)."""
    scheme, sep, rest = url.partition("://")
    location, question, query = rest.partition("?")
    if sep and "@" not in location and ":" in location and "/" not in location:
        # a password holding "?": still in the authority, which ends at an "@" past it
        # (the last one: should the query hold one too, more is hidden, never less)
        location, question, query = rest, "", ""
    if sep and "@" in location:
        credentials, at, host = location.rpartition("@")
        user, colon, _password = credentials.partition(":")
        if colon:
            url = f"{scheme}{sep}{user}:***{at}{host}{question}{query}"
    base, question, query = url.partition("?")
    return (
        base + question + "&".join(_masked_parameter(part) for part in query.split("&")) if question else url
    )


def _masked_parameter(part: str) -> str:
    name, equals, _value = part.partition("=")
    return f"{name}=***" if equals and "password" in unquote(name).lower() else part
