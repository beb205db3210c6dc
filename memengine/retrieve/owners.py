"""Owners: who a sentence tells about and whose thing a phrase is, in English and Japanese.

A later change (:mod:`.changes`) changes no thing each side names another owner of (:func:`owners`:
"my son's dentist appointment" and "my daughter's next eye exam" change no "my dentist
appointment" or "my eye exam", 父の誕生日会 no 母の誕生日会, "My wife used to love jazz" no "I
love jazz"); an owner names a person surely ("a doctor's appointment", "today's", "your
appointment" and 彼女の name none), and what one switched to is theirs ("I switched to
McDonald's breakfast", "Ken switched to McDonald's breakfast"). A person word is one word for
each person ("Mom" and "my mother", ママ and 母); whom a sentence tells about is the person it
opens with (:func:`doer`: "My coworker Jen quit…": "jen"; 佐藤さんが…: 佐藤; the speaker for
a Japanese sentence that names no one), and two owners are two people only surely
(:func:`other_owner`: "my kid" may be "my son", "his" may be "Dad's").
"""

from __future__ import annotations

import re

from ..lazy_re import lazy_compile
from ..text import APOSTROPHES, ENGLISH_STOPWORDS, fold, sentences

_EN_OWNERS = {"my": "i", "our": "i", "his": "he", "her": "she", "their": "they"}
"""The owner a possessive word names: "my" and "our" the speaker, "his", "her" and "their"
someone a name may be; not "your" (a clinic's text to the user says "your appointment")."""
_PRONOUNS = frozenset({"he", "she", "they"})
"""The owners a possessive pronoun names: maybe a name's ("his" may be "Dad's")."""


def _people(words: str, key: str) -> dict[str, str]:
    """Each of ``words`` (a person word and its other forms) as ``key`` ("mum" is "mother")."""
    return dict.fromkeys(words.split(), key)


_PEOPLE = {
    **_people("mom moms mum mums mother mothers mommy mummy mama", "mother"),
    **_people("dad dads father fathers daddy papa", "father"),
    **_people("parent parents", "parent"),
    **_people("son sons", "son"),
    **_people("daughter daughters", "daughter"),
    **_people("kid kids child children baby babies", "child"),
    **_people("wife wives", "wife"),
    **_people("husband husbands", "husband"),
    **_people("partner partners", "partner"),
    **_people("boyfriend boyfriends", "boyfriend"),
    **_people("girlfriend girlfriends", "girlfriend"),
    **_people("sister sisters", "sister"),
    **_people("brother brothers", "brother"),
    **_people("friend friends", "friend"),
    **_people("boss bosses", "boss"),
    **_people("grandma grandmas grandmother grandmothers granny", "grandmother"),
    **_people("grandpa grandpas grandfather grandfathers", "grandfather"),
    **_people("aunt aunts auntie", "aunt"),
    **_people("uncle uncles", "uncle"),
    **_people("cousin cousins", "cousin"),
    **_people("colleague colleagues coworker coworkers", "colleague"),
    **_people("neighbour neighbours neighbor neighbors", "neighbour"),
}
"""The words whose "X's" surely names a person's thing ("my daughter's eye exam", "Mom's
surgery" and "my mother's surgery" alike, "the kids' party"), as one word for each person."""
PERSON_WORDS = frozenset(_PEOPLE)
"""The English words for someone of one's family or circle, in all their forms ("mom",
"grandpa", "coworkers")."""
_DESCRIPTIVE = frozenset(
    """today tomorrow yesterday tonight week weekend month year morning afternoon evening
    night day spring summer fall autumn winter monday tuesday wednesday thursday friday
    saturday sunday january february march april may june july august september october
    november december valentine valentines christmas easter halloween thanksgiving doctor
    doctors dentist dentists vet vets everyone everybody someone somebody anyone nobody one
    it that this what there here let he she who where how when why""".split()
)
"""What an "X's" written with a capital names when it names no one: a time, a holiday, a
place one goes to ("Today's dentist appointment", "Valentine's dinner", "Doctor's
appointment moved"), or "X is" ("It's", "That's", "Let's")."""
_DETERMINERS = frozenset("a an the this that these those next last every my our your".split())
"""What a name does not follow ("the Hilton's pool", "this Monday's meeting")."""
_GAP_STOPS = ENGLISH_STOPWORDS - {"own", "other", "same"}
"""The words an owner is never read across ("the", "to", "about": "I told her about the eye
exam" names no owner of it); a modifier is ("my daughter's next eye exam", "my own car")."""
_TOKEN = lazy_compile(r"[a-z0-9]+(?:'[a-z]+)*(?:(?<=s)'(?![a-z0-9]))?")
"""A word of a folded text, with its "'s" ("son's", "o'brien's") or its "'" after an s
("Chris'")."""
_CAPITAL = lazy_compile(r"\b(\w+(?:'\w+)*)'")
"""A word before an apostrophe, to tell a name written with a capital ("Ken's")."""

