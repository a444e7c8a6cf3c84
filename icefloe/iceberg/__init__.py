# pyright: strict
