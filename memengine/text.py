"""Language-aware text helpers: language guess, full-text analysis, token estimates.

Full text is indexed from an *analysed* form of each episode: Latin text is
left to FTS5's ``porter unicode61`` tokenizer, and runs of CJK characters
are split here, in Python, into overlapping character bigrams plus single
characters (no segmenter: the README gives the measurements), so that
2-character words (締切, 転職) and 1-character words (猫) are found. The
query goes through the same analysis, so both sides always agree; single
hiragana (particles) are left out of both, and the query leaves out what names
nothing (honorifics after a name, the hiragana pairs of endings and interrogatives:
:func:`query_terms`).
"""

from __future__ import annotations

import functools
import math
import os
import re
import shlex
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Literal

from .lazy_re import lazy_compile

__all__ = [
    "ASKED_WITH",
    "CJK_CHARACTER",
    "MAX_NAME_CHARS",
    "READ_CHARS",
    "analyze",
    "asked_with",
    "bytes_shown",
    "counted",
    "cut_at",
    "dense_query",
    "doctor_command",
    "drawn_as_nothing",
    "estimate_tokens",
    "fold",
    "forget_words",
    "guess_language",
    "json_escaped",
    "json_finite",
    "name_fault",
    "near_cut",
    "nfc",
    "preview",
    "prompt_line",
    "query_terms",
    "quoted_name",
    "salvage_command",
    "scrub",
    "shell_word",
    "shown_name",
    "shown_value",
    "thousands",
    "within",
    "written_number",
]

