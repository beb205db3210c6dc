"""The words the offline answer judge reads in a text: names, titles, numbers, word forms.

A Latin script's names are its capitalised words inside a sentence and its quoted titles, and
an English word counts in its inflections (:func:`stems`: peanut, peanuts); Japanese words are
runs of kanji or katakana, a name one an honorific marks (翔太くん, はるとくん), and a CJK run's
bigrams written overlapping are one word (トヨタ). :mod:`.answer_match` judges with them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..lazy_re import lazy_compile
from ..retrieve.owners import JA_KIN_WORDS
from ..text import CJK_CHARACTER, query_terms

__all__ = [
    "HIRAGANA",
    "HIRAGANA_LETTER",
    "KATAKANA_LETTER",
    "a_number",
    "answer_term_groups",
    "capital_words",
    "distinct_words",
    "japanese_words",
    "kana_answer_word",
    "names_in",
    "stems",
    "titled_names",
    "word_forms",
    "word_starts",
    "words_in",
    "writes_kana_word",
]

HIRAGANA = lazy_compile(r"[\u3040-\u309f]")


_QUOTED = lazy_compile(
    r"『([^』\n]{1,80})』|「([^」\n]{1,80})」|【([^】\n]{1,80})】|《([^》\n]{1,80})》"
    r"|“([^”\n]{1,80})”|‘([^’\n]{1,80}?)’(?!\w)|\"([^\"\n]{1,80})\""
    r"|(?<![\w'])'([^'\n]{1,80}?)'(?!\w)"
)
"""A quoted title or name: 'Educated', “Dune”, 『コンビニ人間』, 「三体」 (not the apostrophe of
"She's" nor "don't", which stand between two letters)."""
_CAPITALISED = lazy_compile(r"(?<![\w'’])[^\W\d_][^\W_]*(?:['’][^\W_]+)*")
_SENTENCE_START = lazy_compile(r"(?:^|[.!?。！？…\n])[\s\"'“‘(\[]*$")
_TITLE = lazy_compile(r"(?<![\w.])(?:mr|mrs|ms|mx|dr|prof|st|mt)\.\s*$", re.IGNORECASE)
"""A title's abbreviation, whose period ends no sentence: "Dr. Lee", "Mt. Fuji"."""


def titled_names(text: str) -> list[tuple[str, set[str]]]:
    """The quoted titles and names of ``text``, each as written and with its content terms
    (hiragana pairs aside): 'The Remains of the Day' holds "remains" and "day"."""
    out = []
    for m in _QUOTED.finditer(text):
        span = next(g for g in m.groups() if g is not None).strip()
        terms = {t for t in query_terms(span) if not HIRAGANA.search(t)}
        if terms:
            out.append((span, terms))
    return out


def names_in(text: str) -> set[str]:
    """The terms of ``text``'s words written with a capital inside a sentence ("Liam",
    "Westover", the "Lee" of "Dr. Lee"; not the "Sounds" that begins one): a name, as a
    Latin script writes it. A Latin word with a capital next to kana or kanji is one
    wherever it stands (EmmaとLiamとNoahだよ): Japanese writes no other capitals."""
    found: set[str] = set()
    latin = CJK_CHARACTER.sub(" ", text)  # (as long as ``text``: EmmaとLiam is two words)
    for m in _CAPITALISED.finditer(latin):
        word, start, end = m.group(), m.start(), m.end()
        if not word[0].isupper():
            continue
        beside_cjk = any(CJK_CHARACTER.match(text, i) for i in (start - 1, end) if i >= 0)
        begins = _SENTENCE_START.search(latin, max(0, start - 20), start)
        if begins is None or beside_cjk or _TITLE.search(latin, max(0, start - 8), start):
            found.update(query_terms(word))
    return found


def a_number(term: str) -> bool:
    """Whether ``term`` is a number of three characters or more ("1995", "12800", "3pm"):
    one or two digits are a date's, an age's, a count's in too many texts."""
    return len(term) >= 3 and any(ch.isdigit() for ch in term)


