# pyarrow.types is plain Python over the compiled pyarrow.lib: its predicates take the Any-typed
# DataType of the package stub, so they are typed here from what they return.
from typing import Any

def __getattr__(name: str) -> Any: ...
