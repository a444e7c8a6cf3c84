"""Catalogs by name, configured as pyiceberg users configure theirs: a YAML file and
environment variables.

``.icefloe.yaml`` (in the working directory, else the home directory; ``ICEFLOE_CONFIG`` names
another file)::

    catalog:
      default:
        warehouse: /data/warehouse
      logs:
        warehouse: /data/paimon
        format: paimon

and ``ICEFLOE_CATALOG__<NAME>__<KEY>=value`` (``ICEFLOE_CATALOG__DEFAULT__WAREHOUSE=/data/wh``),
which override the file. Keys: ``warehouse`` (required), ``format`` (iceberg or paimon), ``type``
(``hadoop``, ``sql`` or ``rest``), ``uri`` (the SQL catalog's database URL, or the REST catalog's), ``name``
(the SQL catalog's name) and, for a REST catalog, ``credential`` (``id:secret``) or ``token``.

``icefloe serve``'s settings sit in a ``serve:`` section of the same file (``SERVE_KEYS``; the
command's options override them)::

    serve:
      host: 0.0.0.0
      auth: /etc/icefloe/auth.yaml
      ssl-certfile: /etc/icefloe/cert.pem
      ssl-keyfile: /etc/icefloe/key.pem
      allow-purge: false            # also allowed-locations (a list), max-body-bytes, max-json-depth,
                                    # max-property-bytes: the options of the same names
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, cast

from icefloe.errors import ConfigError

KEYS = ("warehouse", "format", "type", "uri", "name", "credential", "token")
# the object store's settings (pyiceberg's names: s3.endpoint, s3.access-key-id, ...), passed to the FileIO
STORAGE_PREFIXES = ("s3.", "gcs.", "adls.", "io.", "spark.native-io")
ENV_PREFIX = "ICEFLOE_CATALOG__"
SERVE_KEYS = ("host", "port", "auth", "insecure", "ssl-certfile", "ssl-keyfile", "allow-purge", "allowed-locations",
              "max-body-bytes", "max-json-depth", "max-property-bytes")


def config_path() -> Optional[Path]:
    named = os.environ.get("ICEFLOE_CONFIG")
    if named:
        return Path(named)
    for d in (Path.cwd(), Path.home()):
        if (d / ".icefloe.yaml").is_file():
            return d / ".icefloe.yaml"
    return None


def _document(path: Path) -> object:
    """The configuration file's parsed YAML (an empty file is an empty mapping)."""
    import yaml

    try:
        return yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read the icefloe configuration {path}: {e}") from None


def _mapping(value: object) -> Optional[dict[Any, Any]]:
    """``value`` if YAML parsed it as a mapping (of any keys and values), else None."""
    return cast("dict[Any, Any]", value) if isinstance(value, dict) else None


def _from_file(path: Optional[Path]) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    doc = _mapping(_document(path))
    catalogs = _mapping(doc.get("catalog", {})) if doc is not None else None
    if catalogs is None:
        raise ConfigError(f"{path}: expected 'catalog:' with one entry per catalog name")
    return {str(k).lower(): dict(v or {}) for k, v in catalogs.items()}


def catalog_properties(name: str = "default") -> dict[str, Any]:
    """The configured properties of catalog ``name`` (file, then environment)."""
    path = config_path()
    props: dict[str, Any] = dict(_from_file(path).get(name.lower(), {}))
    prefix = f"{ENV_PREFIX}{name.upper()}__"
    for k, v in os.environ.items():
        if k.startswith(prefix):
            key = k[len(prefix):].lower().replace("__", ".")
            props[key.replace("_", "-") if key.startswith(STORAGE_PREFIXES) else key] = v
    unknown = sorted(k for k in set(props) - set(KEYS) if not k.startswith(STORAGE_PREFIXES))
    if unknown:
        raise ConfigError(f"catalog {name!r}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(KEYS)} and the "
                          f"storage settings {', '.join(p + '*' for p in STORAGE_PREFIXES)})"
                          + (f" in {path}" if path else ""))
    return props


def storage_properties(props: Mapping[str, Any]) -> dict[str, str]:
    """The object-store settings among a catalog's configured properties."""
    return {str(k): str(v) for k, v in props.items() if str(k).startswith(STORAGE_PREFIXES)}


def serve_properties() -> dict[str, Any]:
    """The ``serve:`` section of the configuration file (see the module doc); paths in it are
    relative to the file's directory."""
    path = config_path()
    if path is None:
        return {}
    doc = _mapping(_document(path))
    raw = doc.get("serve") if doc is not None else None
    if raw is None:
        return {}
    section = _mapping(raw)
    if section is None:
        raise ConfigError(f"{path}: 'serve:' must be a mapping of {', '.join(SERVE_KEYS)}")
    unknown = sorted(str(k) for k in set(section) - set(SERVE_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown serve setting(s) {', '.join(unknown)} (known: {', '.join(SERVE_KEYS)})")
    props: dict[str, Any] = dict(section)
    for key in ("auth", "ssl-certfile", "ssl-keyfile"):
        if props.get(key):
            props[key] = str(path.parent / os.path.expanduser(str(props[key])))
    return props
