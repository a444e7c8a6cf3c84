# pyarrow.lib is compiled: typed Any like the package stub.
from typing import Any

def __getattr__(name: str) -> Any: ...
