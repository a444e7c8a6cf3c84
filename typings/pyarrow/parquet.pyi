# pyarrow.parquet wraps the compiled pyarrow._parquet: typed Any like the package stub.
from typing import Any

def __getattr__(name: str) -> Any: ...