_JA_WORD = lazy_compile(
    "[\u30a1-\u30fa\u30fc-\u30ff\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003134f]+"
)
"""A run of kanji or katakana (々, ー): a Japanese word, the particles and kana endings
around it left off (「息子の翔太は」 holds 息子 and 翔太)."""
KATAKANA_LETTER = lazy_compile("[\u30a1-\u30fa\u30fc-\u30ff]")
_KANA_HONORIFIC = lazy_compile("くん|ちゃん|さん|さま")
_KANJI_HONORIFIC = lazy_compile("(?:先輩|先生|様|君)$")
"""The honorifics that mark a name after it (翔太くん, 結衣ちゃん, 田中さん) or ending its run
(翔太君, 山田先輩); 先生 alone is a word."""
_POLITE_PREFIX = "おご"
"""The prefixes of a polite word, not a name (お母さん, ご苦労様, お客様)."""

_TIME_WORDS = (
    "今日 明日 昨日 今朝 今夜 今晩 昨夜 昨晩 毎日 毎朝 毎晩 毎週 今週 先週 来週 今月 先月 来月 "
    "今年 去年 来年 先日 週末 最近 今度 今回 午前 午後 明後日 一昨日".split()
)
_TIME_WORD = lazy_compile("|".join(sorted(_TIME_WORDS, key=len, reverse=True)))
"""A time word that Japanese writes joined to the name after it (今日翔太くんが来た,
昨日翔太と公園に行った): the run is two words when two characters or more follow it (not
明日香, 今日子: names)."""
_EVERYDAY_JA = frozenset(
    [
        *_TIME_WORDS,
        *"時間 自分 友達 家族 仕事 会社 学校 用事 予定 本当 大丈夫 元気 大変 一緒 全部 普通 結構 "
        "多分 絶対 気分 問題 場合 感じ 連絡 相談 準備 確認".split(),
    ]
)
"""Kanji words of everyday talk: never a name, though an honorific follows one (友達さん)."""
_PEOPLE_JA = frozenset(JA_KIN_WORDS) | frozenset(
    "孫 婿 家内 奥 彼 彼女 両親 親 爺 婆 甥 姪 赤 坊 嬢 皆 神 仏 王 姫 殿 客 隣 相手 友人 親友 "
    "先生 先輩 後輩 部下 店員 大家 選手 歌手 助手 運転手 監督 警察 看護師 医者 "
    "本屋 花屋 魚屋 肉屋 八百屋 床屋 酒屋 パン屋 ママ友 コーチ シェフ スタッフ "
    "ばあ じい かあ とう にい ねえ あか みな".split()
)
"""Kin, role and trade words that an honorific follows as it follows a name (息子さん,
店員さん, 皆さん, 神様, the ばあ of ばあちゃん): a word for someone, not a name of them (the
kin words of :data:`.retrieve.owners.JA_KIN_WORDS` and more)."""
_PEOPLE_ENDING = frozenset("員師者官医家長")
"""The last characters of a word for someone's role or trade (店員, 看護師, 歯医者,
警察官, 獣医, 大家, 部長): a word of two characters or more that ends in one is no name (a
surname or a given name seldom does)."""


def _a_name(word: str) -> bool:
    """Whether ``word``, which an honorific marks, can be a name: not a word for someone
    (:data:`_PEOPLE_JA`, :data:`_PEOPLE_ENDING`: 店員さん, 部長さん) nor of everyday talk
    (:data:`_EVERYDAY_JA`)."""
    return not (
        word in _PEOPLE_JA or word in _EVERYDAY_JA or (len(word) > 1 and word[-1] in _PEOPLE_ENDING)
    )