JA_KIN_WORDS = tuple(
    "うちの子 息子 娘 祖母 祖父 叔母 伯母 叔父 伯父 母 父 夫 妻 旦那 主人 嫁 彼氏 友達 兄 姉 弟 妹"
    " 上司 同僚 子供 子ども 子 パパ ママ".split()
)
"""The Japanese words of a person 「Xの」 names an owner by (not 彼女, she or a girlfriend)."""
_JA_KIN = "|".join(JA_KIN_WORDS)
JA_OTHERS = "|".join(
    [w for w in JA_KIN_WORDS if w not in ("うちの子", "子")]
    + ["彼女", "彼", "友だち", "先輩", "後輩"]
)
"""The Japanese words of a person other than the speaker as a sentence's subject, as a
pattern (妹が, 彼女は, 先輩も): :data:`JA_KIN_WORDS` but the bare 子, and she, he and the
seniors no owner rule reads (:mod:`.quote_changes`, :mod:`.proposal`)."""
_JA_PEOPLE = {kin: kin for kin in JA_KIN_WORDS} | {
    "ママ": "母",
    "パパ": "父",
    "旦那": "夫",
    "主人": "夫",
    "嫁": "妻",
    "子供": "子",
    "子ども": "子",
    "うちの子": "子",
    "伯母": "叔母",
    "伯父": "叔父",
}
"""Each Japanese person word as one word for each person (ママ is 母, 旦那 and 主人 are 夫)."""
_KIN = frozenset(_PEOPLE.values()) | frozenset(_JA_PEOPLE.values())
"""The owners that are person words (a name may be one of them: "Yuki's" and "my wife's")."""
_KIN_OF = {
    "child": {"son", "daughter"},
    "parent": {"mother", "father"},
    "partner": {"wife", "husband", "boyfriend", "girlfriend"},
    "子": {"息子", "娘"},
}
"""The person words another may name ("my kid's recital" may be "my son's recital")."""
_JA_PERSON = (
    r"(?:(?P<me>私|僕|俺|うち)"
    rf"|(?<![\u4e00-\u9fff々\u30a1-\u30ff])お?(?P<kin>{_JA_KIN})(?:さん|ちゃん|くん)?"
    r"|(?<![\u4e00-\u9fff々])(?P<he>彼)"
    r"|(?P<name>(?<![\u4e00-\u9fff々])[\u4e00-\u9fff々]{0,3}[\u4e00-\u9fff々](?<![者屋店院医局所館社課科])"
    r"|(?<![\u30a1-\u30ff])[\u30a1-\u30ff]{1,8}"
    r"|(?<![a-z])[a-z]{1,12})(?:さん|ちゃん|くん|君|様))"
)
"""A Japanese person (私, 娘, お母さん, 彼, 田中さん; not 彼女, she or a girlfriend)."""
_JA_WHO = f"{_JA_PERSON}の"
"""A Japanese owner and its の (私の, 娘の, お母さんの, 彼の, 田中さんの; not 彼女の)."""
JA_TOPIC = f"{_JA_PERSON}(?:は|も|って|が)"
"""A Japanese person as what a sentence tells about (妻は, 私も, 田中さんって)."""
_JA_GAP = r"(?:[^\Wのがはを]{1,6}の|[\u4e00-\u9fff々\u30a1-\u30ffー]{1,4})"
"""A word between a Japanese owner and its piece (次の, 来月の, 定期; not across が, は, を)."""
_JA_OWNERS = tuple(lazy_compile(f"{_JA_WHO}{_JA_GAP}{{{gap}}}$") for gap in range(3))
"""Whose a Japanese piece is, by the 「Xの」 just before it, or one or two words before it
(娘の次の健診, 娘の定期健診): the speaker's (私の, 僕の, うちの), a person's (息子の, お母さんの,
母の and ママの alike, 上司の, うちの子の), "his" (彼の) or a name's (田中さんの, ミキちゃんの)."""
_JA_OWNER_CHARS = 40
"""How far before a Japanese piece its owner is looked for (the work stays linear)."""


