"""URLs fit for messages: the password replaced."""

from __future__ import annotations

import re

__all__ = ["masked"]


def masked(url: str) -> str:
    """The URL with any password replaced, fit for messages and logs: in the authority
    (up to its last ``@``, so a password holding ``@`` or ``/`` is hidden whole) or as a
    ``password=`` query parameter."""
    scheme, sep, rest = url.partition("://")
    location, question, query = rest.partition("?")
    if sep and "@" in location:
        credentials, at, host = location.rpartition("@")
        user, colon, _password = credentials.partition(":")
        if colon:
            url = f"{scheme}{sep}{user}:***{at}{host}{question}{query}"
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url, flags=re.IGNORECASE)
