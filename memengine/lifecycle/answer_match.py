"""The offline answer judge: which of the memories a turn offered its reply the answer used.

:func:`match_answer` reads the answer's tags, key terms, uncommon words (:func:`uncommon`),
the own content of a list answer, the days it names by their date (:func:`named_days`) and
its similarity to each memory; :mod:`.feedback` asks it when no LLM judges the answer.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

from ..clock import in_zone
from ..config import LifecycleConfig
from ..lazy_re import lazy_compile
from ..models import Episode
from ..retrieve.change_words import CHANGE
from ..retrieve.temporal import find_time_expressions
from ..text import CJK_CHARACTER, as_a_word, fold, query_terms, sentences
from ..values import closed_values, compared, holds
from .answer_words import (
    HIRAGANA,
    HIRAGANA_LETTER,
    KATAKANA_LETTER,
    a_number,
    answer_term_groups,
    capital_words,
    distinct_words,
    japanese_words,
    kana_answer_word,
    names_in,
    stems,
    titled_names,
    word_forms,
    word_starts,
    words_in,
    writes_kana_word,
)

__all__ = ["match_answer", "named_days", "uncommon"]


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _tag_in(tag: str, text: str) -> bool:
    """Whether the (normalised) ``tag`` is in ``text``: as a word where it begins or ends
    with a letter of a spaced script, else anywhere (:func:`~memengine.text.as_a_word`)."""
    return bool(tag) and re.search(as_a_word(tag), text) is not None


def uncommon(answer_terms: Sequence[str], rows: int, counts: Mapping[str, int]) -> set[str]:
    """The answer's terms found in few of the file's ``rows`` episodes (at most 3, or 5 %:
    "patellar", not "day"), by their document ``counts``."""
    most = max(3, rows // 20)
    return {t for t in answer_terms if counts.get(t, 0) <= most}


def match_answer(
    answer: str,
    episodes: Sequence[Episode],
    similarities: Mapping[int, float],
    cfg: LifecycleConfig,
    rare: set[str] | frozenset[str] = frozenset(),
    asked_at: datetime | None = None,
) -> dict[int, str]:
    """The memories the answer shows signs of, each with the reason (tag, keywords, similarity).

    Keywords are read both ways: enough of a memory's key terms in the answer, or
    (for a short answer drawn from a long memory: "Patellar tendinopathy.") at least two
    of the answer's words with a ``rare`` term (:func:`uncommon`) from what the user said in
    the memory (not its reply: a stock reply is the assistant's own), or the one word of an
    answer of one (高尾山！) that no other memory offered says, and that much of the
    answer's words (:func:`answer_term_groups`: トヨタ is one word, not five terms; without
    hiragana: お疲れ様でした holds no でし to match), unless another memory offered says
    those words and more of the answer's (「田中さんはトヨタで働いてるよ」 is not drawn from
    佐藤さんもトヨタで働いてる); one word is the answer's when a particle or an ending is all it
    writes beside it (高尾山だよ, not 「そっか、雨なんだね。むりしないでね」: :data:`_ONE_WORD_ROOM`),
    a word in hiragana where the memory writes it whole (きなこだよ of きなこって, not もちだよ of
    もちろん: :func:`.answer_words.writes_kana_word`).
    An English word counts in another form of it (the answer's "peanut" of "peanuts",
    "allergy" of "allergic"; not a name's, "Simone" of "Simon": :func:`stems`), a Japanese
    word by the two kanji it begins with (結婚式 of 結婚する: :func:`_held`). An answer that lists
    several memories ("Your kids are Emma, Liam and Noah.", お子さんは翔太くんと結衣ちゃんだね,
    not 店員さんに息子さんと間違えられたんだね: :func:`_a_name`) credits each whose own
    content it carries (:func:`_own_content`), when it carries that of two or more: one
    memory named alone is judged by the rules above ("Sorry, I don't remember anything
    about Barcelona." is no use of the trip). An answer that names
    two days or more by their date credits the memories said on them (:func:`_by_day`,
    read at ``asked_at``, the turn's time in the zone the pack dates its blocks in). Last,
    an answer close to a memory's embedding credits it, unless it is only the other side of
    a topic that a memory found by its content holds (:func:`_outshone`). A memory whose
    weekday, date, time, month or amount the answer does not name, while it names another of
    the same kind that a memory of the same subject credited holds, gives way ("Tuesday" of a correction, not
    the corrected "Monday": :func:`_corrected`)."""
    text = _norm(answer)
    answer_terms = set(query_terms(answer))
    own = [t for t in answer_terms if not HIRAGANA.search(t)]  # (not でし, くだ, さい)
    # a term that more than one memory offered holds is the question's subject ("gym" of
    # every gym session), or a common word: it is no memory's own content; one the user
    # said in one memory is that memory's, though another holds it in its reply (the same
    # answer given before: "Your kids are Emma, Liam and Noah.", asked again)
    terms_of = {ep.id: set(query_terms(ep.text)) for ep in episodes}
    # the user's side only (a stock reply is the assistant's), content words only
    told_of = {ep.id: set(query_terms(_said(ep))) for ep in episodes}
    holders = Counter(t for terms in terms_of.values() for t in terms)
    tellers = Counter(t for terms in told_of.values() for t in terms)
    once = {t for t in answer_terms if t in rare and (tellers[t] == 1 or holders[t] <= 1)}
    own_rare = {t for t in own if t in once}
    # a list is read in what the answer states: not in a question ("How was Barcelona?"),
    # nor in an answer that says it does not know ("I don't remember Liam or Emma")
    stated = "" if _DISOWNS.search(answer) else _statements(answer)
    stated_terms = set(query_terms(stated))
    names = names_in(stated) if own_rare and stated else set()
    folded = fold(stated)
    words = japanese_words(folded) if once else []
    found: dict[int, str] = {}
    carried: dict[int, str] = {}  # each memory whose own content the answer carries
    # the answer's words (トヨタ once, not as ト, ヨ, タ, トヨ and ヨタ) each memory says
    whole = fold(answer)
    answer_words = answer_term_groups(own, whole)
    starts = word_starts(own, whole)
    capitals = capital_words(answer)  # (a name is in no other form: Simone is not Simon)
    held = {
        ep.id: _held(answer_words, starts, capitals, told_of[ep.id], _said(ep)) for ep in episodes
    }
    kana = None if answer_words else kana_answer_word(whole)
    if kana is not None:  # (きなこだよ: a word in hiragana, whole where the user wrote it)
        answer_words = [frozenset(query_terms(kana))]
        for ep in episodes:
            if writes_kana_word(kana, fold(_said(ep))):
                held[ep.id].add(answer_words[0])
    answer_forms = word_forms(answer_terms, capitals)  # (peanut of peanuts)
    # (an answer of one word is that word, a particle or an ending aside: 高尾山だよ, not
    # 「そっか、雨なんだね。むりしないでね」)
    one_word = len(answer_words) == 1 and _written_beside(answer_words[0], whole) <= _ONE_WORD_ROOM
    for ep in episodes:
        told = told_of[ep.id]
        fresh = {  # (hiragana pairs: はるとくん; not what the user said in another memory)
            t for t in once & terms_of[ep.id] & stated_terms if t in told or not tellers[t]
        }
        why = _own_content(ep, stated_terms, names, fresh, told, folded, words) if stated else ""
        if why:
            carried[ep.id] = why
        tag = next(
            (
                t
                for t in ep.tags
                # (one character is in too many words: 車 in 電車, ト in チケット)
                if t.strip().lower() != "principle"
                and len(t.strip()) >= 2
                and _tag_in(_norm(t).strip(), text)
            ),
            None,
        )
        if tag is not None:
            found[ep.id] = f"tag {tag!r} in the answer"
            continue
        terms = query_terms(ep.text)
        written = capital_words(ep.text)
        shared = [
            t
            for t in terms
            if t in answer_terms or not stems(t, t in written).isdisjoint(answer_forms)
        ]
        if (
            terms
            and len(shared) >= min(2, len(terms))
            and len(shared) / len(terms) >= cfg.answer_keyword_fraction
        ):
            found[ep.id] = f"{len(shared)}/{len(terms)} key terms in the answer"
            continue
        drawn = [w for w in held[ep.id] if w & rare]
        # (or an answer's one word, 高尾山！, that no other memory offered says)
        alone = one_word and len(drawn) == 1
        if (
            (len(drawn) >= 2 or (alone and sum(drawn[0] in h for h in held.values()) == 1))
            and len(drawn) / len(answer_words) >= cfg.answer_keyword_fraction
            # (not when another memory offered says these words and more of the answer's:
            # 「田中さんはトヨタで働いてるよ」 is not drawn from 佐藤さんもトヨタで働いてる)
            and not any(held[ep.id] < more for more in held.values())
        ):
            found[ep.id] = f"{len(drawn)}/{len(answer_words)} of the answer's words from it"
    if len(carried) >= 2:  # a list answer: each memory it draws on
        for i, why in carried.items():
            found.setdefault(i, why)
    dated = _by_day(stated, episodes, found, asked_at) if asked_at is not None and stated else {}
    found.update(dated)
    by_content = set(found)
    for ep in episodes:
        sim = similarities.get(ep.id)
        if ep.id in found or sim is None or sim < cfg.answer_match_threshold:
            continue
        if _outshone(ep.id, sim, by_content, similarities, terms_of, own):
            continue
        found[ep.id] = f"similar to the answer ({sim:.2f})"
    # (a memory credited by the day it was said is not read for what its text states)
    for i in _corrected(answer, [ep for ep in episodes if ep.id in found and ep.id not in dated]):
        del found[i]
    return found


_ONE_WORD_ROOM = 5
"""How much an answer of one word writes beside it (:func:`_written_beside`): a particle,
an ending or a word of no content (高尾山だよ, トヨタかあ、いいね, "About $2,400"), not a
sentence's other words."""
_LATIN_RUN = lazy_compile("[0-9a-z]+")
_LONGEST_WORD = 100
"""The longest term of an answer looked for as a word: no memory names an item by a longer
one (a pasted hash, a run of one letter), and a pattern as long is compiled for each (a
megabyte of one word took seconds)."""


def _written_beside(word: frozenset[str], text: str) -> int:
    """How much ``text`` (folded) writes outside every place of ``word`` (its terms,
    :func:`answer_term_groups`), a Latin word or number counting one and a kana or kanji one
    each: 2 for 高尾山 in 高尾山だよ！ and for "Deepika" in "It's Deepika!", 14 for 雨 in
    「そっか、雨なんだね。むりしないでね」. A term longer than :data:`_LONGEST_WORD` is not
    looked for: it counts as written beside (a run of 10,000 x's, one Latin word)."""
    covered = [False] * len(text)
    for term in word:
        if len(term) > _LONGEST_WORD:
            continue
        pattern = re.escape(term) if CJK_CHARACTER.search(term) else as_a_word(term)
        for m in re.finditer(pattern, text):
            covered[m.start() : m.end()] = [True] * (m.end() - m.start())
    rest = "".join(" " if inside else ch for ch, inside in zip(text, covered, strict=True))
    return len(_LATIN_RUN.findall(rest)) + sum(
        1 for ch in rest if ch.isalnum() and not ch.isascii()
    )


_CLEARLY_CLOSER = 0.1
"""How much closer to the answer a memory it draws on must be than one that is only
similar to it, for the similar one to be taken as the same topic's other side."""


def _outshone(
    i: int,
    sim: float,
    by_content: set[int],
    similarities: Mapping[int, float],
    terms_of: Mapping[int, set[str]],
    own: Sequence[str],
) -> bool:
    """Whether memory ``i``, similar to the answer (``sim``) but not found in its content,
    is only another side of the topic of one that is (``by_content``): that one holds each
    of the answer's ``own`` terms (no hiragana pairs) that ``i`` holds, one at least, and is
    clearly closer to the answer (:data:`_CLEARLY_CLOSER`). 「辛いの無理って言ってたよね」
    draws on 辛いの無理; 辛いのは大丈夫, close to it by the topic they share, is not what it
    used. A memory that holds a word of the answer the other does not is judged by its
    similarity alone (the marathon of "With the marathon coming, rest that knee": "I'm
    training for the Tokyo marathon", beside "My knee hurts after long runs")."""
    shared = {t for t in own if t in terms_of[i]}
    return bool(shared) and any(
        other != i
        and shared <= terms_of[other]
        and similarities.get(other, -1.0) - sim >= _CLEARLY_CLOSER
        for other in by_content
    )


_ANSWER_CLAUSES = lazy_compile(
    r",(?!\d)|[;:!?。、，；！？]|\.(?=\s|$)|\b(?:and|but)\b|けど|けれど|(?<=[だたす])が(?![っらりるれろ])",
    re.IGNORECASE,
)
"""Where a clause of an answer ends ("The gym day pass is $15 now, and your membership …",
「1日券は1500円になったけど、会費は…」, 「…だが」; not the comma of "$1,950", nor the が of
「1日券が」 or 上がった)."""


def _a_value(term: str) -> bool:
    """Whether ``term``, a folded word, is a value's or a part of one ("tuesday", "7pm",
    "june" as "June" is written), no word an item is named by."""
    return bool(closed_values(term) or closed_values(term.title()))


_JA_RISE = lazy_compile("値?[上下]が[らりるれろっ]|値?[上下]げ|増え|減[らりるれろっ]")
"""A Japanese verb of a value gone up or down, in any form and after any noun (上がった,
上がらない, 値上がりした, 値下げ, 増えた, 減った), which names no item: kept beside
:data:`.change_words.CHANGE`, which reads one as a change only after a value or a cost (60キロ
まで減った, 家賃が上がった), for an answer's 1日券が上がった or 上がらなかった names no item either."""
_AUXILIARIES = frozenset("got get gets getting been".split())
"""The helping verbs of a change ("got switched", "has been moved"), no item's words either."""


def _without_change_words(text: str) -> str:
    """``text`` without the words that say its value changed (:data:`.change_words.CHANGE`,
    :data:`_JA_RISE`), which name no item: "went up" of "My gym membership went up to $60",
    all but 会費 of 「会費が6000円に上がった」 (a cost's value and its verb), 上がっ of
    「給料が出たから気分上がった」 (気分 kept). A change with an object names the item by it alone,
    who changed it left out too: "rent" of "Landlord raised the rent to $1,950", "day pass"
    of "The gym raised its day pass to $15"."""
    kept, start = [], 0
    for m in CHANGE.finditer(text):
        rest = m.group().split()[1:]  # (its verb left out)
        obj = [w for w in rest if not closed_values(w) and query_terms(w)]
        lead = text[start : m.start()]
        if obj:  # (who changed it, from the start of its clause: "Landlord" of "Landlord raised")
            lead = lead[: max((c.end() for c in _ANSWER_CLAUSES.finditer(lead)), default=0)]
        kept += [lead, " ".join(obj), " "]
        start = m.end()
    return _JA_RISE.sub(" ", "".join(kept) + text[start:])


def _item_words(text: str) -> tuple[set[str], str]:
    """The words ``text`` names its item by, no value nor change word among them
    (:func:`_without_change_words`): its English words in all their forms
    (:func:`.answer_words.word_forms`: "passes", "gym") and its text folded, where a Japanese
    word (:func:`.answer_words.japanese_words`: 1日券's 日券, 会費) is looked for."""
    text = _without_change_words(text)
    terms = [
        t
        for t in query_terms(text)
        if t.isascii() and t.isalpha() and not _a_value(t) and t not in _AUXILIARIES
    ]
    return word_forms(terms, set()), fold(text)


def _own_item_word(clause: str, of: tuple[set[str], str], lacking: tuple[set[str], str]) -> bool:
    """Whether ``clause`` holds a word of one memory (``of``, its :func:`_item_words`) that
    another (``lacking``) does not: "day" and "pass" of "The gym raised its day pass to $15"
    in "Day passes at the gym are $15 now" against "My gym membership is $50 a month", 日券
    of 「ジムの1日券が1500円に値上がりした」 in 「ジムの1日券は1500円になったけど」; not
    "membership" nor "gym" of "Your gym membership is $60 now", nor a value ("tuesday")."""
    forms, folded = of
    other_forms, other_folded = lacking
    clause = _without_change_words(clause)
    for term in query_terms(clause):
        mine = stems(term)
        if mine & forms and not mine & other_forms and not _a_value(term):
            return True
    return any(
        word in folded and word not in other_folded
        for word, _ in japanese_words(fold(clause))
        if not _a_value(word)
    )


def _told_apart(
    mine: tuple[set[str], str],
    holders: Sequence[tuple[set[str], str]],
    clauses: Sequence[str],
    value: tuple[str, str],
) -> bool:
    """Whether the answer's ``clauses`` tell a memory (``mine``, its :func:`_item_words`)
    apart from the ``value`` they state, which other memories hold (``holders``): the
    clause that states it names a word of its holder's own (:func:`_own_item_word`), so the
    value is about another item ("The gym day pass is $15 now, and your membership still
    covers classes."; 「ジムの1日券は1500円になったけど、会費のほうはレッスン込みのままだよ。」);
    a clause naming nothing of the holder's beyond what the memory shares with it takes its
    value back ("Your membership fee is $60 now, but it still covers classes.", 「会費は今
    6000円だけど、…」)."""
    stating = [c for c in clauses if holds(compared(closed_values(c)), value)]
    return bool(stating) and all(
        any(_own_item_word(clause, holder, mine) for clause in stating) for holder in holders
    )


def _corrected(answer: str, credited: Sequence[Episode]) -> set[int]:
    """The ``credited`` memories the answer states another value than: it names none of
    the memory's values of a closed kind (:func:`.values.closed_values`: a weekday, a month,
    a date, a day of the month, a clock time, an amount in one currency or unit), and names
    another of one of their kinds that another credited memory of the same subject holds
    (the two share a word of the answer that is no value). "Your yoga class is on Tuesday
    evenings." shares "yoga", "class", "evenings" with "My yoga class is on Monday
    evenings", but states the Tuesday of the correction beside it ("no wait, it's Tuesday,
    not Monday"): the Monday is not what it used. "It moved from Monday to Tuesday" names
    both and takes neither back, nor does "See you Tuesday!" take back a Monday dentist
    appointment (no other memory of the dentist holds the Tuesday), nor does an age or a
    year take back an amount or a date ("Emma is turning 7" beside a $300 venue: a bare
    number is no value), nor a value whose clause names a word of its holder the memory lacks,
    another item's (:func:`_told_apart`: "The gym day pass is $15 now, and your membership
    still covers classes.")."""
    stated = compared(closed_values(answer))
    if not stated:
        return set()
    values_of = {ep.id: compared(closed_values(ep.text)) for ep in credited}
    subject = {t for t in query_terms(answer) if not closed_values(t)}
    about = {ep.id: subject & set(query_terms(ep.text)) for ep in credited}
    words = {ep.id: _item_words(ep.text) for ep in credited}
    clauses = [c for c in _ANSWER_CLAUSES.split(answer) if c.strip()]
    corrected = set()
    for i, mine in values_of.items():
        if not mine or any(holds(stated, value) for value in mine):
            continue
        kinds = {kind for kind, _ in mine}
        for value in (v for v in stated if v[0] in kinds):
            holders = [
                words[j]
                for j, other in values_of.items()
                if j != i and about[i] & about[j] and holds(other, value)
            ]
            if holders and not _told_apart(words[i], holders, clauses, value):
                corrected.add(i)
    return corrected


_DISOWNS = lazy_compile(
    r"\b(?:(?:don't|do not|can't|cannot|couldn't|didn't) (?:remember|recall|know|say)"
    r"|not sure|no idea|haven't (?:told|mentioned)|never (?:told|mentioned))\b"
    r"|覚えてない|覚えていない|思い出せない|わからない|分からない|知らない|聞いてない|聞いていない",
    re.IGNORECASE,
)
"""What an answer says when it does not know what it names ("I don't remember Liam or
Emma, sorry.", 3日と10日は何してたか覚えてないな): no list of memories it drew on."""


def _statements(answer: str) -> str:
    """The sentences of ``answer`` that state, not ask ("Say hi to Liam." of "Say hi to
    Liam. How was Barcelona?")."""
    return " ".join(s for s in sentences(answer) if not s.rstrip().endswith(("?", "？")))


def _by_day(
    answer: str, episodes: Sequence[Episode], found: Mapping[int, str], asked_at: datetime
) -> dict[int, str]:
    """The memories not yet ``found`` that an answer listing days by their date ("Mar 3, 8
    and 13") names by the day they were said (in ``asked_at``'s zone, as the pack dates
    them), each with the reason: none when it names one day ("You had knee surgery on
    May 3." tells when, it lists no memories), nor by a day that more than one memory
    offered was said on, or that a memory ``found`` by its content was said on or names
    (the knee surgery's "May 3" is not the pasta's of that day)."""
    days = named_days(answer, asked_at)
    if len(days) < 2:
        return {}
    zone = asked_at.tzinfo
    said = {ep.id: in_zone(ep.occurred_at, zone) for ep in episodes}
    per_day = Counter(moment.date() for moment in said.values())
    taken: set[date] = set()
    for ep in episodes:
        if ep.id in found:
            taken |= {said[ep.id].date()} | named_days(ep.text, said[ep.id])
    return {
        ep.id: f"its day ({day.isoformat()}) named in the answer"
        for ep in episodes
        if ep.id not in found and (day := said[ep.id].date()) in days - taken and per_day[day] == 1
    }


def _japanese_content(
    ep: Episode, answer_words: Sequence[tuple[str, bool]], fresh: set[str]
) -> list[str]:
    """The names of ``ep`` a Japanese list answer (its ``answer_words``,
    :func:`japanese_words`) carries, each beginning a word on both sides (田中 of 田中さん,
    not of 山田中学; a katakana word whole: not the ハル of ハルトくん; a hiragana name whole)
    and holding one of the ``fresh`` terms (what no other memory offered holds, uncommon
    in the file).

    A name is written so on either side (翔太くん; the partner's 「結衣ちゃん、おめでとう！」),
    and may be one kanji when both write it alone (蓮くん). A word no honorific marks (京都,
    ピアノ) is no name: it counts with the memory's other words (:func:`_own_content`)."""
    if not answer_words:
        return []
    mine = distinct_words(japanese_words(fold(ep.text)))
    by_start: dict[str, list[str]] = {}  # (a word is met by one it shares two letters with)
    for word in mine:
        by_start.setdefault(word[:2], []).append(word)
    names: dict[str, None] = {}
    for a, a_named in distinct_words(answer_words).items():
        met = by_start.get(a[:2], []) if len(a) > 1 else [a] if a in mine else []
        for m in met:
            if not (a_named or mine[m]):
                continue
            n = 0
            while n < min(len(a), len(m)) and a[n] == m[n]:
                n += 1
            piece = a[:n]
            if KATAKANA_LETTER.match(piece[-1]) and any(
                KATAKANA_LETTER.match(w, n) for w in (a, m)
            ):
                continue  # (a katakana word goes on: ハル of ハルト and ハルカ)
            if (n < 2 or HIRAGANA_LETTER.match(a)) and a != m:
                continue  # (one kanji, or a hiragana name, is written whole on both sides)
            grams = {piece} if n == 1 else {piece[i : i + 2] for i in range(n - 1)}
            if grams & fresh:
                names.setdefault(piece)
    return list(names)


_KANJI_PAIR = lazy_compile(
    "[\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]{2}"
)
"""Two kanji (結婚 of 結婚式): a word's start that a longer word of the same begins with."""


def _held(
    words: Sequence[frozenset[str]],
    starts: Mapping[frozenset[str], str],
    names: set[str],
    terms: set[str],
    said: str,
) -> set[frozenset[str]]:
    """The answer's ``words`` (:func:`answer_term_groups`, each begun by its bigram in
    ``starts``; ``names`` its words written with a capital) that a memory's ``terms``, of
    what the user ``said`` in it, hold: whole, or in another form when an English word
    (:func:`stems`: the answer's "allergy" is held by "I'm allergic to peanuts"), or by
    the two kanji it begins with, as a shorter word is held by a longer one (結婚式 of
    来月結婚する, 東京都 of 東京, as 結婚 of 結婚式); one kanji when the memory writes it alone
    too (雨 of 雨で, not the 子 of お子さん in 息子)."""
    forms = word_forms(terms, capital_words(said))
    mine = answer_term_groups([t for t in terms if not HIRAGANA.search(t)], fold(said))
    alone = {next(iter(w)) for w in mine if len(w) == 1}
    held = set()
    for w in words:
        term = next(iter(w))
        if len(w) == 1 and CJK_CHARACTER.fullmatch(term):
            whole = term in alone
        else:
            whole = w <= terms or (len(w) == 1 and not stems(term, term in names).isdisjoint(forms))
        start = starts.get(w, "")
        if whole or (_KANJI_PAIR.fullmatch(start) is not None and start in terms):
            held.add(w)
    return held


def _said(ep: Episode) -> str:
    """What the user said in ``ep``: its user side, or its content (a note is the user's)."""
    return ep.user_text if ep.user_text is not None else ep.content or ""


def _own_content(
    ep: Episode,
    answer_terms: set[str],
    answer_names: set[str],
    fresh: set[str],
    told: set[str],
    answer: str,
    answer_words: Sequence[tuple[str, bool]],
) -> str:
    """Why ``ep`` is one of the memories a list answer draws on (its ``answer_terms``, and
    the ``answer_names`` it writes as names; the ``answer`` :func:`~memengine.text.fold`
    made, and its Japanese ``answer_words``, :func:`japanese_words`): the answer carries
    the memory's own content, or "".

    ``fresh`` are the answer's uncommon terms that ``ep`` holds and no other memory offered
    with it does (what those share is the question's subject: the "gym" of every gym
    session). One of them is enough when ``ep`` or the answer writes it as a name, a title
    or a number (:func:`names_in`, :func:`titled_names`, :func:`a_number`), on either side of
    the exchange (the partner's "I suggested 'Educated' by Tara Westover."); otherwise two
    words (:func:`words_in`: 仕事 is one; hiragana pairs aside) from what the user said (a
    stock reply's words are the assistant's own, and a young file's common words are all
    uncommon). Japanese writes no capitals: a name is one an honorific marks (翔太くん,
    はるとくん: :func:`_japanese_content`), and a plain word (京都, 天気, ピアノ) is one of
    the two words, as "weather" or "piano" is."""
    if not fresh:
        return ""
    plain = {t for t in fresh if not HIRAGANA.search(t)}
    pieces = [
        span for span, terms in titled_names(ep.text) if terms <= answer_terms and terms & plain
    ]
    named = names_in(ep.text) | answer_names
    for term in sorted(plain):
        if (term in named or a_number(term)) and not any(term in _norm(p) for p in pieces):
            pieces.append(term)
    ja_names = _japanese_content(ep, answer_words, fresh)
    pieces += [n for n in ja_names if not any(n in _norm(p) for p in pieces)]
    if pieces:
        shown = ", ".join(repr(p) for p in pieces[:3]) + (", …" if len(pieces) > 3 else "")
        return f"its own {shown} in the answer"
    mine = words_in(plain & told, answer)
    if len(mine) >= 2:
        return f"{len(mine)} of its own words in the answer ({', '.join(mine[:3])})"
    return ""


_MORE_DAYS = lazy_compile(
    r"\s*(?:,|、|，|&|\band\b|と|や)\s*(?:the\s+)?(\d{1,2})(?:st|nd|rd|th|日)?(?![\d/:]|\.\d)"
)
"""One more day of a list after a date ("Mar 3, 8 and 13", 「3月3日、9日」): the same month's."""
_DAY_RUN = lazy_compile(r"(?<![\d月/])\d{1,2}日(?:\s*[、,，とや]\s*\d{1,2}日)+(?![間前後目])")
"""A list of days of the month (「3日、9日、14日」) that no month is written before."""
_DAY = lazy_compile(r"(\d{1,2})日")


def named_days(answer: str, asked_at: datetime) -> set[date]:
    """The days ``answer`` names by their date, read at ``asked_at`` (in its zone): "Mar 3",
    3月3日, 2026-03-03 and the days of a list after one ("Mar 3, 8, 13 and Apr 5"), and a
    list of days of the month alone (「3日、9日、14日」: the latest of each, as
    "on the 15th" is read). A day told by a word ("today", "last Friday") names no memory's
    date: the answer's "Rest up today!" is not a use of today's memories."""
    norm = unicodedata.normalize("NFKC", answer).lower()
    days: set[date] = set()
    cursor = 0
    listed: list[tuple[int, int]] = []  # (a list after a date is of its month: not alone)
    for expr in find_time_expressions(answer, asked_at):
        first = in_zone(expr.start, asked_at.tzinfo).date()
        if not any(ch.isdigit() for ch in expr.surface) or expr.end - expr.start > _A_DAY:
            continue
        days.add(first)
        at = norm.find(expr.surface, cursor)
        if at < 0:
            continue
        cursor = at + len(expr.surface)
        start = cursor
        while (more := _MORE_DAYS.match(norm, cursor)) is not None:
            cursor = more.end()
            if 1 <= int(more.group(1)) <= calendar.monthrange(first.year, first.month)[1]:
                days.add(first.replace(day=int(more.group(1))))
        listed.append((start, cursor))
    today = in_zone(asked_at, asked_at.tzinfo).date()
    for run in _DAY_RUN.finditer(norm):
        if any(a <= run.start() < b for a, b in listed):
            continue
        for item in _DAY.finditer(run.group()):
            n = int(item.group(1))
            year, month = (today.year, today.month)
            if n > today.day:
                year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            if 1 <= n <= calendar.monthrange(year, month)[1]:
                days.add(date(year, month, n))
    return days


_A_DAY = timedelta(hours=25)
"""The longest window read as one day (one of 25 hours, when a clock is set back)."""