_TAKEN = lazy_compile(
    r"(?:\b(?P<det>a|an|the|this|that|my|our|your|his|her|their|its) )?"
    r"\b(?P<who>[a-z]+)(?:'ve|'d|'s| has| have| had)? (?:(?:\w+ly|just|also|already|now|then) )?"
    r"(?:switched|changed|moved)(?: over| back)? (?:to|from) (?:my |our |his |her |their )?$"
)
"""Someone taking another's thing as their own or leaving it, before its owner ("I switched
to McDonald's breakfast", "we finally moved to Mum's old house", "I switched from my
sister's phone plan": the speaker's breakfast, house, plan; "Ken switched to McDonald's
breakfast": Ken's, "My son switched to…": the son's; not "I moved my son's appointment
to…"): whom :func:`_taker` reads."""


def owners(text: str, subject: str, shared: set[str]) -> set[str]:
    """Who ``text`` says ``subject`` (a shared phrase) belongs to, at each place it holds it
    with an owner just before it or before the run of shared words it begins, or one or two
    words before that ("my dentist appointment": the speaker's; "my son's dentist
    appointment": "son"; "my daughter's next eye exam": "daughter"; 息子の歯医者の予約: 息子;
    the nearest one, 私の妹の誕生日会: 妹), as "i" for the speaker, also where the speaker
    switched to another's (:data:`_TAKEN`: "I switched to McDonald's breakfast"); empty when
    no place names an owner ("the dentist", "a doctor's appointment", "your appointment")."""
    folded = fold(text)
    found: set[str] = set()
    if not subject.isascii():  # (the nearest 「Xの」; 田中さんの… shares 「さんの送別会」)
        heads = [0] + [i + 1 for i, char in enumerate(subject) if char == "の"]
        at = folded.find(subject)
        while at >= 0:
            for end in (at + head for head in reversed(heads)):
                start = max(0, end - _JA_OWNER_CHARS)
                owner = next(
                    (m for p in _JA_OWNERS if (m := p.search(folded, start, end)) is not None),
                    None,
                )
                if owner is not None:
                    found.add(ja_owner(owner))
                    break
            at = folded.find(subject, at + 1)
        return found
    caps = {fold(m[1]) for m in _CAPITAL.finditer(text.translate(APOSTROPHES)) if m[1][0].isupper()}
    tokens = list(_TOKEN.finditer(folded))
    words = [token.group() for token in tokens]
    for k, word in enumerate(words):
        if _bare(word) != subject:
            continue
        while k > 0 and _joined(folded, tokens[k - 1], tokens[k]):
            prev = words[k - 1]
            if _genitive(prev) or prev not in shared:  # (the run ends at an owner)
                break
            k -= 1
        for i in range(k - 1, max(k - 4, -1), -1):  # (just before, or one or two words on)
            if not _joined(folded, tokens[i], tokens[i + 1]):
                break
            who = _owner(words, i, caps)
            if who is not None:
                taken = _TAKEN.search(folded, max(0, tokens[i].start() - 60), tokens[i].start())
                found.add((_taker(taken, text) if taken else None) or who)
                break
            if words[i] in _GAP_STOPS or _bare(words[i]) in _PEOPLE:
                break
    return found


