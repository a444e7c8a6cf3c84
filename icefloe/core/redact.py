"""Secrets kept out of what icefloe prints and logs: the password of a URI
(``postgresql://user:***@host/db``), ``password=``/``secret=``/``token=``-style parameters, bearer
and basic credentials, and the values of properties whose names say they hold a secret, also
inside a dict or JSON text (``'db.password': '***'``, as an error or a log line may show a
snapshot summary or a request's properties)."""
from __future__ import annotations

import logging
import re
from typing import Mapping, TypeVar

K = TypeVar("K")

MASK = "***"
# scheme://user:password@ -> scheme://user:***@  (the user stays: it helps find the configuration)
_URI_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s'\"]*:)[^@/\s'\"]+@")
_PARAMETER = re.compile(
    r"(?i)(?P<head>\b(?:password|passwd|pwd|secret|client[_-]secret|token|access[_-]token|refresh[_-]token|"
    r"credential|sig|x-amz-signature|x-amz-security-token|accountkey|sharedaccesssignature)\s*=\s*)"
    r"(?P<quote>['\"]?)[^&\s'\";,)]+")
_AUTHORIZATION = re.compile(r"(?i)\b(?P<head>(?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-]{8,}")
# 'key': 'value' / "key": "value" (a dict's repr, JSON); the key is checked by is_secret_name
_QUOTED_ITEM = re.compile(r"""(?P<head>(?P<q>["'])(?P<key>[^"'\s]{1,200})(?P=q)\s*:\s*(?P<vq>["']))"""
                          r"""(?P<value>(?:\\.|(?!(?P=vq)).)*)(?P=vq)""")
_SECRET_NAMES = ("password", "passwd", "secret", "token", "credential", "private-key", "account-key",
                 "access-key", "sas", "connection-string")


def redact(text: str) -> str:
    """``text`` with the secrets it may hold replaced by ``***`` (see the module doc)."""
    text = _URI_PASSWORD.sub(lambda m: m.group("head") + MASK + "@", text)
    text = _PARAMETER.sub(lambda m: m.group("head") + m.group("quote") + MASK, text)
    text = _QUOTED_ITEM.sub(lambda m: m.group("head") + MASK + m.group("vq") if is_secret_name(m.group("key"))
                            else m.group(0), text)
    return _AUTHORIZATION.sub(lambda m: m.group("head") + MASK, text)


def is_secret_name(name: str) -> bool:
    """Whether a property named ``name`` holds a secret (``s3.secret-access-key``, ``db.password``;
    not ``s3.access-key-id``)."""
    n = name.lower().replace("_", "-")
    return any(w in n for w in _SECRET_NAMES) and not n.endswith("key-id")


def redact_properties(props: Mapping[K, object]) -> dict[K, object]:
    """A copy of ``props`` with the values of secret-named keys masked and the rest redacted."""
    return {k: MASK if is_secret_name(str(k)) else (redact(v) if isinstance(v, str) else v) for k, v in props.items()}


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message and traceback before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