def japanese_words(text: str) -> list[tuple[str, bool]]:
    """The Japanese words of ``text``, folded (:data:`_JA_WORD`), each with whether it is
    written as a name: an honorific after it or ending its run makes it one (翔太くん, 翔太君:
    翔太, named), unless a polite prefix stands before it (お母さん, ご苦労様), it is a word
    for someone (店員さん, 皆さん: :func:`_a_name`) or one kanji before a kanji honorific
    (大先輩, 神様), nor where the honorific is none (薬ちゃんと飲んで, 朝さんぽ:
    :func:`_ends_a_name`). A time word that begins a run is a word of its own (今日翔太くん:
    今日 and 翔太, :data:`_TIME_WORD`); a name in hiragana is one too (:func:`_kana_names`)."""
    out = []
    for m in _JA_WORD.finditer(text):
        word, start = m.group(), m.start()
        lead = _TIME_WORD.match(word)
        if lead is not None and len(word) - lead.end() >= 2:
            out.append((lead.group(), False))
            word, start = word[lead.end() :], start + lead.end()
        polite = start > 0 and text[start - 1] in _POLITE_PREFIX
        title = _KANJI_HONORIFIC.search(word)
        if title is not None and title.start() > 0:
            stem = word[: title.start()]
            out.append((stem, not polite and len(stem) > 1 and _a_name(stem)))
        else:
            mark = _KANA_HONORIFIC.match(text, m.end())
            honoured = mark is not None and _ends_a_name(text, mark.end(), adverb=True)
            out.append((word, not polite and honoured and _a_name(word)))
    return out + [(name, True) for name in _kana_names(text)]


HIRAGANA_LETTER = lazy_compile("[\u3041-\u3096\u309d\u309e]")
_CHILD_HONORIFIC = lazy_compile("くん|ちゃん")
_NAME_JOINS = "のとや"
"""The particles a hiragana name follows a word by (息子のはるとくん, はるとくんとさくらちゃん)."""
_AFTER_NAME = "とのはがにもやへをねよだでっ"
"""The hiragana that may follow a name's honorific (さくらちゃんと, はるとくんは, ゆいちゃんだよ,
翔太くんって); another makes it no honorific (ちゃんこ, くんせい, さんぽ, さまざま)."""
_JA_LETTERS = _JA_WORD.pattern[:-1]
_NAME_AHEAD = lazy_compile(
    f"{_JA_LETTERS}+(?:くん|ちゃん|さん|さま)|{_JA_LETTERS}*(?:先輩|先生|様|君)(?!{_JA_LETTERS})"
    "|[\u3041-\u3096]{2,4}(?:くん|ちゃん)"
)
"""A name an honorific marks, where one begins (結衣ちゃん, 山田先輩, さくらちゃん)."""


def _ends_a_name(text: str, end: int, adverb: bool) -> bool:
    """Whether the kana honorific that ends at ``end`` of ``text`` (folded) ends a name: no
    kana go on from it (ちゃんこ, くんせい, さんぽ, さまざま), a particle or an ending may
    (:data:`_AFTER_NAME`); and where the word before it may be an adverb's (``adverb``), its
    ちゃんと is the adverb (薬ちゃんと飲んでね, 宿題ちゃんとやった) unless a name follows
    (結衣ちゃんと蓮くん, ゆいちゃんとさくらちゃん)."""
    after = text[end : end + 1]
    if adverb and after == "と" and text.endswith("ちゃん", 0, end):
        return _NAME_AHEAD.match(text, end + 1) is not None
    return not (after and HIRAGANA_LETTER.match(after) and after not in _AFTER_NAME)


def _kana_names(text: str) -> list[str]:
    """The names ``text`` (folded) writes in hiragana: two to four before くん or ちゃん
    (はるとくん, さくらちゃん), at the start of a sentence or after の, と or や that follow a
    word or another name (息子のはるとくん, はるとくんとさくらちゃん). Not a polite word or one
    for someone (おばあちゃん, あかちゃん), nor an adverb's ちゃんと (もっとちゃんと), nor
    where the kana go on (ちゃんこ: :func:`_ends_a_name`): a name and its end both written,
    not guessed."""
    names = []
    stop = 0
    for m in _CHILD_HONORIFIC.finditer(text):
        i = m.start()
        while i > stop and HIRAGANA_LETTER.match(text[i - 1]):
            i -= 1
        stretch = text[i : m.start()]
        joined = i > 0 and (i == stop or _JA_WORD.match(text[i - 1]) is not None)
        stop = m.end()
        if joined:  # (after a word or a name: a particle joins them)
            if not stretch.startswith(tuple(_NAME_JOINS)):
                continue
            stretch = stretch[1:]
        if not _ends_a_name(text, m.end(), adverb=not joined):  # (もっとちゃんと: an adverb)
            continue
        if 2 <= len(stretch) <= 4 and stretch[0] not in _POLITE_PREFIX and _a_name(stretch):
            names.append(stretch)
    return names