def _taker(taken: re.Match[str], text: str) -> str | None:
    """Whose a thing switched or moved to is, by the subject of the verb (:data:`_TAKEN`)
    as :func:`doer` writes it: "i" for "I" and "we", "he" for "he", a person word's one word
    ("son" for "My son"), a name written with a capital in ``text`` ("Ken"); none for a thing
    after a determiner or a word that names no one ("The party moved to Mom's house", "It
    moved to Ken's place")."""
    word = taken["who"]
    if word in ("i", "we"):
        return "i"
    if word in _PRONOUNS or word in _PEOPLE:
        return _PEOPLE.get(word, word)
    if taken["det"] or not a_name(word):
        return None
    written = re.finditer(rf"\b{word}\b", text, re.IGNORECASE)
    return word if any(w.group()[0].isupper() for w in written) else None


def ja_owner(owner: re.Match[str]) -> str:
    """The owner a Japanese 「Xの」 names: "i" for the speaker, "he" for 彼, one word for each
    person (ママ is 母), or the name."""
    if owner["me"]:
        return "i"
    if owner["he"]:
        return "he"
    return _JA_PEOPLE[owner["kin"]] if owner["kin"] else owner["name"]


def _owner(words: list[str], i: int, caps: set[str]) -> str | None:
    """The owner ``words[i]`` names: "my" the speaker's, "his" his, "daughter's" a person
    word's, "Ken's" a name written with a capital's (not "Today's", "the Hilton's", nor
    "Mother's Day"); none for "the", "your", "doctor's" or "this week's"."""
    word = words[i]
    if word in _EN_OWNERS:
        return _EN_OWNERS[word]
    if not _genitive(word) or words[i + 1 : i + 2] == ["day"]:
        return None
    base = _bare(word)
    if base in _PEOPLE:
        return _PEOPLE[base]
    named = base in caps and base not in _DESCRIPTIVE
    return base if named and (i == 0 or words[i - 1] not in _DETERMINERS) else None


def _genitive(word: str) -> bool:
    """Whether a word of a folded text is an "X's" or an "X'" ("son's", "chris'")."""
    return word.endswith(("'s", "'"))


def _bare(word: str) -> str:
    """A word of a folded text without its "'s" or its "'" ("son's" is "son")."""
    return word.removesuffix("'s").removesuffix("'")


