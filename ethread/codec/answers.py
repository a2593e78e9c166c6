"""Which geth release's answer shapes the codec writes.

geth's answers change between releases (geth 1.17 added ``blockTimestamp`` to transaction
objects), and clients pinned to one release compare answers exactly, so the release is chosen
per dispatcher (:attr:`ethread.rpc.context.Context.answers`, ``ethread serve --answers``).
A style is declared as the model fields (by class and JSON key) it leaves out of the newest
answers; the default is the newest geth ethread follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import IncludedTransaction


@dataclass(frozen=True, slots=True)
class AnswerStyle:
    """The answers of one geth release."""

    name: str
    """How the setting names it (``"geth-1.17"``)."""
    withheld: frozenset[tuple[type, str]] = frozenset()
    """(model class, JSON key) of each field this release does not write."""
    tag: bytes = b""
    """Added to the names of cached answers this style changes (empty for the default)."""

    def withheld_keys(self, cls: type) -> frozenset[str]:
        """The JSON keys of ``cls`` this release does not write."""
        return frozenset(key for owner, key in self.withheld if owner is cls)


GETH_1_17 = AnswerStyle("geth-1.17")
"""geth 1.17: transaction objects in blocks carry ``blockTimestamp`` (the default)."""
GETH_1_16 = AnswerStyle("geth-1.16", frozenset({(IncludedTransaction, "blockTimestamp")}),
                        tag=b"@geth-1.16")
"""geth 1.16: transaction objects without ``blockTimestamp`` (receipts' logs keep theirs);
what the execution-apis suite of 2025 (``rpc-compat``) recorded."""

ANSWER_STYLES: dict[str, AnswerStyle] = {style.name: style for style in (GETH_1_17, GETH_1_16)}
"""Every style by its name, the default first."""
DEFAULT_ANSWERS = GETH_1_17


def answer_style(name: str) -> AnswerStyle:
    """The style named ``name``; ValueError naming the known ones otherwise."""
    style = ANSWER_STYLES.get(name)
    if style is None:
        raise ValueError(f"unknown answer style {name!r}; known: {', '.join(ANSWER_STYLES)}")
    return style


__all__ = ["ANSWER_STYLES", "DEFAULT_ANSWERS", "GETH_1_16", "GETH_1_17", "AnswerStyle",
           "answer_style"]