_KANA_ANSWER = lazy_compile(
    "([\u3041-\u3096\u309d\u309eー]{2,16}?)(?:だよね|だよ|だね|です|かな|よ|ね)?[\\s!?.。、！？…〜~]*"
)
"""An answer that is one word in hiragana and an ending (きなこだよ, もちです！, はるとかな):
the shortest word that leaves an ending alone, so そうだね is そう and だね; no name is
longer than sixteen kana (a pasted run of one kana is no word)."""
_KANA_WORD_END = lazy_compile(f"[{_AFTER_NAME}]|くん|ちゃん|さん|[^\\w]|$")
"""What may follow a hiragana word a message writes whole: a particle, an honorific, a mark
or the end (きなこって, もちは, ぽちちゃん, きなこ！), not more kana (もちろん) nor a kanji
(いい天気: an adjective's, no thing named)."""


def kana_answer_word(text: str) -> str | None:
    """The one hiragana word of an answer (``text``, folded) that writes nothing beside it
    but an ending or a mark (きなこ of きなこだよ！), or None (そっか、雨なんだね; 猫のきなこだよ)."""
    m = _KANA_ANSWER.fullmatch(text.strip())
    return None if m is None else m.group(1)


def writes_kana_word(word: str, text: str) -> bool:
    """Whether ``text`` (folded) writes the hiragana ``word`` whole: no kana before it but a
    particle after a kanji or katakana (名前はきなこ), and only a particle, an honorific or a
    mark after it (:data:`_KANA_WORD_END`: うちの犬、もちって, not もちろん). Hiragana writes no
    spaces: the pairs of a word are in many others (the もち of もちろん, もちつき)."""
    for m in re.finditer(re.escape(word), text):
        before = text[max(0, m.start() - 2) : m.start()]
        lead = not before or not HIRAGANA_LETTER.match(before[-1])
        particle = len(before) == 2 and before[1] in _NAME_JOINS + "はがをもに"
        if (lead or (particle and not HIRAGANA_LETTER.match(before[0]))) and (
            _KANA_WORD_END.match(text, m.end()) is not None
        ):
            return True
    return False


def distinct_words(words: Sequence[tuple[str, bool]]) -> dict[str, bool]:
    """Each of the Japanese ``words`` (:func:`japanese_words`) once, in their order, named
    when it is named anywhere: a long paste that writes one name a thousand times is
    compared once."""
    out: dict[str, bool] = {}
    for word, named in words:
        out[word] = out.get(word, False) or named
    return out


_ENDINGS = ("s", "es", "ed", "ing")
"""The endings of an English word's inflections (peanut, peanuts; arrive, arrives,
arriving; parties, party: :func:`stems`)."""
_TO_Y = ("ies", "ied", "ic")
"""The endings that stand for a "y" (parties: party; studied: study; allergic: allergy)."""
_NOT_Y = lazy_compile("[fs]ic$")
"""An "-ic" that is no "-y" word's (terrific is not terrify, specific not specify, classic
not classy)."""
_PLURAL = lazy_compile("[^aeiousy]s$")
"""A name's plain plural ("the Smiths"; not the end of Louis, Frances or Marcus)."""


def stems(term: str, name: bool = False) -> set[str]:
    """What ``term``, an English word, shares with another form of it: itself, its letters
    before an inflection's ending (:data:`_ENDINGS`; five letters or more, with the "e" an
    "-ing" or "-ed" drops: "peanuts" and "peanut" hold "peanut", "arriving" and "arrive"
    "arrive", not the "hat" of "hated" and "hates"), and its "y" form (:data:`_TO_Y`:
    "allergic", "allergy"; not "terrific", :data:`_NOT_Y`). A ``name`` (written with a
    capital) has no other form than its plain plural: "Simone" is not "Simon", "Louise" not
    "Louis", "Frances" not "France". Nothing for another script's word or a number: they
    are matched as written."""
    if not (term.isascii() and term.isalpha()):
        return set()
    found = {term}
    if name:
        if _PLURAL.search(term) and len(term) > 5:
            found.add(term[:-1])
        return found
    for ending in _ENDINGS:
        if term.endswith(ending) and len(term) - len(ending) >= 5:
            found.add(term[: -len(ending)])
            if ending in ("ed", "ing"):  # (arriving, arrived: arrive)
                found.add(term[: -len(ending)] + "e")
    for ending in _TO_Y:
        if term.endswith(ending) and len(term) - len(ending) >= 4 and not _NOT_Y.search(term):
            found.add(term[: -len(ending)] + "y")
    return found


