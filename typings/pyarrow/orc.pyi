# pyarrow.orc wraps the compiled pyarrow._orc: typed Any like the package stub.
from typing import Any

def __getattr__(name: str) -> Any: ...
