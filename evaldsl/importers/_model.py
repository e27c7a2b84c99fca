"""What an importer produces per case before it becomes text."""

from __future__ import annotations

from dataclasses import dataclass, field


class Problem(ValueError):
    """An input that cannot be imported; ``offset`` points into the source file."""

    def __init__(self, message: str, offset: int, *, code: str = "E502") -> None:
        super().__init__(message)
        self.offset = offset
        self.code = code
        """E501 for text that does not read as its format, E502 for a value the importer cannot use."""


@dataclass
class CaseOut:
    """One case, as `.evl` fragments."""

    prompt: str
    offset: int
    source_format: str
    name: str | None = None
    tags: list[str] = field(default_factory=list)
    setup: str | None = None
    expects: list[str] = field(default_factory=list)
    """Expectation bodies (what follows `expect`)."""
    comments: list[tuple[str, int]] = field(default_factory=list)
    """Forms with no `.evl` equivalent, with their source offsets: kept as comments and reported."""
    unknown: list[str] = field(default_factory=list)
    """Fields of the source item that no `.evl` statement holds: kept as comments and reported."""
