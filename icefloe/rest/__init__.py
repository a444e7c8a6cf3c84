"""The Iceberg REST catalog protocol: ``icefloe serve`` (``server.py``: the app and its routes in
``table_routes.py`` and ``view_routes.py``), its access control (``auth.py``) and commands."""