def capital_words(text: str) -> set[str]:
    """The terms of the English words ``text`` writes as names (:func:`names_in`: "Simone" of
    "Say hi to Simone", not the "Terrific" that begins "Terrific!") and nowhere in lower
    case: matched in no other form than a plural (:func:`stems`)."""
    lower = {
        t
        for m in _CAPITALISED.finditer(text)
        if m.group().isascii() and m.group()[0].islower()
        for t in query_terms(m.group())
    }
    return {t for t in names_in(text) if t.isascii()} - lower


def word_forms(terms: Iterable[str], names: set[str]) -> set[str]:
    """The forms of the English ``terms`` (:func:`stems`), those of ``names`` as a name's."""
    return {stem for t in terms for stem in stems(t, t in names)}


def words_in(terms: set[str], text: str) -> list[str]:
    """The distinct words ``terms`` (of :func:`~memengine.text.query_terms`) make in
    ``text`` (folded), each as one of its terms: a Latin term is a word; of a CJK run's, a
    single character is none (it is inside a bigram: 仕事 gives 仕, 事 and 仕事, one word)
    and bigrams written overlapping in ``text`` are one (東京駅 gives 東京 and 京駅)."""
    words = sorted(t for t in terms if not CJK_CHARACTER.search(t))
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    return words + sorted(group[0] for group in _gram_groups(grams, text))


def _gram_groups(grams: set[str], text: str) -> list[list[str]]:
    """The CJK bigrams ``grams`` grouped by the words they make in ``text`` (folded): those
    written overlapping are one word (東京駅: 東京 and 京駅), each group its bigrams in the
    order ``text`` first writes them. One pass over ``text``: a long paste of kanji costs
    its length, not its square."""
    parent = {g: g for g in grams}

    def root(gram: str) -> str:
        while parent[gram] != gram:
            parent[gram] = parent[parent[gram]]
            gram = parent[gram]
        return gram

    first: dict[str, int] = {}
    for i in range(len(text) - 1):
        here = text[i : i + 2]
        if here not in grams:
            continue
        first.setdefault(here, i)
        after = text[i + 1 : i + 3]
        if after in grams:
            parent[root(here)] = root(after)
    groups: dict[str, list[str]] = {}
    for gram in grams:
        groups.setdefault(root(gram), []).append(gram)
    return [sorted(g, key=lambda t: (first.get(t, len(text)), t)) for g in groups.values()]


def answer_term_groups(terms: Sequence[str], text: str) -> list[frozenset[str]]:
    """The words of an answer's ``terms`` (no hiragana pairs) as its ``text`` (folded)
    writes them, each as the terms that make it: a Latin term is a word, a CJK run's bigrams
    written overlapping are one (トヨタ: トヨ and ヨタ, not five terms with ト, ヨ and タ), and
    a character inside none of them is a word alone (the 働 of 働いてる)."""
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    inside = {ch for gram in grams for ch in gram}
    words = [
        frozenset({t})
        for t in terms
        if not CJK_CHARACTER.search(t) or (t not in grams and t not in inside)
    ]
    return words + [frozenset(group) for group in _gram_groups(grams, text)]


def word_starts(terms: Sequence[str], text: str) -> dict[frozenset[str], str]:
    """The bigram that begins each word of bigrams ``terms`` make in ``text`` (folded), as
    :func:`answer_term_groups` groups them: 結婚 of 結婚式, トヨ of トヨタ."""
    grams = {t for t in terms if CJK_CHARACTER.search(t) and len(t) > 1}
    return {frozenset(group): group[0] for group in _gram_groups(grams, text)}
