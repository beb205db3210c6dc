"""Whether a message proposes or announces an action, offline and cheap (English and Japanese).

A companion that is told "Let's get sushi tonight!", "I'm baking you peanut butter
cookies!" or 激辛カレー作るね is asked nothing, yet needs the memory the plan touches
(a favourite food, an allergy, 辛いの無理) before it replies. :func:`proposes` tells such
a message from plain news ("I'm making dinner", "I took my medicine for my headache",
今日カレー作った), from a wish to drop a topic ("Let's not talk about it", この話はやめよう),
from someone else's words ("She said let's go", "Let's Dance by David Bowie", 母が作るね)
and from small talk ("Let's see", 今日暑いね, それ嘘やろう), so the should-inject rule can
read it apart (:func:`.inject.should_inject`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..lazy_re import lazy_compile
from ..text import APOSTROPHES, CHAT_WORDS, READ_CHARS, sentences, within
from .owners import JA_OTHERS

__all__ = ["proposes"]

_WORDS = lazy_compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")

_CLAUSE = lazy_compile(r"[,;:]|\s[-–—]\s")
"""What parts an English sentence into clauses, each read on its own ("So excited, let's
go camping")."""

_OPENERS = CHAT_WORDS | frozenset(
    "ok okay oh hey hi so well and but also alright anyway yay ooh wait right".split()
)
"""Chat words that may open a proposal without changing it ("ok let's get sushi")."""

_SUGGEST = frozenset({"let's", "lets"})
"""Words that open a suggestion to do something together ("let's get sushi"; "lets" only
opening a sentence: "he lets me drive" is no suggestion)."""

_LETS = lazy_compile(r"\blet'?s\b", re.IGNORECASE)

_PAIRED_QUOTES = (("“", "”"), ("«", "»"), ("「", "」"), ("『", "』"))
"""Quotation marks that open and close apart; a "let's" after an opening one not yet closed
is someone's words or a title (“Let's go,” he shouted)."""

_OPENING = lazy_compile(r"(?<![A-Za-z0-9])'(?=[A-Za-z]|$)")
"""An apostrophe that may open a quotation: at a word's start before a letter ("the song
goes 'let's dance'"); not the one of "90's", "'90s" nor ":'(", nor "let's" itself."""

_CLOSING = lazy_compile(r"(?<=[A-Za-z0-9.,!?])'(?![A-Za-z])")
"""An apostrophe that may close a quotation ("…your red shoes'"); without one after it, an
opening one is an elision ("'cause I'm hungry, let's eat")."""

_TOLD = frozenset(
    "said says told asked shouted yelled screamed wrote texted replied sang sings".split()
)
"""Words of telling right before which a "let's" is reported, not suggested ("She said
let's get sushi", "My boss said, let's circle back", "She told me let's go"); an earlier
clause is the speaker's own news ("Emma said it's amazing, let's try it", "I told you,
let's get sushi")."""

_NAMING = frozenset("called titled named".split())
"""Words of naming right before which a "let's" is a title ("a song called let's go"); not
after a comma, where the word is news ("Mom called, let's get tacos")."""

_TOLD_TAIL = lazy_compile(
    r"(?<![A-Za-z'])([A-Za-z]+)(?:\s+((?i:me|us|him|her|them|you|everyone)))?"
    r"([\s\"“”«»「『':,]*)$"
)
"""The last word before a "let's", who is told ("She told me let's go") and the marks
between, read on the last :data:`_TAIL` characters before it."""

_TAIL = 60
"""How many characters before a "let's" are read for a word of telling."""

_NOT_PLANS = (
    ("see",),
    ("say",),
    ("hope",),
    ("face",),
    ("be",),
    ("not",),
    ("wait",),
    ("forget",),
    ("move", "on"),
    ("change", "the", "subject"),
    ("change", "subject"),
    ("change", "the", "topic"),
    ("change", "topic"),
    ("leave", "it"),
    ("call", "it"),
)
"""What after "let's" (or "shall we", "we should") plans nothing ("let's see", "let's say
it's Monday", "let's hope so", "let's face it", "let's be honest"), or drops the topic
instead ("let's not talk about it", "let's wait and see", "let's forget it", "let's move
on", "let's change the subject", "let's leave it there", "let's call it a night")."""

_DROPS = frozenset("not wait forget move change leave call stop drop".split())
"""First words of a topic dropped (:data:`_NOT_PLANS`, :data:`_HALTS`) that an "and" and a
plan may follow ("let's stop and get coffee", "let's forget about work and go out"; not
"let's wait and see")."""

_HALTS = frozenset({"stop", "drop"})
"""Verbs after "let's" that drop a topic ("let's stop", "let's drop it") unless a visit
follows (:data:`_VISITS`: "let's stop by the bakery", "let's drop in on Mom")."""

_VISITS = frozenset("by in at for off over".split())

_HEDGES = frozenset("just maybe all both probably really totally definitely also".split())
"""Words between "let's" and its verb ("let's just order pizza")."""

_MAYBE = frozenset("maybe perhaps i think guess honestly really seriously actually".split())
"""Words that may come before "we should" in a suggestion ("I think we should get
sushi")."""

_TOGETHER = frozenset(
    """get grab go try visit meet watch cook bake make order eat drink book hit check
    catch head hang play plan throw host take travel rent buy celebrate invite share
    explore hike camp swim dance sing""".split()
)
"""Verbs of doing something together that "we should" suggests with an object or a place
after them ("we should get sushi", "we should try that place"); a bare or other verb tells
advice or a verdict ("we should talk", "I think we should break up", "we should have
left")."""

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

_ESCORTS = {
    **dict.fromkeys(("take", "takes", "taking"), frozenset({"out", "to"})),
    **dict.fromkeys(("treat", "treats", "treating"), frozenset({"to"})),
    **dict.fromkeys(("pick", "picks", "picking"), frozenset({"up"})),
}
"""Verbs that take the partner somewhere, with the word after "you" that tells it ("I'm
taking you out", "I'll take you to that ramen place", "let me treat you to lunch", "I'll
pick you up at 7"; not "I took you to the vet", told in the past, nor "I'm treating you
like a friend")."""

_PAST = frozenset(
    """made baked cooked got ordered bought brought grabbed booked picked prepared fixed
    poured brewed fetched reserved treated took packed served threw planned whipped""".split()
)
"""The :data:`_PROVIDE` verbs that tell what was done (news unless it names who received
it: "I made you a cake", "I made a curry for my wife")."""

_LEADS = frozenset(
    """i i'm im i'll i've ive i'd we we're we'll we've am will gonna going to just about
    thinking of planning might may could should would want wanna gotta have has had already
    also finally totally so then now probably definitely really actually secretly quickly
    let me us decided trying try tonight today tomorrow later soon first""".split()
)
"""What may come before a :data:`_PROVIDE` verb in an offer: the speaker as subject, words
of intent and a time ("I'm gonna", "thinking of", "let me", "Tonight I'm making you
lasagna"; a chat that drops its "I", "Gonna grab you a latte", too). "She made you a cake"
is news of someone else."""

_PARTNERS = frozenset("you u ya us y'all yall".split())
"""Receivers that name the partner, who may receive even what is already made ("I made
you a cake", "I booked us a table")."""

_OTHERS = frozenset("him her them".split())
"""Receivers that name someone else; as often a plain object ("I took him to the vet", "I
made her laugh") or, "her", an owner ("I got her flowers"), so a thing opened by "a",
"some"… must follow, and not in the past ("I got him a present but he hated it")."""

_PEOPLE = frozenset(
    """mom moms mum mums mother mothers mommy mummy mama dad dads father fathers daddy papa
    parent parents son sons daughter daughters kid kids child children baby babies wife
    husband partner boyfriend girlfriend fiance fiancee sister sisters brother brothers
    friend friends bestie boss coworker coworkers colleague colleagues grandma grandmother
    granny nana grandpa grandfather grandparents aunt auntie uncle cousin cousins niece
    nephew neighbour neighbours neighbor neighbors roommate roommates guest guests family
    team everyone everybody all guys girls boys gang folks party""".split()
)
"""Words of a person or a group who can receive something ("for my son", "for the kids",
"for everyone", "my wife a curry"); not a thing, a time or a place ("for my headache",
"for my career", "for my trip")."""

_OWNERS = frozenset("my our your his her their the".split())

_GIFT_OPENERS = frozenset(
    """a an the some this that these those my our your his her their one two three another
    more lots""".split()
)
"""Words that open the thing given to a receiver other than the partner ("I made my wife
a curry", "I'm getting Emma some flowers"): a bare word after "him" or "her" is as often
no thing ("I got her pregnant", "I got them yesterday")."""

_NO_GIFTS = frozenset(
    """to up down out off in on at for with from like into about back over around away
    home through along by as than yesterday today tonight tomorrow now later again too once
    twice before ago earlier already it me myself yourself and but or so because if when
    wrong right be do go come stay leave see believe understand feel think wait cry laugh
    smile worry wonder look sound want need happy sad angry mad upset nervous jealous proud
    sick crazy uncomfortable pregnant hungry tired covered worried scared excited confused
    annoyed bored embarrassed stressed surprised""".split()
)
"""What after "you" tells that nothing is given: a place or a time ("I took you to the
vet", "I got you yesterday"), a pronoun, or what a person is made to do or feel ("I made
you cry", "I made you nervous", "I got you covered"); a word in -ly does too ("I'm taking
you seriously"). A word in -ed may be food ("I'm making you fried rice")."""

_REACH = 8
"""How many words after an offer's verb may name who receives it ("ordering a cheese pizza
for everyone": the fifth)."""

_NOT_NAMES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december christmas easter halloween
    thanksgiving new i""".split()
)
"""Capitalised words after "for" that name a time, not a person ("for Friday")."""

_JA_TRAILING = lazy_compile(
    r"[\s.!。！…~〜♪☆★♡♥❤ーぁぃぅぇぉw笑\ufe0f\u200d\U0001f000-\U0001faff\u2600-\u27bf]+"
)
"""What may follow a Japanese sentence's last word: punctuation, a long vowel, a laugh,
emoji (matched on the reversed sentence, so a long run costs its length:
:func:`_without_trailing`)."""

_KANJI = "\u3400-\u9fff\uf900-\ufaff"

_STEMS = f"{_KANJI}いきしちにひみりえけせてねへめれぎじびぜでべ"
"""What a volitional's よう or a getting-ready とこう follows: a kanji or a verb stem's last
kana (食べよう, 予約しとこう, 買っとこう; not もっとこう, ちょっとこう)."""

_ENDING = r"(?:か(?:な|なあ|ね)?|よね?|ね|ぜ|ぞ|や|って)?$"
"""The particles a Japanese volitional may end with (焼こうかな, 飲もうよ, 行こうぜ)."""

_JA_DOINGS = (
    r"(?:会|宿題|勉強|練習|復習|予習|掃除|運動|作業|試合|準備|花火|麻雀|将棋|鍋|焼肉|続き"
    r"|今度|明日|明後日|週末|来週|今夜|今晩|あとで|後で)"
)
"""What before やろう makes it the verb やる: an activity or an event (飲み会やろう,
誕生日会やろう, 宿題やろう, 勉強やろう) or a time (明日やろう, 今度やろう); after another noun it
is the Kansai copula's guess (それ嘘やろう, また雨やろう, 問題やろう)."""

_JA_VOLITIONAL = lazy_compile(
    rf"(?:(?<!ない)(?<!どうし)(?<=[{_STEMS}])よう"
    rf"|(?<=[{_STEMS}]と)こう|(?<=[{_STEMS}]っと)こう|(?<=[{_KANJI}])こう"
    rf"|(?<=[{_KANJI}])(?<!寝)[ごぼと]う"
    rf"|(?<=[{_KANJI}し])(?<![日夜朝晩年月週時分今])もう"
    rf"|(?<=[{_KANJI}ばらわ])ろう|(?<![^\sをにでもとはがー、,\u30a1-\u30faA-Za-z])(?<!バカ)やろう"
    rf"|{_JA_DOINGS}やろう"
    rf"|(?<=[{_KANJI}かがさただなまらわ])おう|ましょう?"
    rf"|(?<=[話探返渡貸消直治回押干残試許隠越戻流移写離示壊])そう|(?<=[{_KANJI}][こごとば])そう"
    rf"|(?<!どうし)(?<=[{_KANJI}しべめけ])[よこもろ]っ(?=か)|(?<!どう)しよ|(?<=[べめ])(?<!ため)よ"
    rf"|(?<=[{_KANJI}])(?<![一二三四五六七八九十百千何])こ)"
    rf"{_ENDING}"
)
"""A sentence ending in a verb's volitional form, "let's" or "I think I'll": 行こう, 今夜パクチー
鍋にしよう, 焼こうかな, 飲もうよ, 食べましょうか, カラオケ行きましょ, 行こっか, ラーメン食べよ,
一緒に探そう, よし、やろう; not だろう, でしょう, おはよう, ありがとう, 夢のよう, どうしよう,
美味しそう, 寝ぼう, ケーキ一こ, もっとこう, 明日もう, 君のためよ, nor the copula and the insult of やろう
(それ嘘やろう, ばかやろう, このやろう: やろう only after a particle, a comma, a katakana or Latin
word, an activity or a time, ゲームやろう, BBQやろう, 飲み会やろう, 明日やろう: :data:`_JA_DOINGS`)."""

_JA_PREPARE = lazy_compile(
    r"(?:[っいしきちにみりえけせてねべめれぎじ]とく|んどく|[てで]おく"
    r"|[っいしきちにみりえけせてねべめれぎじ]ときます|んどきます|[てで]おきます)"
    r"(?:ね|よ|わ|から|ぞ)?$"
)
"""A sentence announcing that something is got ready: 頼んどくね, 買っとく, 予約しときます,
用意しておくね."""

_JA_NOTED = lazy_compile(
    r"(?:考え|覚え|メモし?|メモっ|気をつけ|気を付け|検討し|確認し|調べ|やっ)[てで]?"
    r"(?:おく|とく|おきます|ときます)(?:ね|よ|わ|から|ぞ)?$"
)
"""A sentence that says a thing is noted or will be seen to, no plan with anyone: 考えておくね,
覚えておくね, メモしとくね, 確認しとく, 分かった、やっとく."""

_JA_REFRAIN = lazy_compile(
    r"(?:やめ|止め|辞め|遠慮し|パスし|控え)"
    r"(?:よう|よ|ましょう?|よっ|とこう|とこ|ておこう|とく|ときます|ておく|ておきます)"
    r"(?:か(?:な|なあ|ね)?|よね?|ね|ぜ|ぞ|や|って|わ|から)?$"
)
"""A sentence that drops a topic or declines instead of planning: この話はやめよう,
やめましょう, やめとこう, やめとく, 遠慮しとく, 今日はやめときます."""

_JA_PROVIDE = (
    r"(?:(?<![操制製])作|つく|焼|買|(?<![信依])頼|たの|炊|煮|揚|淹|奢|おご|持って|連れて|差し入れ"
    r"|(?:用意|準備|注文|予約|ご馳走|ごちそう|料理))"
)
"""Japanese stems of making, getting or arranging something for someone."""

_JA_STEM = lazy_compile(_JA_PROVIDE)

_JA_OFFER = lazy_compile(
    rf"{_JA_PROVIDE}(?:る|く|う|む|げる|れる|する|いく|ってく|っていく|ってくる)(?:ね|よ|から|わ|ぞ)$"
    rf"|{_JA_PROVIDE}(?:り|き|い|み|げ|れ|し|いき|ってき)?ます(?:ね|よ)?$"
)
"""A sentence offering to make or get something: 激辛カレー作るね, 注文しますね,
ケーキ買ってくるよ; not 今日カレー作った, news of one's own meal."""

_JA_CHOICE = lazy_compile(
    r"(?<!こと)(?<!まで)(?<!休み)(?<!終わり)(?<!終り)(?<!おしまい)(?<!お開き)"
    r"にする(?:ね|よ|わ)$"
)
"""A sentence announcing a choice (今夜はすき焼きにするね), read as a plan only when a meal or
a time is its topic (:data:`_JA_MEAL_TOPIC`; 参考にするね is thanks, not a plan); not a
decision to do something nor an end or a rest chosen (寝ることにするね, 今日はここまでにするね,
これで終わりにするね, 休みにするね)."""

_JA_MEAL_TOPIC = lazy_compile(
    rf"(?<![{_KANJI}])(?:今日|明日|今夜|今晩|今朝|(?:今|来)?週末|誕生日|[月火水木金土日]曜日?"
    r"|[朝昼晩夕夜]?(?:ご|御)?飯|[朝昼夕夜]食|お?昼|夜|晩|朝|ランチ|ディナー|おやつ|デザート)は"
)
"""A meal or a time as a sentence's topic, a whole word (今夜は, 夕飯は, 明日のお昼は,
日曜日は, 誕生日は; a listed word, not any word that ends in 日, 夜 or 食)."""

_JA_OTHER_SUBJECT = lazy_compile(f"(?:{JA_OTHERS}|さん|ちゃん|くん|君)(?:が|は|も)")
"""Someone else as the subject of an offer's clause: 母が作るね, 妻がケーキ焼くよ, 彼は買って
くるよ tell what another does (not 妻は辛いの苦手だから甘口カレー作るね, whose last clause
is the speaker's)."""

_JA_CLAUSES = lazy_compile(r"[、,]|から|ので|けど|けれど")
"""What ends a Japanese clause before the next (妻は辛いの苦手だから | 甘口カレー作るね)."""

_JA_GIVEN = lazy_compile(r"[てで]あげ")
"""A verb done for someone (焼いてあげた, 買ってあげる)."""

_JA_FOR = lazy_compile(r"のために|の分|のぶん")
"""For someone (妻のために, 息子の分)."""


def _without_trailing(sentence: str) -> str:
    """``sentence`` without the punctuation, laughs and emoji after its last word
    (:data:`_JA_TRAILING`): the class is matched at the start of the reversed sentence, as a
    ``…+$`` search would try it from every character of a long run ("😂" * 50,000 cost 28 s)."""
    run = _JA_TRAILING.match(sentence[::-1])
    return sentence[: len(sentence) - run.end()] if run else sentence


def _made_for(body: str) -> bool:
    """Whether a Japanese sentence tells of making or getting something for someone: a
    :data:`_JA_PROVIDE` stem then てあげ (息子にケーキ焼いてあげた), or のために then the stem
    (妻のためにカレーを作った); each looked for once, so a long text costs its length."""
    stem = _JA_STEM.search(body)
    if stem is not None and _JA_GIVEN.search(body, stem.end()):
        return True
    given = _JA_FOR.search(body)
    return given is not None and _JA_STEM.search(body, given.end()) is not None


def _japanese(body: str) -> bool:
    """Whether a sentence (its trailing marks left out) ends in a Japanese plan: a volitional
    (行こう, 話そう), getting something ready (頼んどくね), an offer (作るね), a choice of a meal
    (今夜はすき焼きにするね) or what was made for someone (焼いてあげた); not a topic dropped or a
    thing declined (やめよう, 遠慮しとく), nor another's offer in its last clause (母が作るね)."""
    if _JA_REFRAIN.search(body):
        return False
    if _JA_VOLITIONAL.search(body):
        return True
    if _JA_NOTED.search(body):
        return False
    if _JA_PREPARE.search(body) or _JA_OFFER.search(body):
        return not _JA_OTHER_SUBJECT.search(_JA_CLAUSES.split(body)[-1])
    if _JA_CHOICE.search(body) and _JA_MEAL_TOPIC.search(body):
        return True
    return _made_for(body)


def proposes(text: str) -> bool:
    """Whether ``text`` proposes or announces an action that involves the partner or someone
    else, or a plan: "Let's get sushi tonight!", "shall we go out?", "We should get sushi",
    "I'm baking you cookies", "I made a curry for my wife", 今夜パクチー鍋にしよう,
    飲み会でビール頼んどくね, 激辛カレー作るね; not "I'm making dinner", "Let's see", "Let's not
    talk about it", "I took my medicine for my headache", 今日カレー作った, やめとく. A long text
    is read within :data:`.text.READ_CHARS`."""
    norm = unicodedata.normalize("NFKC", within(text, READ_CHARS)).translate(APOSTROPHES)
    parts = sentences(norm)
    for i, sentence in enumerate(parts):
        lets = _LETS.search(sentence)
        told = False
        if lets is not None:  # a quotation may close in the next sentence: "'Let's go!' he said"
            after = sentence[lets.end() :] + (parts[i + 1][:1] if i + 1 < len(parts) else "")
            told = _reported(sentence[: lets.start()], after)
        for clause in _CLAUSE.split(sentence):  # "Honey, I'm making you pancakes"
            cased = _WORDS.findall(clause)
            words = [w.lower() for w in cased]
            while words and words[0] in _OPENERS:
                words, cased = words[1:], cased[1:]
            if (not told and _suggests(words, cased)) or _offers(words, cased):
                return True
        if _japanese(_without_trailing(sentence)):
            return True
    return False


def _reported(before: str, after: str) -> bool:
    """Whether what comes before a sentence's "let's" makes it someone's words or a title: a
    quotation opened and not yet closed (:func:`_quoted`), or a word of telling or naming
    right before it (:data:`_TOLD`, :data:`_NAMING`: "She said let's go", "My boss said,
    let's circle back"; not "Emma said it's amazing, let's try it", "Mom called, let's get
    tacos"). ``after`` is what follows the "let's", where a quotation may close."""
    if _quoted(before, after):
        return True
    tail = _TOLD_TAIL.search(before[-_TAIL:])
    if tail is None:
        return False
    word, told, gap = tail.group(1).lower(), (tail.group(2) or "").lower(), tail.group(3)
    if told:  # "She told me let's go", not "I told you, let's get sushi"
        return word in _TOLD and "," not in gap
    if word in _NAMING:
        return "," not in gap
    return word in _TOLD


def _quoted(before: str, after: str) -> bool:
    """Whether a quotation is open where ``before`` ends: an odd count of straight double
    quotes, an opening mark of :data:`_PAIRED_QUOTES` not yet closed, or an apostrophe that
    opens a word (:data:`_OPENING`) with a closing one after it and not before the "let's"
    ("the song goes 'let's dance, put on your red shoes'"; not "the 90's vibe, let's go",
    "'cause I'm hungry, let's eat")."""
    if before.count('"') % 2:
        return True
    if any(before.rfind(o) > before.rfind(c) for o, c in _PAIRED_QUOTES):
        return True
    opened = max((m.end() for m in _OPENING.finditer(before)), default=-1)  # the last one
    if opened < 0 or _CLOSING.search(before, opened):
        return False
    return _CLOSING.search(after) is not None


def _titled(word: str) -> bool:
    """Whether ``word`` is written as a title's or a name's word ("Dance", "Emma"; not
    "dance", "GO", "ChatGPT" nor "I")."""
    return word[:1].isupper() and word[1:].islower()


def _plans(rest: Sequence[str], *, then: bool = True) -> bool:
    """Whether the words after "let's", "shall we" or "we should" plan something: a verb not
    in :data:`_NOT_PLANS` ("get sushi"; not "see", "not talk about it", "move on") nor a
    topic halted ("stop", "drop it"; but "stop by the bakery"); a topic dropped ``then`` a
    plan after "and" plans ("stop and get coffee"; not "wait and see")."""
    words = [w for w in rest if w not in _HEDGES]
    if not words:
        return False
    if words[0] in _HALTS and len(words) > 1 and words[1] in _VISITS:
        return True
    if words[0] not in _HALTS and not any(
        tuple(words[: len(phrase)]) == phrase for phrase in _NOT_PLANS
    ):
        return True
    if not then or words[0] not in _DROPS or "and" not in words:
        return False
    return _plans(words[words.index("and") + 1 :], then=False)


def _suggests(words: Sequence[str], cased: Sequence[str]) -> bool:
    """Whether a clause's words (chat openers left out) suggest doing something together:
    "let's get sushi", "lets go", "shall we order in", "I think we should get sushi"; not
    "let's see", "let's not", "he lets me drive", "let us know", "we should have left", nor
    a title ("Let's Dance by David Bowie")."""
    if words[:2] == ["shall", "we"]:
        return _plans(words[2:])
    lead = 0
    while lead < len(words) and words[lead] in _MAYBE:
        lead += 1
    if words[lead : lead + 2] == ["we", "should"]:
        rest = [w for w in words[lead + 2 :] if w not in _HEDGES]
        return len(rest) > 1 and rest[0] in _TOGETHER
    at = next((i for i, w in enumerate(words) if w in _SUGGEST and (w == "let's" or i == 0)), -1)
    if at < 0 or _title(words, cased, at):
        return False
    return _plans(words[at + 1 :])


def _title(words: Sequence[str], cased: Sequence[str], at: int) -> bool:
    """Whether the "let's" at ``at`` opens a title: a capitalised word after it, and "Let's"
    capitalised inside the clause ("We watched Let's Dance"), a second capitalised word
    ("Let's Get It On") or "by" and a name ("Let's Dance by David Bowie"); one capitalised
    verb is a chat's ("Let's Skype tonight", "Let's Uber there", "Let's Go!")."""
    if at + 1 >= len(cased) or not _titled(cased[at + 1]):
        return False
    if at > 0 and cased[at][:1].isupper():
        return True
    if at + 2 < len(cased) and _named(cased[at + 2]):
        return True
    return any(w == "by" and _named(cased[i + 1]) for i, w in enumerate(words[at + 2 : -1], at + 2))


_NO_OUTING = frozenset({"court", "task", "on"})
"""Words after "take you to" or "pick you up" that make no outing ("I'm taking you to
court", "take you to task", "I'll pick you up on that")."""


def _named(word: str) -> bool:
    """Whether ``word`` is written as a title's or a name's word and names no time
    (:data:`_NOT_NAMES`: "Emma", "Get"; not "Friday")."""
    return _titled(word) and word.lower() not in _NOT_NAMES


def _offers(words: Sequence[str], cased: Sequence[str]) -> bool:
    """Whether a clause offers or tells of making or getting something for someone: a
    :data:`_PROVIDE` verb after only :data:`_LEADS` words, then a receiver ("I'm baking you
    cookies", "gonna grab you a latte", "I made Emma a bracelet") or "for" someone ("for my
    wife", "for everyone", "for the kids", "for Emma"); not "I'm making dinner", "I've been
    cooking for hours", "she made you a cake", "I took him to the vet"."""
    for at, verb in enumerate(words):
        escort = _ESCORTS.get(verb, frozenset())
        if (
            words[at + 1 : at + 2] == ["you"]
            and escort.intersection(words[at + 2 : at + 3])
            and not _NO_OUTING.intersection(words[at + 3 : at + 4])
        ):
            return True  # "I'll take you to that ramen place", "I'll pick you up at 7"
        end = at + 1 + _REACH
        if verb in _PROVIDE and _receives(
            words[at + 1 : end], cased[at + 1 : end], past=verb in _PAST
        ):
            return True
        if verb not in _LEADS:  # "planning" leads too: "I'm planning to make you dinner"
            return False
    return False


def _receives(after: Sequence[str], cased: Sequence[str], *, past: bool) -> bool:
    """Whether the words after an offer's verb name who receives it: the partner with the
    thing after it ("you cookies"; not "I got you", "I made you cry"), someone else with a
    thing that opens with "a", "some"… ("my wife a curry", "Emma a bracelet", "him a coffee"
    unless ``past``: "I got him a present" is news), or "for" and a person ("for you", "for
    my son", "for the kids", "for Emma" unless ``past``: "I booked a flight for Tokyo" names
    a place; not "for my headache", "for hours", "for Friday")."""
    if not after:
        return False
    given = _receiver_end(after, cased, past=past)
    if given and _gift(after[given:], partner=after[0] in _PARTNERS):
        return True
    for i, w in enumerate(after[:-1]):
        if w != "for":
            continue
        who = after[i + 1]
        if who in _PARTNERS or who in _OTHERS or who in _PEOPLE:
            return True
        if who in _OWNERS and _PEOPLE.intersection(after[i + 2 : i + 4]):
            return True  # "for my son", "for my little sister", "for the kids"
        if not past and _titled(cased[i + 1]) and who not in _NOT_NAMES:
            return True
    return False


def _receiver_end(after: Sequence[str], cased: Sequence[str], *, past: bool) -> int:
    """Where a receiver right after an offer's verb ends (0 without one): "you", "him" (not
    ``past``), "my wife", "my sister Emma", "Emma"."""
    who = after[0]
    if who in _PARTNERS:
        return 1
    if who in _OTHERS:
        return 0 if past else 1
    if who in _OWNERS:
        person = next((i for i in (1, 2) if i < len(after) and after[i] in _PEOPLE), 0)
        name = cased[person + 1] if person and person + 1 < len(after) else ""
        if _titled(name) and name.lower() not in _NOT_NAMES:
            return person + 2  # "my sister Emma"
        return person + 1 if person else 0
    return 1 if _titled(cased[0]) and who not in _NOT_NAMES else 0


def _gift(thing: Sequence[str], *, partner: bool) -> bool:
    """Whether the words after a receiver name a thing given: for the partner anything but
    :data:`_NO_GIFTS` and words in -ly ("you cookies", "you a latte"; not "you cry",
    "you covered"), for someone else a thing opened by :data:`_GIFT_OPENERS` ("Emma a
    bracelet"; not "Max to the park")."""
    if not thing:
        return False
    first = thing[0]
    if first in _GIFT_OPENERS:
        return True
    return partner and first not in _NO_GIFTS and not first.endswith("ly")
