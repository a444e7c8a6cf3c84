"""Catalogs by name (``icefloe.load_catalog``); the configuration itself is read by
``icefloe.core.config`` (``.icefloe.yaml`` and ``ICEFLOE_CATALOG__<NAME>__<KEY>``), which the
data source uses too."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from icefloe.catalog import Catalog
from icefloe.core.config import (  # noqa: F401
    ENV_PREFIX, KEYS, SERVE_KEYS, ConfigError, catalog_properties, config_path, serve_properties,
    storage_properties,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def load_catalog(name: str = "default", spark: Optional[SparkSession] = None, **overrides: object) -> Catalog:
    """A catalog configured by name in ``.icefloe.yaml`` or ``ICEFLOE_CATALOG__<NAME>__<KEY>`` variables.

    Args:
        name: The catalog's name under ``catalog:`` in the file.
        spark: Your ``SparkSession`` (see ``Catalog``).
        **overrides: Settings that take precedence over the file's (``warehouse=...``).

    Returns:
        Catalog: the catalog.

    Raises:
        ConfigError: the catalog has no warehouse, or the file has an unknown key.
    """
    props = {**catalog_properties(name), **{k: v for k, v in overrides.items() if v is not None}}
    if not props.get("warehouse") and str(props.get("type", "")).lower() != "rest":
        where = config_path()
        raise ConfigError(f"catalog {name!r} has no warehouse: set it in {where or '.icefloe.yaml'} "
                          f"(catalog: {{{name}: {{warehouse: <dir>}}}}) or in "
                          f"{ENV_PREFIX}{name.upper()}__WAREHOUSE")
    rest_auth = {k: str(props[k]) for k in ("credential", "token") if props.get(k)}
    warehouse = str(props["warehouse"]) if props.get("warehouse") else None
    # catalog properties, passed on as Catalog's **properties
    extra: dict[str, Any] = {**rest_auth, **storage_properties(props)}
    return Catalog(warehouse, format=str(props.get("format", "iceberg")), spark=spark, type=props.get("type"),
                   uri=props.get("uri"), name=str(props.get("name", "default")), **extra)