def _joined(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Whether two words of ``text`` stand next to each other, only spaces between."""
    return text[first.end() : second.start()].isspace()


def other_owner(one: str, other: str) -> bool:
    """Whether two owners are surely two people: the speaker differs from any other owner,
    "he" from "she", two names and two person words from each other ("mother" and "father";
    not "child" and "son", one may be the other); a pronoun may be a name's or a person
    word's ("his party" may be "Dad's party"), and a name a person word's ("Yuki's party" may
    be "my wife's party", 健ちゃんの健診 夫の健診), and one the speaker describes ("the guy I'm
    dating": :data:`_DESCRIBED`) is none of their person words ("my brother"), one would
    call them so."""
    if one == other:
        return False
    if "i" in (one, other):
        return True
    if one in _PRONOUNS or other in _PRONOUNS:
        return {one, other} == {"he", "she"}
    if one in _DESCRIBED or other in _DESCRIBED:  # ("the guy I'm dating" is no "my brother")
        return one in _KIN or other in _KIN
    if one in _KIN and other in _KIN:
        return other not in _KIN_OF.get(one, ()) and one not in _KIN_OF.get(other, ())
    return one not in _KIN and other not in _KIN


_PERSON_DOES = lazy_compile(
    r"\s+(?:work|live|love|like|hate|enjoy|play|drive|study|teach|smoke|eat|drink|date|cook"
    r"|run|swim|sing|go out with)\b",
    re.I,
)
"""What a person does, after "used to" ("ken used to love jazz", "ken used to live in Kyoto";
not "dinner used to be at 7", "netflix used to mail DVDs")."""
_A_DETERMINER = lazy_compile(r"\b(?:a|an|the|this|that|my|our|your|his|her|their|its)\W+$", re.I)
"""A determiner just before a word, which makes it a thing's ("the dog", "my phone")."""


def habit_owner(subject: str, before: str = "", after: str = "") -> str | None:
    """Whose habit "X used to …" tells, by its subject as written (``before`` and ``after``
    the words around "X used to"): "i" for "I" and "we", "she" for "she", a person word's one
    word ("wife" for "my wife", "mother" for "Mom"), a name written with a capital ("Ken"),
    or in lower case, as chat writes it, before what a person does ("ken used to love jazz";
    not "dinner used to be at 7", "the dog used to love walks"); none when it names no person
    ("It used to rain", "This used to be…", "You used to work at Acme": the one spoken to)."""
    word = subject.lower()
    if word in ("i", "we"):
        return "i"
    if word in _PRONOUNS or word in _PEOPLE:
        return _PEOPLE.get(word, word)
    if word in ENGLISH_STOPWORDS or word in _DESCRIPTIVE or not word.isalpha():
        return None
    if subject[0].isupper():
        return word
    lower_name = _PERSON_DOES.match(after) is not None and _A_DETERMINER.search(before) is None
    return word if lower_name else None


_PERSON_WORD = "|".join(sorted(_PEOPLE, key=len, reverse=True))
"""A person word, as a pattern ("mom", "coworker", "sisters")."""
_NAME = r"(?-i:[A-Z][^\W\d_]+)"
"""A word written with a capital: a name, when it names anyone ("Ken", "José")."""
_LEAD_IN = (
    r"(?:(?:so|and|but|well|oh|also|anyway|btw|today|yesterday|\w+ly|these days|nowadays"
    r"|the other day|to be honest|tbh|yeah|yes|no|ok|okay|ugh|man|wow|lol|haha"
    r"|(?:last|this) (?:week|month|year|night|morning)),? )*"
)
"""The words an English sentence may open with before whom it tells about: a sentence
adverb, a time, an interjection ("These days my son…", "Apparently, Ken…", "Honestly I…",
"Yeah, my wife…")."""
_ADVERB = r"\w{3,}(?:ally|ntly|ously|fully|tely|stly|dly|ily)\b"
"""A sentence adverb written with a capital, which is no name ("Finally", "Apparently",
"Honestly", "Luckily"; not "Emily", "Sally")."""
_PERSON_VERB = (
    r"(?:works|worked|lives|lived|loves|loved|likes|liked|hates|hated|enjoys|enjoyed|quits?"
    r"|moved|drives|drove|plays|played|studies|studied|teaches|taught|married|retired"
    r"|smokes|smoked|eats|ate|drinks|drank|turned|turns)"
)
"""What a person does, after a name ("Ken works", "Emma loves", "Jen turned 30"; not "Jazz
is", "Netflix raised", "Starbucks sold out", which name a thing as often)."""
_DOER = lazy_compile(
    rf"[^\w']*{_LEAD_IN}(?:(?P<me>i|we)\b|(?P<they>he|she|they)\b"
    rf"|(?:(?:my|our|his|her|their|the) (?:\w+ ){{0,2}}?)?(?:(?P<whose>\w+)(?:'s|(?<=s)') )?"
    rf"(?P<kin>{_PERSON_WORD})\b(?!')"
    rf"(?:,? (?P<called>{_NAME})\b(?!'))?"
    rf"|(?P<name>(?!{_ADVERB}){_NAME})(?: {_NAME})?(?:, [^,]{{1,40}},| from \w+(?: \w+)?)? "
    rf"(?:(?:\w+ly|just|still|never|also|always|finally) )?{_PERSON_VERB}\b)",
    re.IGNORECASE,
)
"""The person an English sentence opens with as its subject: "I" or "we", a pronoun, a
person word and the name after it ("My coworker Jen quit…", "my college friend…", "Mom
sold…"), another's person word ("Ken's wife quit…", "My sister's husband…": the wife, the
husband), or a name before what a person does ("Ken works…", "Emma Watson, my college
friend, lives…", "Emma Clarke from work moved…")."""
_JA_DOER = lazy_compile(f"(?:[^、。！？!?\\sはがをの]{{1,8}}?(?:は|、))??{JA_TOPIC}")
"""The person a Japanese sentence tells about, as its topic or subject, at its start or
after a time or a thing (妻は, 佐藤さんが, 最近は息子が, 昨日、兄が)."""
_MY_CLAUSE = lazy_compile(
    r"(?=([^\w']*))\1(?:[\w']+(?: [\w']+){0,2}, )?[^,;:.!?()\u2013\u2014]*?\b(?:i|we)\b",
    re.IGNORECASE,
)
"""An English sentence whose first clause (past a few words and a comma) holds "I" or "we",
whatever it opens with: the speaker's ("Jazz is what I love", "To be honest, I love jazz",
"Love jazz, I play it every day"; not "Jazz is her thing, I think"). What it opens with
before a word is taken whole, never given back (a lookahead's group, read again: Python
3.10 has no possessive ``*+``): the clause's own characters are most of those too (an
emoji, a quote mark), and a run of them with no "I" in it was read again from each of its
characters, a cost that grew with the square of its length; the clause found is the same,
as none can start inside the run when it does not start at its end."""
_DESCRIBED = frozenset("guy guys girl girls person man men woman women lady boy dude".split())
"""The words a person is described by with a clause of the speaker's ("the guy I'm
dating"): someone the speaker calls by no person word of theirs (:func:`other_owner`)."""
_DESCRIBED_BY_ME = lazy_compile(
    rf"[^\w']*{_LEAD_IN}(?:the|this|that|a|an|some) (?:\w+ )?"
    rf"(?P<who>{'|'.join(sorted(_DESCRIBED))}) (?:(?:that|who|whom) )?(?:i|we)\b",
    re.IGNORECASE,
)
"""An English sentence whose subject is a person the speaker describes by a clause of
their own ("The guy I'm dating works at Google", "the woman who I met…"): that person's,
not the speaker's (:data:`_MY_CLAUSE`)."""
_JA_TEXT = lazy_compile("[\u3041-\u30ff\u4e00-\u9fff]")
"""A kana or a kanji: a Japanese sentence, whose subject, when it names none, is the
speaker (ジャズにハマってて、毎日聴いてる)."""
_CALLED = lazy_compile(
    rf"\b(?:{_PERSON_WORD})\b,? ({_NAME})\b(?!')"
    rf"|\b({_NAME})(?: {_NAME})?, (?:my|our|a|an) (?:\w+ ){{0,2}}?(?:{_PERSON_WORD})\b",
    re.IGNORECASE,
)
"""A name a person word stands beside ("my friend Sarah", "coworker Jen", "Emma Watson, my
college friend")."""
_JA_CALLED = lazy_compile(
    "([\u4e00-\u9fff々\u30a1-\u30ffー]{1,6})(?<![者屋店院医局所館社課科])(?:さん|ちゃん|くん|君|様)"
)
"""A Japanese name before its honorific (田中さん, 結衣ちゃん; not 歯医者さん, ケーキ屋さん)."""
_HONORIFIC = lazy_compile("^お|(?:さん|ちゃん|くん|君|様)$")
"""The お and the honorific a Japanese person word or name may be written with (お母さん)."""


def doer(sentence: str) -> str | None:
    """Who ``sentence`` tells about, by the person it opens with as its subject: "i" for
    "I" and "we" (私, 僕), "she" for "she", a person word's one word ("mother" for "My mom"),
    the name a person word stands beside ("My coworker Jen": "jen"), a name before what a
    person does ("Ken works at Google": "ken"), 佐藤 for 佐藤さんが, 息子 for 最近は息子が;
    the speaker for a first clause that holds "I" ("Honestly, jazz is what I love":
    :data:`_MY_CLAUSE`) and a Japanese sentence that names no one (毎日ジャズを聴いてる);
    none for a thing ("Jazz is my favourite", "The Fit kept breaking down")."""
    if (ja := _JA_DOER.match(fold(sentence))) is not None:
        return ja_owner(ja)
    plain = sentence.translate(APOSTROPHES)
    m = _DOER.match(plain)
    if m is None and (described := _DESCRIBED_BY_ME.match(plain)) is not None:
        return described["who"].lower()
    if m is None:
        mine = _MY_CLAUSE.match(plain) is not None or _JA_TEXT.search(sentence) is not None
        return "i" if mine else None
    if m["me"]:
        return "i"
    if m["they"]:
        return m["they"].lower()
    if m["kin"]:
        called = (m["called"] or "").lower()
        return called if a_name(called) else _PEOPLE[m["kin"].lower()]
    name = m["name"].lower()
    return name if a_name(name) else None


PET_WORDS = frozenset(
    "dog dogs cat cats puppy pup kitten kitty pet bunny rabbit hamster bird parrot horse"
    " ferret guinea pig".split()
)
"""The English pet words: what a pet's name is told after ("my dog Max") and what a put
down is told of."""
JA_PET_WORDS = (
    "猫|ねこ|ネコ|犬|いぬ|イヌ|ワンコ|わんこ|愛犬|愛猫|ペット|ハムスター|うさぎ|ウサギ|インコ"
)
"""The Japanese pet words, as a regular expression's alternatives (犬のポチ, うちの猫のきなこ)."""

_PET_CALLED = lazy_compile(
    rf"\b(?:{'|'.join(sorted(PET_WORDS, key=len, reverse=True))}),? ({_NAME})\b"
    f"|(?:{JA_PET_WORDS})の?"
    "([\u30a1-\u30ffー]{2,8}|[\u4e00-\u9fff々]{1,3}(?=[はがもをの、]))",
    re.IGNORECASE,
)
"""A name a pet word stands before ("my dog Max", "our cat, Luna", 犬のポチ, うちの猫タマ)."""


def _pets(text: str) -> set[str]:
    """The names ``text`` calls pets by, folded (:data:`_PET_CALLED`: "max" of "my dog Max")."""
    return {fold(m[1] or m[2]) for m in _PET_CALLED.finditer(text.translate(APOSTROPHES))}


def _called(text: str) -> set[str]:
    """The names ``text`` calls people by a person word or an honorific, folded ("max" of
    "my coworker Max", マックス of マックスさん)."""
    found = {fold(m[1] or m[2]) for m in _CALLED.finditer(text.translate(APOSTROPHES))}
    return found | {m[1] for m in _JA_CALLED.finditer(fold(text))}


def same_name_two_beings(one: str, other: str) -> bool:
    """Whether a name ``one`` calls a pet (:data:`_PET_CALLED`) is called a person in
    ``other`` by a person word or an honorific (:data:`_CALLED`, :data:`_JA_CALLED`), or the
    other way: two namesakes ("My dog Max eats…" and "My coworker Max switched…", 犬のマックス
    and 同僚のマックスさん; not "I switched Max to…", the same dog)."""
    return bool(_pets(one) & _called(other) or _called(one) & _pets(other))


def possessor(sentence: str) -> str | None:
    """Whose person word the subject of an English ``sentence`` is, as :func:`doer` writes
    them ("Ken's wife quit Google": "ken"; "My sister's husband…": "sister"), if any: a
    person surely other than the subject."""
    m = _DOER.match(sentence.translate(APOSTROPHES))
    if m is None or not m["whose"]:
        return None
    whose = m["whose"].lower()
    return _PEOPLE.get(whose, whose)


def a_name(word: str) -> bool:
    """Whether a word written with a capital may be a name ("ken"; not "" nor "the",
    "today", "monday", "mom")."""
    return bool(word) and word not in ENGLISH_STOPWORDS | _DESCRIPTIVE and word not in _PEOPLE


def leads(words: str, subject: str) -> set[str]:
    """Who the sentences of ``words`` that hold ``subject`` (folded) tell about, by the
    person they open with (:func:`doer`: "I love jazz": "i"; "My wife loves jazz": "wife";
    "She plays tennis": "she"; "Ken works at Google": "ken"; 妻はジャズが好き: 妻)."""
    return {
        who
        for sentence in sentences(words)
        if subject in fold(sentence) and (who := doer(sentence)) is not None
    }


def mentioned(text: str) -> set[str]:
    """Everyone ``text`` may name, as :func:`doer` writes them: its words ("ken"), its
    person words ("mother" for "Mom's"), "i" for "I", "me", "we" or "us", and its Japanese
    persons (兄, 田中, "i" for 私)."""
    folded = fold(text)
    words = {_bare(token.group()) for token in _TOKEN.finditer(folded)}
    found = words | {_PEOPLE[w] for w in words if w in _PEOPLE}
    if words & {"i", "me", "we", "us", "i'm", "i've", "i'd", "i'll"}:
        found.add("i")
    return found | {ja_owner(m) for m in _JA_SOMEONE.finditer(folded)}


_JA_SOMEONE = lazy_compile(_JA_PERSON)
"""A Japanese person anywhere in a text (:data:`_JA_PERSON`)."""


def last_ja_person(text: str) -> str | None:
    """The Japanese person ``text`` names last, as :func:`ja_owner` writes it (結衣 of
    「昨日、結衣ちゃん」, "i" of 私は), if any: whom what follows it tells about."""
    found = list(_JA_SOMEONE.finditer(fold(text)))
    return ja_owner(found[-1]) if found else None


def same_person(one: str, other: str) -> bool:
    """Whether two people as :func:`doer` writes them are surely one: the same word ("i"
    and "i", "son" and "son", "jen" and "jen"), or person words one may be the other of
    ("child" and "son"); not a name and a person word, nor a pronoun ("he" may be anyone)."""
    if one == other:
        return True
    return one in _KIN and other in _KIN and not other_owner(one, other)


def people_named(text: str) -> set[str]:
    """The names and person words ``text`` names people by, folded: whom its sentences tell
    about (:func:`doer`), a name a person word stands beside (:data:`_CALLED`), and a
    Japanese name before its honorific (田中 of 田中さん)."""
    plain = text.translate(APOSTROPHES)
    found = {fold(m[1] or m[2]) for m in _CALLED.finditer(plain)}
    found |= {who for sentence in sentences(plain) if (who := doer(sentence)) is not None}
    return found | {m[1] for m in _JA_CALLED.finditer(fold(text))}


def a_person(subject: str, named: set[str]) -> bool:
    """Whether a shared phrase names a person (a person word, "emma" when a text tells
    about Emma, 息子, お母さん, 田中さん) rather than something about them."""
    folded = fold(subject)
    core = _HONORIFIC.sub("", folded)
    return (
        folded in _PEOPLE
        or folded in named
        or core in _JA_PEOPLE
        or core in named
        or (core != folded and folded.endswith(("さん", "ちゃん", "くん", "君", "様")))
    )
