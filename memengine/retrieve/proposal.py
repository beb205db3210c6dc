"""Whether a message proposes or announces an action, offline and cheap (English and Japanese).

A companion that is told "Let's get sushi tonight!", "I'm baking you peanut butter
cookies!" or 激辛カレー作るね is asked nothing, yet needs the memory the plan touches
(a favourite food, an allergy, 辛いの無理) before it replies. :func:`proposes` tells such
a message from plain news ("I'm making dinner", 今日カレー作った) and small talk
("Let's see", 今日暑いね), so the should-inject rule can read it apart
(:func:`.inject.should_inject`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..text import APOSTROPHES, CHAT_WORDS, READ_CHARS, sentences, within

__all__ = ["proposes"]

_WORDS = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")

_CLAUSE = re.compile(r"[,;:]|\s[-–—]\s")
"""What parts an English sentence into clauses, each read on its own ("So excited, let's
go camping")."""

_OPENERS = CHAT_WORDS | frozenset(
    "ok okay oh hey hi so well and but also alright anyway yay ooh wait right".split()
)
"""Chat words that may open a proposal without changing it ("ok let's get sushi")."""

_SUGGEST = frozenset({"let's", "lets"})
"""Words that open a suggestion to do something together ("let's get sushi"; "lets" only
opening a sentence: "he lets me drive" is no suggestion)."""

_NOT_PLANS = frozenset("see say hope face be".split())
"""Verbs after "let's" that plan nothing ("let's see", "let's say it's Monday", "let's hope
so", "let's face it", "let's be honest")."""

_HEDGES = frozenset("just maybe all both".split())
"""Words between "let's" and its verb ("let's just order pizza")."""

_PROVIDE = frozenset(
    """make makes making made bake bakes baking baked cook cooks cooking cooked get gets
    getting got order orders ordering ordered buy buys buying bought bring brings bringing
    brought grab grabs grabbing grabbed book books booking booked pick picking picked prepare
    prepares preparing prepared fix fixing fixed pour pouring poured brew brewing brewed
    fetch fetching fetched reserve reserving reserved treat treating treated take taking took
    pack packing packed serve serving served throw throwing threw plan planning planned
    whip whipping whipped""".split()
)
"""Verbs of making, getting or arranging something for someone ("I'm baking you cookies",
"I'll order pizza for everyone", "I made a curry for my wife")."""

_LEADS = frozenset(
    """i i'm im i'll i've ive i'd we we're we'll we've am will gonna going to just about
    thinking of planning might may could should would want wanna gotta have has had already
    also finally totally so then now probably definitely really actually secretly quickly
    let me us decided trying try""".split()
)
"""What may come before a :data:`_PROVIDE` verb in an offer: the speaker as subject and
words of intent ("I'm gonna", "thinking of", "let me"; a chat that drops its "I", "Gonna
grab you a latte", too). "She made you a cake" is news of someone else."""

_RECEIVERS = frozenset("you u ya us him her them y'all yall".split())
"""Who an offer is for, right after its verb ("I'm baking you cookies")."""

_GROUPS = frozenset(
    "everyone everybody all kids family guests team party gang guys girls boys friends".split()
)
"""People an offer can be for after "for" ("for everyone", "for the kids")."""

_REACH = 8
"""How many words after an offer's verb may name who receives it ("ordering a cheese pizza
for everyone": the fifth)."""

_POSSESSIVES = frozenset("my our your his her their".split())

_NOT_NAMES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december christmas easter halloween
    thanksgiving new i""".split()
)
"""Capitalised words after "for" that name a time, not a person ("for Friday")."""

_JA_TRAILING = re.compile(
    r"[\s.!。！…~〜♪☆★♡♥❤ーぁぃぅぇぉw笑\ufe0f\u200d\U0001f000-\U0001faff\u2600-\u27bf]+$"
)
"""What may follow a Japanese sentence's last word: punctuation, a long vowel, a laugh,
emoji."""

_KANJI = "\u3400-\u9fff\uf900-\ufaff"

_JA_VOLITIONAL = re.compile(
    rf"(?:(?<!ない)(?<=[{_KANJI}いきしちにひみりえけせてねへめれぎじびぜでべ])よう"
    rf"|(?<=[{_KANJI}っと])こう|(?<=[{_KANJI}])[ごぼと]う|(?<=[{_KANJI}し])もう"
    rf"|(?<=[{_KANJI}やばらわ])ろう|(?<=[{_KANJI}かがさただなまらわ])おう|ましょう"
    rf"|(?<=[{_KANJI}しべめけ])[よこもろ]っ(?=か)|しよ|(?<=[{_KANJI}])こ)"
    r"(?:か(?:な|なあ|ね)?|よね?|ね|ぜ|ぞ|や|って)?$"
)
"""A sentence ending in a verb's volitional form, "let's" or "I think I'll": 行こう, 今夜パクチー
鍋にしよう, 焼こうかな, 飲もうよ, 食べましょうか, 行こっか, しよ; not だろう, でしょう, おはよう,
ありがとう, 夢のよう."""

_JA_PREPARE = re.compile(
    r"(?:[っいしきちにみりえけせてねべめれぎじ]とく|んどく|[てで]おく"
    r"|[っいしきちにみりえけせてねべめれぎじ]ときます|んどきます|[てで]おきます)"
    r"(?:ね|よ|わ|から|ぞ)?$"
)
"""A sentence announcing that something is got ready: 頼んどくね, 買っとく, 予約しときます,
用意しておくね."""

_JA_PROVIDE = (
    r"(?:(?<![操制製])作|つく|焼|買|(?<![信依])頼|たの|炊|煮|揚|淹|奢|おご|持って|連れて|差し入れ"
    r"|(?:用意|準備|注文|予約|ご馳走|ごちそう|料理))"
)
"""Japanese stems of making, getting or arranging something for someone."""

_JA_STEM = re.compile(_JA_PROVIDE)

_JA_OFFER = re.compile(
    rf"{_JA_PROVIDE}(?:る|く|う|む|げる|れる|する|いく|ってく|っていく|ってくる)(?:ね|よ|から|わ|ぞ)$"
    rf"|{_JA_PROVIDE}(?:り|き|い|み|げ|れ|し|いき|ってき)?ます(?:ね|よ)?$"
)
"""A sentence offering to make or get something: 激辛カレー作るね, 注文しますね,
ケーキ買ってくるよ; not 今日カレー作った, news of one's own meal."""

_JA_GIVEN = re.compile(r"[てで]あげ")
"""A verb done for someone (焼いてあげた, 買ってあげる)."""

_JA_FOR = re.compile(r"のために|の分|のぶん")
"""For someone (妻のために, 息子の分)."""


def _made_for(body: str) -> bool:
    """Whether a Japanese sentence tells of making or getting something for someone: a
    :data:`_JA_PROVIDE` stem then てあげ (息子にケーキ焼いてあげた), or のために then the stem
    (妻のためにカレーを作った); each looked for once, so a long text costs its length."""
    stem = _JA_STEM.search(body)
    if stem is not None and _JA_GIVEN.search(body, stem.end()):
        return True
    given = _JA_FOR.search(body)
    return given is not None and _JA_STEM.search(body, given.end()) is not None


def proposes(text: str) -> bool:
    """Whether ``text`` proposes or announces an action that involves the partner or someone
    else, or a plan: "Let's get sushi tonight!", "shall we go out?", "I'm baking you
    cookies", "I made a curry for my wife", 今夜パクチー鍋にしよう, 飲み会でビール頼んどくね,
    激辛カレー作るね; not "I'm making dinner", "Let's see", 今日カレー作った. A long text is
    read within :data:`.text.READ_CHARS`."""
    norm = unicodedata.normalize("NFKC", within(text, READ_CHARS)).translate(APOSTROPHES)
    for sentence in sentences(norm):
        for clause in _CLAUSE.split(sentence):  # "Honey, I'm making you pancakes"
            cased = _WORDS.findall(clause)
            words = [w.lower() for w in cased]
            while words and words[0] in _OPENERS:
                words, cased = words[1:], cased[1:]
            if _suggests(words) or _offers(words, cased):
                return True
        body = _JA_TRAILING.sub("", sentence)
        if any(r.search(body) for r in (_JA_VOLITIONAL, _JA_PREPARE, _JA_OFFER)):
            return True
        if _made_for(body):
            return True
    return False


def _suggests(words: Sequence[str]) -> bool:
    """Whether a clause's words (chat openers left out) suggest doing something together:
    "let's get sushi", "lets go", "shall we order in"; not "let's see", "let's hope so",
    "he lets me drive", "let us know"."""
    if words[:2] == ["shall", "we"]:
        return len(words) > 2
    at = next((i for i, w in enumerate(words) if w in _SUGGEST and (w == "let's" or i == 0)), -1)
    if at < 0:
        return False
    rest = [w for w in words[at + 1 :] if w not in _HEDGES]
    return bool(rest) and rest[0] not in _NOT_PLANS


def _offers(words: Sequence[str], cased: Sequence[str]) -> bool:
    """Whether a clause offers or tells of making or getting something for someone: a
    :data:`_PROVIDE` verb after only :data:`_LEADS` words, then a receiver ("I'm baking you
    cookies", "gonna grab you a latte", "I'm planning to make you dinner") or "for" someone
    ("for my wife", "for everyone", "for the kids", "for Emma"); not "I'm making dinner",
    "I've been cooking for hours", "she made you a cake"."""
    for at, verb in enumerate(words):
        end = at + 1 + _REACH
        if verb in _PROVIDE and _receives(words[at + 1 : end], cased[at + 1 : end]):
            return True
        if verb not in _LEADS:
            return False
    return False


def _receives(after: Sequence[str], cased: Sequence[str]) -> bool:
    """Whether the words after an offer's verb name who receives it: a :data:`_RECEIVERS`
    word with the thing after it ("you cookies"; not "I got you", which agrees), or "for"
    and a person, a group or a name ("for my son", "for the kids", "for Emma"; not "for
    hours", "for Friday")."""
    if len(after) > 1 and after[0] in _RECEIVERS:
        return True
    for i, w in enumerate(after[:-1]):
        if w != "for":
            continue
        who = after[i + 1]
        if who in _RECEIVERS or who in _GROUPS or who in _POSSESSIVES:
            return True
        if who == "the" and i + 2 < len(after) and after[i + 2] in _GROUPS:
            return True
        if cased[i + 1][:1].isupper() and who not in _NOT_NAMES:
            return True
    return False
