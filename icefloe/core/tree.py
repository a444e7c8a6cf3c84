"""A table's metadata as a tree for people to read: labels made of styled parts, and children.

Formats build these (snapshot -> manifest lists -> manifests -> files); the command line draws
them. A style is a plain word ("bold", "dim", "green", "red"), never markup.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    parts: list[tuple[str, str]]                  # [(text, style)], style "" for plain text
    children: list[Node] = field(default_factory=list["Node"])

    def add(self, *parts: "str | tuple[str, str]") -> "Node":
        """A child labelled ``parts`` (strings, or (text, style) pairs); returns it."""
        child = Node([p if isinstance(p, tuple) else (p, "") for p in parts])
        self.children.append(child)
        return child

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.parts)
