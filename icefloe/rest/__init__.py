"""The Iceberg REST catalog protocol: ``icefloe serve`` (``server.py``) and its commit semantics
(``updates.py``)."""
