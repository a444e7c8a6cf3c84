# pyright: strict
"""stub"""


def clear_cache() -> None:
    pass
