# pyarrow is compiled (pyarrow.lib): a checker sees none of its classes, which this stub types Any
# so that pyarrow.compute below can be typed too (a stub for one submodule needs its package).
from typing import Any

def __getattr__(name: str) -> Any: ...