_CJK = (
    r"\u3040-\u309f"  # hiragana
    r"\u30a0-\u30ff"  # katakana
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kanji
    r"\U00020000-\U0003134f"  # kanji of the extension planes (𠮟, 𩸽)
    r"\uff66-\uff9f"  # half-width katakana
    r"\u3005\u3006\u3007\u30fc"  # 々 〆 〇 ー
)
_CJK_RUN = lazy_compile(f"[{_CJK}]+")
_HAS_CJK = lazy_compile(f"[{_CJK}]")
CJK_CHARACTER = _HAS_CJK
"""A character of a CJK run (kana, kanji, 々, ー): of a term of :func:`query_terms`, one
that is a character or a bigram of such a run (仕, 仕事), not a Latin word."""
_KANA_ONLY = lazy_compile(r"^[\u3040-\u309f]+$")
_INVISIBLE = lazy_compile(
    "[\u200c\u200d\u2060\ufe00-\ufe0f\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
"""Joiners, variation selectors (葛󠄀) and tag characters (of a subdivision flag): dropped
inside a word, so the characters on either side still make one bigram."""
_ZWSP_IN_CJK = lazy_compile(f"(?<=[{_CJK}])\u200b+(?=[{_CJK}])")
"""A zero-width space between two CJK characters (a word copied from the web): dropped;
elsewhere it is a word break (deploy\u200bscript is two words)."""


def _visible(text: str) -> str:
    """``text`` (NFKC, lower case) without the invisible characters inside its words."""
    return _ZWSP_IN_CJK.sub("", _INVISIBLE.sub("", text)).replace("\u200b", " ")


def _folded(text: str) -> str:
    """``text`` as the index and the queries read it before splitting it into terms: NFKC,
    lower case, :func:`_visible` (:func:`analyze`, :func:`query_terms`, :func:`could_hold`)."""
    return _visible(unicodedata.normalize("NFKC", text).lower())


_WORD = lazy_compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_SURROGATE = lazy_compile(r"[\ud800-\udfff]")

Language = Literal["ja", "en"]

CHAT_WORDS = frozenset("yo lol lmao omg haha hahaha btw ugh hmm um umm uh oops fyi".split())
"""Words of chat that name no topic (a query searches without them; before a question they
do not make it a statement)."""

ENGLISH_STOPWORDS = CHAT_WORDS | frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves did does tell remember know think like likes liked
    s t just also really yeah oh hey hi ok okay whats whens wheres whos hows whys u ur""".split()
)
"""English words a query searches without (function words, chat words, "whats" typed
without its apostrophe, and "like", "likes", "liked": a verb of every preference and a
preposition, FTS5 stems all three to the "like" of "I feel like…")."""

_DENSE_STOPWORDS = ENGLISH_STOPWORDS - {"out", "up", "down", "off", "over", "on", "in", "through"}
"""Stopwords left out of the vector query: verb particles stay, they change the meaning."""


APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "\uff07": "'", "\u2018": "'"})
"""A ``str.translate`` table of the apostrophes a phone types ("can’t", "what’s") to "'"."""


_MARKS = lazy_compile("[\u0300-\u036f]")
"""Combining diacritical marks (a letter with no precomposed form: n̈): the full-text index
drops them inside the word (``remove_diacritics 2``), where ``\\w`` would split it."""


def _plain_letters() -> dict[int, str]:
    """A ``str.translate`` table of each Latin letter with diacritics that decomposes into an
    ASCII letter and combining marks (é, ë, ł does not) to that letter: what FTS5's
    ``unicode61 remove_diacritics 2`` folds."""
    table: dict[int, str] = {}
    for code in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]:
        parts = unicodedata.normalize("NFD", chr(code))
        if parts[0].isascii() and parts[0].isalpha() and all(_MARKS.match(m) for m in parts[1:]):
            table[code] = parts[0]
    return table


_FOLD_TABLE = {**_plain_letters(), **APOSTROPHES}


def fold(text: str) -> str:
    """``text`` as the full-text search compares words: NFKC, lower case, joiners and
    variation selectors dropped (:func:`_folded`), a phone's apostrophe as "'", and a Latin
    letter's diacritics dropped as ``remove_diacritics 2`` drops them (café is cafe)."""
    return _MARKS.sub("", _folded(text).translate(_FOLD_TABLE))


_SENTENCE_END = lazy_compile(
    r"(?:(?<=[!?。！？\n])|(?<=\.)(?![0-9０-９])|(?<=(?<![0-9０-９])\.))\s*"
)
"""Where a sentence ends: after ! ? 。 ！ ？ or a line break, and after a "." that is no
decimal point, one between two digits (7.5万円, "$2.50")."""


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after . ! ? 。 ！ ？ and line breaks, stripped, none
    empty; a decimal point is no end (家賃を7.5万円に上げた, "It's $2.50 now")."""
    return [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (valid in a Python string or a JSON escape, but not
    in UTF-8) replaced by "?"."""
    if _SURROGATE.search(text):
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it cannot be stored or encoded as is)."""
    return _SURROGATE.search(text) is not None


_COMPAT_IDEOGRAPHS = lazy_compile("([\uf900-\ufaff\U0002f800-\U0002fa1f])")
"""CJK compatibility ideographs (神 U+FA19, 塚 U+FA10): NFC would replace each with its
unified twin (神), but names are written with them on purpose."""


def nfc(text: str) -> str:
    """``text`` in Unicode NFC, except that CJK compatibility ideographs stay as written."""
    if not _COMPAT_IDEOGRAPHS.search(text):
        return unicodedata.normalize("NFC", text)
    parts = _COMPAT_IDEOGRAPHS.split(text)  # text, ideograph, text, …
    return "".join(p if i % 2 else unicodedata.normalize("NFC", p) for i, p in enumerate(parts))


def scrub(text: str) -> str:
    """Normalise ``text`` for storage: NFC (:func:`nfc`: CJK compatibility ideographs kept),
    lone surrogates replaced, each NUL a space (it separated what is on either side of it;
    dropped, two words would become one)."""
    return nfc(replace_surrogates(text)).replace("\x00", " ")


_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols that are drawn as nothing: the Hangul fillers, the blank braille cell."""


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only white space, invisible format characters
    (zero-width spaces and joiners, a byte-order mark) and blank fillers (ㅤ)."""
    return all(ch.isspace() or ch in _FILLERS or unicodedata.category(ch) == "Cf" for ch in text)


MAX_NAME_CHARS = 256
"""The longest name of an agent or a perspective, in characters once in Unicode NFC (a
tag's limit is 200)."""


def name_fault(name: str, what: str = "agent name") -> str | None:
    """Why ``name``, one that shows something, is no ``what``: more than
    :data:`MAX_NAME_CHARS` characters in NFC, or (an agent's; a perspective loses its outer
    spaces) white space or a character that shows nothing at an end (a zero-width space,
    a byte-order mark: Python's ``strip`` keeps them), which would make ``'alice '`` or
    ``$'alice\\u200b'`` an agent beside ``'alice'``; None when it is one."""
    size = len(unicodedata.normalize("NFC", name))
    if size > MAX_NAME_CHARS:
        article = "an" if what[:1] in "aeiou" else "a"
        return (
            f"{article} {what} is at most {MAX_NAME_CHARS} characters, not {size:,} "
            f"({name[:40]!r}…)"
        )
    if what != "agent name":
        return None
    if name != name.strip():
        return (
            f"agent name {quoted_name(name)} begins or ends with white space: names are "
            f"compared as typed, so it would be an agent beside {quoted_name(_trimmed(name))}"
        )
    unseen = _unseen_end(name)
    if unseen is not None:
        code = f"U+{ord(unseen):04X}"
        called = unicodedata.name(unseen, "")
        return (
            f"agent name {quoted_name(name)} begins or ends with {code}"
            f"{f' ({called})' if called else ''}, which shows nothing: names are compared "
            f"as typed, so it would be an agent beside {quoted_name(_trimmed(name))}"
        )
    return None


_SHOWN_FORMAT = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
"""Format characters (Unicode category Cf) drawn as a sign before the digits they mark (the
Arabic number sign, the end of an ayah): seen, so a name may begin with one."""
_UNSEEN = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")
"""Default-ignorable characters of other categories than Cf that show nothing on their own
(the combining grapheme joiner, Khmer's inherent vowels, Mongolian variation selectors, the
standalone Hangul fillers)."""
_FLAG_AT_END = lazy_compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f\\Z")
"""A subdivision flag (🏴 of Scotland): its tag characters, format characters, are its look."""


def _unseen(char: str) -> bool:
    """Whether ``char`` shows nothing where it stands at an end of a name: a format
    character (a zero-width space, a joiner, a byte-order mark, a bidirectional mark…) or
    another default-ignorable one."""
    if char in _SHOWN_FORMAT:
        return False
    return char in _UNSEEN or unicodedata.category(char) == "Cf"


def _unseen_end(name: str) -> str | None:
    """The character at an end of ``name`` that shows nothing (a variation selector, too,
    at the start, where it selects no character's look); None when both ends show."""
    if not name:
        return None
    if _unseen(name[0]) or _INVISIBLE.match(name[0]):
        return name[0]
    if _unseen(name[-1]) and not _FLAG_AT_END.search(name):
        return name[-1]
    return None


def _trimmed(name: str) -> str:
    """``name`` without the white space and the characters that show nothing at its ends:
    the name it would be taken for."""
    while name and (name[0].isspace() or _unseen_end(name) == name[0]):
        name = name[1:]
    while name and (name[-1].isspace() or _unseen_end(name) == name[-1]):
        name = name[:-1]
    return name


def shown_name(name: str) -> str:
    """A name (an agent's, a perspective) as a terminal should show it, one name told from
    another, in a form a POSIX shell reads back. A name with a control character or a
    bidirectional mark, or one drawn as nothing (a lone variation selector), is written as
    ``$'…'`` (``$'al\\nice'``, ``$'bob\\x1b[0m'``); one with spaces at an end, a blank
    one, or one that begins with a quote is quoted (:func:`quoted_name`: ``'alice '``); any
    other is shown as it is (``CORP\\alice``)."""
    if any(_hidden(c) for c in name) or drawn_as_nothing(name):
        return _dollar_quoted(name)
    if name != name.strip() or is_blank(name) or name[:1] in "'\"":
        return quoted_name(name)
    return name


_ESCAPED_BYTES = lazy_compile(r"[\udc80-\udcff]+")


def bytes_shown(text: str) -> str:
    """``text`` with the bytes an ``LC_ALL=C`` process read as lone surrogates (a path's
    ``\\udce6\\udc97\\udca5``) read as the UTF-8 they were typed in (日), and a byte that
    is not UTF-8 as ``\\xe9``: a path is shown as the user wrote it."""
    return _ESCAPED_BYTES.sub(
        lambda run: (
            run.group().encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        ),
        text,
    )


def quoted_name(name: str) -> str:
    """``name`` quoted as a POSIX shell reads it back (for a message that names it):
    ``'alice'``, or ``$'…'`` when it holds a single quote or needs escapes
    (``$'O\\'Brien'``)."""
    if "'" in name or any(_hidden(c) for c in name) or drawn_as_nothing(name):
        return _dollar_quoted(name)
    return f"'{name}'"


def _hidden(char: str) -> bool:
    """Whether ``char`` is not shown as itself: a control character, a bidirectional mark."""
    return not (char.isprintable() or char == " ")


def drawn_as_nothing(name: str) -> bool:
    """Whether ``name`` is made of variation selectors and joiners alone: not blank (an
    earlier memengine stored such names and texts, and an export of them imports), but no
    new name or text."""
    return bool(name) and all(_INVISIBLE.match(c) or c == "\u034f" for c in name)


def _dollar_quoted(name: str) -> str:
    """``name`` as a shell's ``$'…'`` writes it: every character not shown as itself (all of
    them in a name drawn as nothing), a backslash and a quote escaped."""
    every = drawn_as_nothing(name)
    return (
        "$'" + "".join(_escaped(c) if every or _hidden(c) or c in "\\'" else c for c in name) + "'"
    )


def _escaped(char: str) -> str:
    """``char`` escaped as a shell's ``$'…'`` reads it: ``\\n``, ``\\x1b``, ``\\\\``,
    ``\\'``, and past ASCII ``\\u00a0`` (``\\xa0`` would be one byte, not the character);
    a byte a non-UTF-8 locale read as a lone surrogate (a path's ``\\udce6``) as that byte,
    ``\\xe6``, so the path pasted back names the same file."""
    code = ord(char)
    if char in "\\'":
        return "\\" + char
    if 0xDC80 <= code <= 0xDCFF:  # (os.fsdecode's reading of a byte)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:
        return char.encode("unicode_escape").decode("ascii")
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_CONTROL = lazy_compile(
    r"(\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f)"  # 🏴 of Scotland
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # a terminal escape sequence, whole ("\x1b[31m")
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # an operating-system command ("\x1b]0;title\x07")
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
    r"|[\U000e0000-\U000e007f]"  # tag characters: invisible ASCII a model still reads
)


def strip_controls(text: str) -> str:
    """``text`` without control characters other than newline and tab (terminal escape
    sequences, NULs), without the marks that reorder text on screen (U+202E and the
    other bidirectional embeddings, overrides and isolates, and the left-to-right,
    right-to-left and Arabic letter marks) and without tag characters (U+E0000…, which
    write invisible text a model reads; a flag's few, 🏴 of Scotland, are kept): for text
    that is shown or sent on as it is."""
    return _CONTROL.sub(_kept_flag, text)


def readable(text: str) -> str:
    """``text`` as it is shown or quoted: :func:`strip_controls`, its line breaks of every
    kind (\\r, \\v, \\f, NEL, U+2028…) kept as ``\\n`` (deleted, they would glue the
    words on either side)."""
    return strip_controls("\n".join(text.splitlines()))


def _kept_flag(match: re.Match[str]) -> str:
    """What :data:`_CONTROL` keeps of ``match``: a flag's tag sequence, else nothing."""
    return match.group(1) or ""


_UNSAFE_IN_JSON = lazy_compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def json_escaped(text: str) -> str:
    """JSON text with the characters a terminal acts on, or that reorder a line on screen,
    written as ``\\uXXXX`` escapes (DEL and the C1 controls, U+202E and the other
    bidirectional marks, the line and paragraph separators): the same JSON, read back the
    same, but nothing in it moves a cursor. ``json.dumps`` escapes only the C0 controls."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_finite(value: Any) -> Any:
    """``value`` (nested dicts, lists, tuples) with every float that is not finite as None:
    ``json.dumps`` would write ``Infinity`` or ``NaN``, which strict JSON readers refuse."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_finite(v) for v in value]
    return value


def counted(n: int, noun: str) -> str:
    """``n`` of ``noun``, in the singular for one: ``1 episode``, ``2,000 episodes``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


_OPEN = r"[\[［]"
"""An opening bracket as an LLM may write an id's: ASCII or full-width."""
_ID_WORD = r"id(?![^\W\d])"
"""The word an id label begins with (any case): "id" before a space, a digit or a bracket
("[id 5]", "[id5]", "id: 5"), not the start of a word ("[idea]", "[id_x]")."""
_PROMPT_MARKERS = lazy_compile(rf"{_OPEN}(\s*{_ID_WORD})|<(\s*/?\s*think\b)", re.IGNORECASE)
_BRACES = str.maketrans("{}", "()")


def prompt_quote(text: str) -> str:
    """``text`` (stored or typed) as a prompt quotes it: :func:`prompt_line`, an ``[id``
    written ``(id`` (no text poses as a candidate's head: "[id 5]", "[ID12]", "[id5]", each
    form :func:`written_number` reads as an id label), a ``<think>`` tag as
    ``‹think>``, a chat template's token as :func:`untemplated` writes it, and braces as
    parentheses, so that a model that quotes it while it
    reasons writes no JSON object that could be taken for its answer."""
    marked = _PROMPT_MARKERS.sub(_unmarked, prompt_line(text))
    return untemplated(marked).translate(_BRACES)


def _unmarked(match: re.Match[str]) -> str:
    """An ``[id`` of :data:`_PROMPT_MARKERS` as ``(id``, a ``<think`` as ``‹think``."""
    return f"({match.group(1)}" if match.group(1) is not None else f"‹{match.group(2)}"


_TEMPLATE_TOKENS = lazy_compile(
    r"<[|｜][^<>|｜\s]{1,40}[|｜]>"  # <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜>
    r"|<</?SYS>>|\[/?INST\]|</?s>"  # Llama 2's, a sentence's start and end
    r"|\[/?(?:SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]"  # Mistral's
    r"|<(?:start_of_turn|end_of_turn|bos|eos)>"  # Gemma's
)
_TEMPLATE_BRACKETS = str.maketrans("<>[]", "‹›‹›")


def untemplated(text: str) -> str:
    """``text`` (stored, and so untrusted) with the tokens chat templates mark turns with
    written with ‹ › for their brackets: ``<|im_start|>`` as ``‹|im_start|›``, ``[INST]`` as
    ``‹INST›`` (Mistral's ``[SYSTEM_PROMPT]``, ``[TOOL_CALLS]`` too), ``</s>`` as ``‹/s›``. A
    serving stack that renders a template to a string and tokenizes it again would read the token itself as a turn of its own; "<3" and
    "a < b" are left as they are."""
    return _TEMPLATE_TOKENS.sub(lambda m: m.group().translate(_TEMPLATE_BRACKETS), text)


REASON_CHARS = 200
"""The most of a reason (the LLM's, for a memory it chose) that is kept."""


def reason_line(reason: str) -> str:
    """``reason`` as a pack writes it: on one line, without control characters (what
    :func:`strip_controls` removes), at most :data:`REASON_CHARS` characters; one given
    to a :class:`~memengine.models.Retrieved` by hand is written the same way."""
    said = " ".join(strip_controls(reason).split())
    return said[: cut_at(said, REASON_CHARS)]


_WRITTEN_NUMBER = lazy_compile(
    rf"\s*(?:(?P<open>{_OPEN})\s*)?(?P<id>{_ID_WORD}\s*)?(?P<n>[-－]?[0-9０-９]{{1,18}})\s*"
    r"(?(open)[\]］])\s*",
    re.IGNORECASE,
)
"""A number as :func:`written_number` reads it; its id label, "[id 12]", "[id12]", is the
one :func:`prompt_quote` writes ``(id`` (:data:`_ID_WORD`), so no text can pose as one."""
_WIDE_DIGITS = str.maketrans("０１２３４５６７８９－", "0123456789-")


def written_number(text: str, *, id_label: bool = False) -> int | None:
    """The number an LLM wrote as text the way its prompt shows one, else None: ``"2"``,
    ``"[2]"``, in ASCII or full-width digits and brackets (``"［２］"``), both brackets or
    none (not ``"[2"``), no more than 18 digits (Python refuses to read an integer of more
    than 4,300); with ``id_label`` also ``"id 12"`` and ``"[id 12]"``, as the rerank's
    prompt writes its ids. Other digits are no number: ``"²"`` or ``"٢"`` is not 2."""
    found = _WRITTEN_NUMBER.fullmatch(text)
    if found is None or (found.group("id") and not id_label):
        return None
    return int(found.group("n").translate(_WIDE_DIGITS))


def prompt_line(text: str, *, kept: str = "") -> str:
    """``text`` as a prompt quotes it: on one line, in NFKC (full-width ［２］ is [2]) and
    without invisible format characters, so that a marker the prompt uses can be found
    in it and written otherwise. The characters of ``kept`` are left as they are, for a
    check that tells them from their NFKC (a label before "：" needs no space after it:
    :func:`.quote.unposed_lines`)."""
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    parts = re.split(f"([{re.escape(kept)}])", visible) if kept else [visible]
    shown = "".join(p if i % 2 else unicodedata.normalize("NFKC", p) for i, p in enumerate(parts))
    return " ".join(strip_controls(shown).split())  # (a NUL, an escape: nothing to read)


_SHELL_SPECIAL = lazy_compile(r"""[\s'"\\$`!*?\[\](){}<>|&;#~^]|[\x00-\x1f\x7f-\x9f]""")


def shell_word(word: str, *, posix: bool = os.name != "nt") -> str:
    """``word`` as a POSIX shell reads it back: as it is when it holds nothing a shell
    treats specially (品質 stays 品質), as ``$'…'`` when it holds characters a terminal
    does not show (:func:`shown_name`), else single-quoted (``shlex.quote``). On Windows
    (``posix=False``) in double quotes, as cmd.exe reads a path with a space
    (``"C:\\My files\\m.db"``; a ``"`` in it doubled), and PowerShell too unless it holds
    a ``$`` or a backtick."""
    if not posix:
        return word if word and not _SHELL_SPECIAL.search(word) else _double_quoted(word)
    if any(_hidden(c) for c in word) or drawn_as_nothing(word):
        return _dollar_quoted(word)  # (single quotes would keep them, but none is seen)
    return word if word and not _SHELL_SPECIAL.search(word) else shlex.quote(word)


def salvage_command(db: str | os.PathLike[str] | None) -> str:
    """The command that saves what still reads of the damaged memory file ``db``, with its
    ``--db`` (``memengine export --all-agents --salvage --db 'a dir/m.db' -o saved.jsonl``):
    pasted as printed it salvages that file, not the configured or default one. Without a
    path (not known where the damage was found) it names none."""
    named = "" if db is None else f" --db {shell_word(os.fspath(db))}"
    return f"memengine export --all-agents --salvage{named} -o saved.jsonl"


def doctor_command(db: str | os.PathLike[str] | None) -> str:
    """The command that checks the memory file ``db`` and names its damaged rows, with its
    ``--db`` (as :func:`salvage_command`, so that it checks that file)."""
    named = "" if db is None else f" --db {shell_word(os.fspath(db))}"
    return f"memengine doctor{named}"


def _double_quoted(word: str) -> str:
    """``word`` in double quotes for cmd.exe or PowerShell (a backslash in a path is
    itself there)."""
    return '"' + word.replace('"', '""') + '"'


_SPACED_LETTERS = (
    "0-9A-Za-z\u00c0-\u024f\u1e00-\u1eff"  # digits, Latin (Vietnamese's too)
    "\u0370-\u03ff\u1f00-\u1fff\u0400-\u052f\u0531-\u0559\u0560-\u0588"  # Greek, Cyrillic, Armenian
    "\u0900-\u0963\u0966-\u0dff"  # Devanagari … Sinhala (not the danda, a full stop)
    "\u10a0-\u10fa\u1200-\u135f\u1369-\u137f"  # Georgian, Ethiopic (not its punctuation)
)
_SPACED = lazy_compile(f"[{_SPACED_LETTERS}]")
"""Letters of scripts that put spaces between words, and digits. Not Arabic or Hebrew:
their words take an article or a preposition in front (القهوة, הקפה) and pronouns
behind, so a word is found anywhere in them, as in Japanese."""

_JOINED_LETTERS = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""Letters of scripts that write words without spaces between them (Thai, kana, kanji,
Hangul): one next to a Latin word is the next word (Emiの犬), not more of it."""

_NOT_AN_EDGE = f"(?:[{_SPACED_LETTERS}]|(?![{_JOINED_LETTERS}])\\w)"
"""What continues a word: a letter or mark of a spaced script (a Devanagari vowel sign is
no word character to ``re``), or a word character of no script that joins words."""


def as_a_word(word: str) -> str:
    """A regular expression that finds ``word`` as a word: an edge of it that is a letter
    of a spaced script must be a word's edge ("cat" is not in "location"); in scripts
    without spaces, or that join words (Japanese: さくら in さくらの犬; Thai, Korean),
    anywhere."""
    before = f"(?<!{_NOT_AN_EDGE})" if _SPACED.match(word[:1]) else ""
    after = f"(?!{_NOT_AN_EDGE})" if _SPACED.match(word[-1:]) else ""
    return before + re.escape(word) + after


READ_CHARS = 20_000
"""The most of a message that the checks of what it is (its language; what it asks,
:mod:`.retrieve.signals`) read: its beginning and its end (:func:`within`). The searches read
``max_query_chars`` of it (2,000 by default), and a paste of megabytes costs a turn tens
of milliseconds, not seconds."""

_PARTICLE_ON_A_WORD = lazy_compile(r"[A-Za-z0-9][\u3041-\u3096]")
"""A hiragana written onto a Latin word or a number, as Japanese grammar attaches its
particles and endings (「Pythonの」, 「deadlineいつ」, 「3日に」); an English sentence
that quotes a Japanese word spaces it (「my dog さくら is」)."""

_SPACED_PARTICLE = lazy_compile(
    r"[A-Za-z0-9.)\]'\"] [がでをにはへとも](?= |$|[\u30a0-\u30ff\u3400-\u9fff])"
)
"""A particle alone after a Latin word, as a Japanese writer spaces pasted English (「pip
install で ModuleNotFoundError が出た」): Japanese only beside a kanji or a katakana
(:data:`_KANJI_OR_KATAKANA`; "the difference between は and が?" is English)."""

_KANJI_OR_KATAKANA = lazy_compile(r"[\u30a0-\u30ff\u3400-\u9fff]")


def guess_language(text: str) -> Language:
    """``"ja"`` when the text holds a meaningful share of Japanese characters (a fifth of
    its letters), Japanese grammar on another word (「Pythonのdeadlineいつ？」), or a particle
    spaced after one beside a kanji or a katakana (:data:`_SPACED_PARTICLE`), else
    ``"en"``."""
    if not text:
        return "en"
    text = within(text, READ_CHARS)  # (a paste of megabytes: its beginning and end tell)
    cjk = len(_HAS_CJK.findall(text))
    letters = sum(1 for ch in text if ch.isalpha())
    if cjk and cjk >= 0.2 * max(letters, 1):
        return "ja"
    if _PARTICLE_ON_A_WORD.search(text):
        return "ja"
    spaced = _SPACED_PARTICLE.search(text) and _KANJI_OR_KATAKANA.search(text)
    return "ja" if spaced else "en"


def _cjk_grams(run: str) -> list[str]:
    """Character unigrams (except single hiragana) and overlapping bigrams of one CJK run."""
    out = [ch for ch in run if not _KANA_ONLY.match(ch)]
    out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def analyze(text: str) -> str:
    """The analysed form of ``text`` that is stored in the full-text index.

    Latin words are kept as they are (FTS5 stems them); each CJK run is
    replaced by its bigrams and its single characters except hiragana, so
    any CJK substring of length 1 or 2 that a query can hold is a token.
    A single hiragana is a particle or an inflection: :func:`query_terms`
    never searches for one, so indexing it would only cost space and time
    (a third of a Japanese turn's tokens).
    """
    text = _folded(text)
    parts: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(text):
        parts.append(text[pos : m.start()])
        parts.append(" " + " ".join(_cjk_grams(m.group())) + " ")
        pos = m.end()
    parts.append(text[pos:])
    return " ".join("".join(parts).split())


def query_terms(text: str, *, drop: Iterable[str] = ()) -> list[str]:
    """Distinct search terms of a query, in order, stopwords removed.

    A Latin word is one term (a compound joined around a stopword, "brother-in-law", is one:
    :func:`_latin_terms`); a CJK run gives the same single characters and bigrams as
    :func:`analyze`, except what names nothing in Japanese as the English stopwords name
    nothing: single hiragana (particles), an honorific that ends a name and the particle
    after it (the さん and んの of 「田中さんの」, not the さん of さんま:
    :func:`_without_honorifics`), the hiragana pairs
    of endings and of interrogatives (:data:`_GRAMMAR_PAIRS`: the って, んだ and だっ of
    「…ってどこに住んでるんだっけ」), so a query shares its terms with the documents that
    hold its words, not with every one that says さん or んだって. Zero-width characters
    and variation selectors inside a word are dropped on both sides. A term of marks alone
    (:data:`_MARKS_ALONE`: the ー of ラーメン, the ・ of a kaomoji's eyes) is no word and is
    not searched: it would find every memory with a katakana word or a kaomoji in it.
    """
    text = _folded(text)
    dropped = set(drop) | _GRAMMAR_PAIRS
    terms: list[str] = []
    seen: set[str] = set()

    def push(term: str) -> None:
        if term and term not in seen and term not in dropped and not _MARKS_ALONE.issuperset(term):
            seen.add(term)
            terms.append(term)

    pos = 0
    for m in _CJK_RUN.finditer(text):
        _latin_terms(text[pos : m.start()], push)
        run = m.group()
        for ch in run:
            if not _KANA_ONLY.match(ch):
                push(ch)
        for piece in _without_honorifics(run, text[m.start() - 1 : m.start()]):
            for i in range(len(piece) - 1):
                push(piece[i : i + 2])
        pos = m.end()
    _latin_terms(text[pos:], push)
    return terms


_MARKS_ALONE = frozenset("・ー々ヽヾゝゞ")
"""Marks of a CJK run that are no word alone or together: the middle dot (ジョン・スミス, the
eyes of (´・ω・｀)), the long vowel (ラーメン, えーー), the iteration marks (人々). A pair of
one with a letter (ラー, ン・) stays a term, as the index holds it."""

_GRAMMAR_PAIRS = frozenset(
    """だっ たっ っけ んだ んで って った てる てた でる でた して した です でし ます まし
    ませ よう そう かな よね だよ けど いつ どこ だれ なに なん どう""".split()
)
"""Hiragana pairs that name nothing (a query searches without them, as without an English
stopword): pieces of the endings every sentence has, the copula, the past, the て form, the
progressive, the polite forms, the explanatory んだ, the quotative って, a closing かな,
よね, っけ, よう or そう (「…なんだっけ」, 「…してたよね」, 「寝よう」), and interrogatives
in kana (いつ, どこ, なに, なん, as "when", "where" and "what" are English stopwords). A
hiragana word keeps its other pairs (ごはん, かわいい have none of these)."""

_HONORIFIC_AFTER_NAME = lazy_compile("さん|くん|ちゃん|さま")
"""Honorifics a name takes (田中さん, 翔太くん, 結衣ちゃん, さくらちゃん): left out of the
query after a name when they end the word (:func:`_without_honorifics`)."""

_ENDS_THE_WORD = lazy_compile("の|は|が|と|って|に|も|や|へ|を|から|まで|だ|で|ね|よ|たち|ち")
"""What follows an honorific that ends a word: a particle, the copula, a closing ね or よ,
たち (田中さんたち) or the ち of a home (伊藤さんち); not more kana of a word (the ま of
さんま, the ぽ of さんぽ, the こ of ちゃんこ, the せ of くんせい, the ざ of さまざま)."""

_PARTICLE_CHARS = frozenset("のはがとにもをへやで")
_HIRAGANA_CHARS = "".join(map(chr, range(0x3041, 0x3097)))
"""Particles a hiragana name may follow inside a run (「昨日はさくらちゃんと」)."""


def _without_honorifics(run: str, before: str) -> list[str]:
    """The pieces of a CJK ``run`` (``before``: the character before it) between the
    honorifics that end a name (:func:`_after_a_name`, and a particle, an ending or no kana
    after them: :data:`_ENDS_THE_WORD`), which are left out: a name's honorific is no word
    of it, and 「小林くんの」 shares くん and んの with every 「翔太くんの」. A hiragana word
    that holds one stays whole (おばあちゃん, さんま, 「朝さんぽ」)."""
    pieces: list[str] = []
    start = 0
    for m in _HONORIFIC_AFTER_NAME.finditer(run):
        rest = run[m.end() :]
        ends = not _KANA_ONLY.match(rest[:1]) or _ENDS_THE_WORD.match(rest) is not None
        if ends and _after_a_name(run[start : m.start()], before if start == 0 else ""):
            pieces.append(run[start : m.start()])
            start = m.end()
    pieces.append(run[start:])
    return pieces


def _after_a_name(head: str, before: str) -> bool:
    """Whether the text ``head`` (``before``: the character before it) ends with a name an
    honorific may follow: a kanji, a katakana or a Latin letter (「小林」, 「ケン」, 「Emma」),
    or two to four hiragana at its start or after a particle (「さくら」, 「昨日はゆい」), not a
    family word that opens with お or ご (おばあ, おじ of おばあちゃん, おじさん; お母, お客 of
    お母さん, お客さま: the honorific is part of the word)."""
    prev = head[-1:] or before
    if prev.isalnum() and not _KANA_ONLY.match(prev):
        return head[-2:-1] not in ("お", "ご")
    tail = head[len(head.rstrip(_HIRAGANA_CHARS)) :]
    for size in range(2, min(4, len(tail)) + 1):
        word = tail[-size:]
        if word[0] not in "おご" and (size == len(tail) or tail[-size - 1] in _PARTICLE_CHARS):
            return True
    return False


def could_hold(text: str, terms: Iterable[str]) -> bool:
    """Whether :func:`query_terms` of ``text`` could hold one of ``terms``: False is certain
    (each of its terms is a piece of the text as it normalises it), and far cheaper than
    reading the terms."""
    norm = _MARKS.sub("", _folded(text))
    numbers = _joined_numbers(_CJK_RUN.sub(" ", norm))  # (12,800円 holds 12800)
    norm = norm.replace("’", "'") + " " + " ".join(numbers)
    return any(t in norm for t in terms)


def dense_query(text: str) -> str:
    """The query text for the vector search: its words, lowercased, English stopwords removed.

    Question words, auxiliaries and capitalised names otherwise dominate a
    sentence embedding of a short question. Verb particles ("burned out",
    "gave up") are kept. Japanese text is returned as it is (the stopwords
    are English). Falls back to the stripped text when no word is left.
    """
    if guess_language(text) == "ja":
        return text
    norm = unicodedata.normalize("NFKC", text).lower()
    words = [w for w in _WORD.findall(norm) if w.replace("’", "'") not in _DENSE_STOPWORDS]
    return " ".join(words) or text.strip()


_GROUPED_NUMBER = lazy_compile(r"(?<![\w.,])[0-9]{1,3}(?:,[0-9]{3})+(?!\w|,[0-9])")
"""A number written with thousands separators (41,500; １，０００ in NFKC), not a list
("1,2,3"), a decimal ("3.5") nor one run into letters (41,500k, indexed as 41 and 500k):
the index holds its groups as words (41 500)."""


def thousands(number: str) -> list[str]:
    """The thousands groups of a number written without separators, as the full-text
    index holds "41,500": ["41", "500"]."""
    head = len(number) % 3 or 3
    return [number[:head], *(number[i : i + 3] for i in range(head, len(number), 3))]


def _joined_numbers(text: str) -> list[str]:
    """The numbers of ``text`` written with thousands separators, without them ("41500")."""
    return [m.group().replace(",", "") for m in _GROUPED_NUMBER.finditer(text)]


_NUMBER_OR_WORD = lazy_compile(f"{_GROUPED_NUMBER.pattern}|{_WORD.pattern}")


def _latin_terms(chunk: str, push: Callable[[str], None]) -> None:
    """Push the words of ``chunk`` (text outside CJK runs) that are not stopwords, a
    possessive's 's left off; a number written with thousands separators is one term,
    without them ("41,500" is 41500, which the full-text search finds written either way:
    :func:`.store.fulltext.term_expression`); a compound is one term (:func:`_compound`:
    "mother-in-law", searched as the phrase of its words, shares no "law" with
    "brother-in-law")."""
    for word in _COMPOUND_NUMBER_OR_WORD.findall(_MARKS.sub("", chunk)):
        word = word.replace("’", "'")
        if "-" in word:
            if whole := _compound(word):
                push(whole)
                continue
            words = _NUMBER_OR_WORD.findall(word)
        else:
            words = [word]
        for one in words:
            one = one.replace(",", "")  # (only a grouped number holds ",")
            if one in ENGLISH_STOPWORDS:
                continue
            push(one[:-2] if one.endswith("'s") else one)


_COMPOUND = lazy_compile(rf"{_WORD.pattern}(?:-{_WORD.pattern})+(?!,[0-9])")
"""Words joined by hyphens ("brother-in-law"), not ending in a grouped number's first
digits ("500-1,000" is 500 and 1000)."""
_COMPOUND_NUMBER_OR_WORD = lazy_compile(f"{_COMPOUND.pattern}|{_NUMBER_OR_WORD.pattern}")


def _compound(word: str) -> str:
    """``word`` (words joined by hyphens) as one term when a stopword joins its first and
    last word ("brother-in-law", "up-to-date", "face-to-face": its parts name nothing alone,
    the "law" of "mother-in-law" is no law), its possessive's 's left off; else "" (its
    words are terms of their own: "e-mail", "check-in", "2024-05-01")."""
    parts = word.split("-")
    if not any(p in ENGLISH_STOPWORDS for p in parts[1:-1]):
        return ""
    return _POSSESSIVE.sub("", word)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free token estimate, an upper bound a budget can keep: every code point
    past ASCII (kana, kanji, Japanese punctuation, full-width letters, emoji) ~1 token
    each, an emoji's joiners, variation selectors, skin tones and tag characters too (a
    byte-level tokenizer spends a token or more on each: 👨‍👩‍👧‍👦 is 7, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 of Scotland
    7); ASCII ~4 characters a token."""
    past_ascii = sum(1 for ch in text if ord(ch) > 0x7F)
    ascii_chars = len(text) - past_ascii
    return past_ascii + (ascii_chars + 3) // 4


MAX_PHRASE_CHARS = 16
"""The longest shared CJK piece a "why" line names (a word: twice as long)."""

MAX_PHRASE_TEXT = 2000
"""How much of the query and of an episode :func:`shared_phrases` reads."""


_FLAGS_COUNTED = 10_000
"""How far back a bounded cut (:func:`near_cut`) counts a run of flag letters to keep
their pairs whole."""


def cut_at(text: str, end: int, *, most: int | None = None) -> int:
    """``end`` moved back so that ``text[:end]`` does not end inside a character a reader
    sees as one: before a joiner, a variation selector, a combining mark (a spacing one
    too: the vowel sign of का; a half-width voicing mark, ｶﾞ), or a skin tone (👍🏽),
    and not between the two halves of a flag; moved back at most ``most`` characters
    (then past them: a run of marks longer than that is not walked to its start)."""
    end = max(0, min(end, len(text)))
    floor = 0 if most is None else max(0, end - most)
    while floor < end < len(text) and (
        _INVISIBLE.match(text[end])
        or unicodedata.category(text[end]) in ("Mn", "Me", "Mc")
        or text[end] in "\uff9e\uff9f"  # ﾞ ﾟ are letters (Lm), but mark the kana before
        or "\U0001f3fb" <= text[end] <= "\U0001f3ff"
        or text[end - 1] == "\u200d"
    ):
        end -= 1
    flags, counted_to = 0, end if most is None else min(end, _FLAGS_COUNTED)
    while flags < counted_to and 0x1F1E6 <= ord(text[end - 1 - flags]) <= 0x1F1FF:
        flags += 1
    if most is not None and flags == _FLAGS_COUNTED:  # a run of thousands of flags: its
        return end  # pairs are not counted to its start, and it is cut where asked
    return (
        end - 1 if flags % 2 and end < len(text) and 0x1F1E6 <= ord(text[end]) <= 0x1F1FF else end
    )


def within(text: str, max_chars: int) -> str:
    """What a turn reads of ``text`` in ``max_chars``: all of it when it fits; past that,
    its beginning and its end (about half each, joined by a new line), so a question typed
    after a long paste is read beside the paste's first lines."""
    if len(text) <= max_chars:
        return text
    start = near_cut(text, len(text) - (max_chars - 1) // 2)
    start += len(text[start:]) - len(text[start:].lstrip())
    end = near_cut(text, max(0, max_chars - 1 - (len(text) - start)))
    return f"{text[:end]}\n{text[start:]}"


def one_line_within(text: str, max_chars: int) -> str:
    """``text`` on one line (its white space runs made single spaces) within ``max_chars``:
    all of it when it fits, else its beginning and its end joined by " … " (as
    :func:`within` reads it: a question typed after a long paste stays in an LLM's prompt)."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    head, _, tail = within(flat, max(1, max_chars - 2)).partition("\n")
    return f"{head.rstrip()} … {tail.lstrip()}" if tail else head


def preview(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters of ``text`` for a table's cell, cut where a reader
    sees a character end (:func:`near_cut`), with "…" when anything was left out."""
    if len(text) <= max_chars:
        return text
    return text[: near_cut(text, max_chars)] + "…"


SHOWN_VALUE_CHARS = 80
"""The most characters of a value a message echoes (:func:`shown_value`)."""


def shown_value(value: object, max_chars: int = SHOWN_VALUE_CHARS) -> str:
    """A value an error message echoes (a date, an id, a key of a file read), as Python
    writes it (``'8 May'``, ``5``, ``None``), its first ``max_chars`` characters and its
    length when it is longer: a date of 100,000 characters is named on a line, not a page
    (``'xxxx…' (100,000 characters)``)."""
    try:
        said = repr(value)
    except ValueError:  # (an int of over 4,300 digits)
        return "a number too long to show"
    if len(said) <= max_chars:
        return said
    size = len(value) if isinstance(value, str) else len(said)
    return f"{preview(said, max_chars)} ({size:,} characters)"


NEAR_CUT_CHARS = 8
"""How far :func:`near_cut` moves a cut back to keep a character whole."""


def near_cut(text: str, end: int) -> int:
    """:func:`cut_at`, moved back at most :data:`NEAR_CUT_CHARS` (a run of thousands of
    combining marks or joiners is cut where asked: what is read stays bounded)."""
    at = cut_at(text, end, most=NEAR_CUT_CHARS + 1)
    return at if end - at <= NEAR_CUT_CHARS else max(0, min(end, len(text)))


def _head(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, ending before a word cut in two."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if text[limit].isspace():
        return cut
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    return cut[:space] if space > limit - 100 else cut


ASKED_WITH = lazy_compile(r"\bhow (much|many|long|far|often)\b|\bwhat (kind|sort|type)\b", re.ASCII)
"""The word a question is asked with, not about, nor written in its answer: "how much",
"what kind", "how long" (the answer to "how old" says "9 years old": that word stays)."""


def asked_with(query: str) -> set[str]:
    """The words ``query`` (folded, :func:`fold`) is asked with (:data:`ASKED_WITH`):
    {"much"} of "how much tax…"."""
    return {w for pair in ASKED_WITH.findall(query) for w in pair if w}


_HIRAGANA = lazy_compile("[\u3040-\u309f]")
_LEAD_KANA = lazy_compile("^[\u3040-\u309f]+")
_HONORIFIC = lazy_compile("(?:^|[のがをにはでともへや])[おご]$")
_TAIL_KANA = lazy_compile(
    "(?:まで|から|だけ|です|でした|より|など|ので|のに|けど|とか|しか|ばかり|くらい|ぐらい"
    "|[のがをにはでともへや]|って|っ)+$"
)


def _without_edge_kana(piece: str) -> str:
    """``piece`` without the one or two hiragana it begins with (a particle, an ending cut
    from a word: 「て名前」 is 「名前」; a longer run is a word: おばあちゃんの家, たまご焼き),
    save an honorific お or ご before a kanji (をお茶会 「お茶会」), and without the particles it
    ends with (「月の」, 「朝まで」, 「私から」); other endings stay (締め切り, 植えた)."""
    lead = _LEAD_KANA.match(piece)
    if lead is not None and len(lead.group()) <= 2:
        rest = piece[lead.end() :]
        kanji = "\u4e00" <= rest[:1] <= "\u9fff"
        piece = (lead.group()[-1] if kanji and _HONORIFIC.search(lead.group()) else "") + rest
    return _TAIL_KANA.sub("", piece)


_GENERIC_KANJI = frozenset("言思行来見聞話知出入持使分会取考感")
"""Kanji of verbs any message uses (言った, 思った, 行った, 見た): one of them alone with
its ending is not what a memory shares."""
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff"  # (not ・, which parts two words)
_KATAKANA_ONLY = lazy_compile(f"^[{_KATAKANA}]+$")


def _whole_piece(piece: str, text: str) -> str:
    """``piece`` (a CJK piece of a query found in ``text``) as a why line names it: without
    the hiragana it begins with and the particles it ends with (:func:`_without_edge_kana`:
    「て名前」 is 「名前」, 「に設定し」 「設定し」), "" when less than 2 characters are left (「月の」),
    or one kanji of a verb any message uses (:data:`_GENERIC_KANJI`: 「って言」, 「言ってた」;
    「植えた」 stays), or when it is katakana found only inside a longer katakana word of
    ``text`` (the 「リー」 of 「リーダー」)."""
    piece = _without_edge_kana(piece)
    core = _HIRAGANA.sub("", piece)
    if len(piece) < 2 or not core or (len(core) == 1 and core in _GENERIC_KANJI):
        return ""
    if _KATAKANA_ONLY.match(piece):
        whole = rf"(?<![{_KATAKANA}]){re.escape(piece)}(?![{_KATAKANA}])"
        return piece if re.search(whole, text) else ""
    return piece


def shared_phrases(query: str, text: str, *, limit: int = 3) -> list[str]:
    """The longest pieces of ``query`` that also occur in ``text`` (for "why" lines).

    Latin words count when they are not stopwords nor the word a question is asked with
    (:data:`ASKED_WITH`: the "long" of "how long"); a CJK piece counts as :func:`_whole_piece`
    names it (without the hiragana it begins with and the particles it ends with; a
    katakana one only as a whole word of ``text``); a piece is at most
    :data:`MAX_PHRASE_CHARS` long, and the first :data:`MAX_PHRASE_TEXT` characters of
    each text are read (the work grows with their product). A piece inside a longer one
    found is not named again, nor an honorific after a name (:func:`_without_honorifics`:
    「さくらちゃんの誕生日」 and 「結衣ちゃんの誕生日」 share 「誕生日」, not 「ちゃんの誕生日」).
    Both are compared as :func:`fold` writes them (café is cafe,
    O’Brien is O'Brien, 葛󠄀飾 is 葛飾); a word is named as the query writes it, in lower case.
    """
    q = _folded(_head(query, MAX_PHRASE_TEXT))
    t = fold(_head(text, MAX_PHRASE_TEXT))
    found: list[str] = []
    runs = (
        run  # (an honorific after a name is no shared word: 「ちゃんの誕生日」)
        for m in _CJK_RUN.finditer(q)
        for run in _without_honorifics(m.group(), q[m.start() - 1 : m.start()])
    )
    for run in runs:
        i = 0
        while i < len(run) - 1:
            j = i + 1
            while j < len(run) and j - i < MAX_PHRASE_CHARS and run[i : j + 1] in t:
                j += 1
            piece = _whole_piece(run[i:j], t) if j - i >= 2 else ""
            if piece and piece not in found:
                found.append(piece)
                i = j
            else:
                i += 1
    words = {w.replace(",", "") for w in _latin_words(t)}
    asked = asked_with(fold(query))
    named: set[str] = set()
    for word in _latin_words(q):
        plain = fold(word).replace(",", "")  # (41,500 is 41500)
        if (
            1 < len(word) <= 2 * MAX_PHRASE_CHARS
            and not (word.isdigit() and len(word) < 3)  # ("10" of 8/10 is in many texts)
            and plain not in ENGLISH_STOPWORDS
            and plain not in asked
            and plain in words
            and plain not in named
        ):
            found.append(word)
            named.add(plain)
    found.sort(key=len, reverse=True)
    kept: list[str] = []
    for piece in found:  # (a CJK piece and a word of it, 始めたよ and 始めた: the longer says it)
        if not any(_inside(piece, longer) for longer in kept):
            kept.append(piece)
    return kept[:limit]


@functools.lru_cache(maxsize=256)
def _latin_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` outside its CJK runs ("meetingどうだった" holds "meeting"), a
    possessive's 's left off ("kinako's" is "kinako"); a number written with thousands
    separators is one word (41,500). Read once per text: a later change's words are
    weighed against each older result's."""
    words: list[str] = []
    for word in _COMPOUND_NUMBER_OR_WORD.findall(_CJK_RUN.sub(" ", text)):
        whole = _compound(word.replace("’", "'")) if "-" in word else ""
        found = [whole] if whole else _NUMBER_OR_WORD.findall(word)
        words.extend(_POSSESSIVE.sub("", w) for w in found)
    return tuple(words)


def forget_words() -> None:
    """Drop the words cached per text (:func:`_latin_words`: they are users' words, which a
    forgotten agent's or a scrubbed delete's must not leave in the process)."""
    _latin_words.cache_clear()


_POSSESSIVE = lazy_compile(r"['’]s$")


def _inside(piece: str, longer: str) -> bool:
    """Whether ``piece`` is part of ``longer``: a CJK piece anywhere, a word as a word
    ("car" is not part of "cart")."""
    if _CJK_RUN.fullmatch(piece):
        return piece in longer
    return re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", longer) is not None
