"""Small helpers for the prose every stage writes."""

from __future__ import annotations

# Words spelled with a vowel that are said with a consonant first ("a UnicodeDecodeError", "a UserWarning").
_SAID_WITH_A_CONSONANT = ("uni", "use", "usa", "usu", "uti", "eu", "one")


def article(word: str) -> str:
    """The indefinite article English puts before `word` ("an AttributeError", "an IOError", "a ValueError",
    "a UnicodeDecodeError", "an int"), read from its spelling, which is enough for the names logsleuth writes."""
    lowered = word.lower()
    if lowered.startswith(_SAID_WITH_A_CONSONANT):
        return "a"
    return "an" if lowered[:1] in ("a", "e", "i", "o", "u") else "a"
