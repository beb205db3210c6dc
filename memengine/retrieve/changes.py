"""Later changes: of the results a turn packs, a newer one that says the subject of an
older one changed comes before it.

A fact is often told once and changed later ("my dentist appointment is on the 12th" …
weeks on, "the dentist moved my appointment to the 19th instead"). When both are packed,
the question's words ("when is my dentist appointment?") usually rank the first telling
first, and the reply model reads the old fact before the new one. A packed result is a
*later change* of another packed result when it occurred later, has the same speaker (the
user, for exchanges), says near a change word (:data:`CHANGE`: "switched", "moved … to",
"pushed … to", "no longer", "not … any more", "I used to", "my wife used to", "quit",
"sold", "… now" ending its clause, "went up", "dropped to $999", "turned 7", 変えた, やめた,
引っ越した, 延期, 中止, 今は, 前は…だった, 6歳になった, 飲まないことにした …; not negated, not a
question, not a plan or a maybe: "I won't quit", "should I switch", "I might switch",
"right now", 変えようかな) something it shares with the older one
(:func:`~memengine.text.shared_phrases`: a name, a thing, 「スペイン語」, also in the sentence
before when a pronoun, its object, stands for it: "… I can't afford it anymore", not "It
stopped raining"; not a speaker's name, nor a number or a counter alone, "$1,200", 3万円,
nor a thing each names another owner of: "my son's dentist appointment" and "my daughter's
next eye exam" change no "my dentist appointment" or "my eye exam", 父の誕生日会 no
母の誕生日会, "My wife used to love jazz" no "I love jazz"; an owner names a person surely,
"a doctor's appointment", "today's", "your appointment" and 彼女の name none, and what one
switched to is theirs: "I switched to McDonald's breakfast", "Ken switched to McDonald's
breakfast"; nor one two other people the sentences tell about share:
"My coworker Jen quit Google" changes no "Ken works at Google", 佐藤さんがトヨタ辞めた no
田中さんはトヨタで働いてる; a person alone is none: "My wife quit her job" changes no "My
wife loves spicy food", but an age told again is: "My son turned 7 today" changes "My son
is 6"), and their stored vectors are at least ``later_change_cosine`` close. It comes
before the closest such result (a chain of changes stands newest first where its
best-ranked member was), marked ``later_change`` (and ``changes``: that result's id), and
the pack's reason line names the day of the memory it follows. Nothing that would not be
packed is brought in (a message with a change word next to a shared name is as often no
change at all: "I almost quit Blue Bottle today", "My coworker Jen quit Blue Bottle"), so
the results packed stay the same, only their order; a message that names a time keeps the
order as ranked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import EmbeddingError
from ..models import Episode, EpisodeKind
from ..text import APOSTROPHES, ENGLISH_STOPWORDS, fold, sentences, shared_phrases
from .fastpath import Candidate

_DATE = (
    r"(?:\d+(?:st|nd|rd|th|am|pm)\b|\d{1,2}:\d\d|\d{1,2}/\d{1,2}|(?:next|later|tomorrow|tonight"
    r"|noon|midnight)\b|the (?:\d+(?:st|nd|rd|th)\b|weekend\b|end of (?:the )?(?:week|month|year)\b)"
    r"|(?:the |this |next )?(?:morning|afternoon|evening|fall|autumn|spring|summer|winter)\b"
    r"|after (?:christmas|new year|the holidays)\b"
    r"|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s|sday)?"
    r"|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\b)"
)
"""A time a date is moved to, as a whole word ("to April 20", "to the 19th", "to 5pm", "to
next week", "to the fall"; not "to 3 sets", "to 100 kg", nor the "dec" of "decide")."""
_LONG = r"(?:an?|one|two|three|four|five|six|a few|a couple of|\d+) (?:hour|day|week|month)s?\b"
"""How long a date is moved by ("a week", "two days", "an hour")."""
_PLANS = (
    r"(?:deadline|meeting|launch|wedding|date|appointment|surgery|operation|trip|flight"
    r"|release|exam|interview|party|move|start|event|class|game|match|session|shift|delivery"
    r"|visit|holiday|vacation|plans?|schedule|call|lesson|review|presentation|opening|show"
    r"|concert|due date|it|them)"
)
"""What a date belongs to, when "back" moves it ("pushed back the wedding", "pushed the
meeting back"; not "pushed back the chair", "pushed the stroller back")."""
_JA_PLANS = (
    "(?:締め?切り?|締切日|期限|納期|予定|日程|会議|打ち合わせ|ミーティング|発売日?|出発|手術|試験"
    "|テスト|結婚式|式|旅行|引っ越し|入院|退院|工事|配達|発表|公開|開始|出張|飲み会|デート|約束"
    "|面接|予約|授業|レッスン|ライブ|試合|イベント|誕生日会|パーティー?|検査|健診|診察)"
)
"""What a date belongs to in Japanese, when 延びた, 延ばした, ずれた or ずらした moves it or
なくなった calls it off (寿命が延びた, 線路が延びた, 体内時計がずれてる, テーブルが右にずれた,
お金がなくなった move nothing)."""

_WORD = r"(?:\w+(?:'s)? )"
"""A word between a change verb and its "to" ("moved my appointment to", "moved Mochi's
checkup to")."""
_ASIDE = r"(?:\w+(?:'s)?,(?: \w+(?: \w+)?,)? )"
"""The last word before a change verb's "to" with a comma after it, or an aside between
commas ("moved my appointment again, to March 26th", "changed the venue, again, to the
Hilton"); never a comma just after the verb, which ends a list's item ("Got up, changed,
drove to work", "I moved, stretched, went to bed"), nor a comma a next item follows
("changed clothes, drove to work")."""
_AMOUNT = r"[$¥£€]?\d[\d,.]*"
"""A number a value went up or down to or by ("to $1,950", "by 20", "to 999")."""
_AGE = (
    r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety)"
    r"(?=\s*(?:$|[^\w\s])|\s+(?:today|yesterday|last|this|on|in|years?)\b)"
)
"""An age one turned, ending its clause or before a time ("turned 7 today", "turned thirty
in May"; not "turned 90 degrees", "turned one of the rooms into an office")."""
_JA_DAY = "(?:[週日月曜時年朝夜末後]|明日|あした|夕方|明け方)(?:に|へ|まで)"
"""A time a Japanese plan is shifted to (来週に, 19日に, 金曜に, 午後に, 週末まで), before ずらした
(not a place: ソファを窓の方にずらした)."""

CHANGE = re.compile(
    r"\b(?:nowadays|these days|anymore|no longer|instead(?! of)"
    r"|any more(?=\s*(?:$|[^\w\s']|(?:and|but|so|now|because|since|though)\b))"
    r"|switch(?:ed|ing)?(?! up)"
    rf"|chang(?:ed|ing) {_WORD}{{0,3}}?{_ASIDE}?(?:to|from|my mind)"
    rf"|mov(?:ed|ing) {_WORD}{{0,3}}?{_ASIDE}?(?:to|into|out|house|away|back)"
    r"|quit|stopped|gave up|giving up|sold|replaced|broke up"
    r"|divorced|resched\w*|postponed|cancell?ed|from now on"
    r"|\w+ (?:(?:\w+ly|never|also|always|once|even|still|just) )?used to"
    rf"|(?:push|bump)(?:ed|ing) {_WORD}{{0,4}}?{_ASIDE}?(?:(?:back|up|forward|out),? )?"
    rf"(?:to|until|till) {_DATE}"
    rf"|(?:push|bump)(?:ed|ing) {_WORD}{{0,4}}?{_ASIDE}?(?:(?:back|up|forward|out),? )?"
    rf"(?:by )?{_LONG}"
    rf"|(?:push|bump)(?:ed|ing) back (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS}"
    rf"|(?:push|bump)(?:ed|ing) (?:the |our |my |his |her |their |its )?(?:\w+ )?{_PLANS} back"
    r"(?! (?:to|into|in|out|down|up|home|against|on|at|from)\b)"
    r"|got (?:push|bump)ed(?: back)?(?! (?:into|against|out|off|over|around|up|aside|away)\b)"
    r"|delayed"
    rf"|brought {_WORD}{{0,3}}?{_ASIDE}?forward"
    r"|now(?=\s*(?:$|[^\w\s']|(?:and|but|so|because|since|though|too)\b))"
    r"|(?:went|gone|goes|go) (?:up|down)"
    r"(?=\s*(?:$|[^\w\s']|(?:again|and|but|so)\b|(?:to|by) [$\d]))"
    rf"|(?:dropped|rose|fell|jumped|climbed) (?:to|by) {_AMOUNT}"
    rf"|(?:raised|lowered|cut|increased|decreased|upped) (?:\w+ ){{0,3}}?(?:to|by) {_AMOUNT}"
    rf"|turned {_AGE})\b"
    r"|今は|今では|最近は|これからは|変え|変わっ|変更|(?<!着)替え|買い換え|乗り換え(?!て)|引っ越"
    r"|辞め|やめ|代わりに|じゃなくて|ではなく|じゃなく|売っ|別れ|転職|転校|移っ|移し|延期"
    r"|(?<![雨荒]天)中止|リスケ|退職(?![祝金])|転勤(?!族)"
    rf"|{_JA_PLANS}(?:が|は|も|を)?[^。！？!?\n]{{0,8}}?(?:延び|延ばし|ずれ|ずらし)"
    rf"|{_JA_DAY}ずらし|{_JA_PLANS}(?:が|は|も)?(?:なくなっ|無くなっ)"
    r"|もう[^。！？!?\n、，,]{0,10}?(?:(?:んで|って|いて)|[てで]い)(?:ない|なかっ|ません)"
    r"|ずれ込|前倒し|繰り上げ|繰り下げ"
    r"|キャンセル|訂正"
    r"|(?<=[0-9０-９〇一二三四五六七八九十])(?:歳|才)にな(?=っ|りまし)|(?:こと|事)にし(?=た|まし|て)"
    r"|(?:^|(?<=[はも、，,\s]))(?:前|以前|昔|もともと|元々)は[、，,]?"
    r"(?:(?!けど|けれど|のに|ので|から|ことが?あ)[^。！？!?\n、，,]){0,20}?"
    r"(?:だった|てた|でた|ていた|でいた|かった)",
    re.ASCII | re.IGNORECASE,
)
"""Words that say something changed, in English (as words) and Japanese: a date pushed
to a time, by a while or back ("pushed the chapter 2 deadline to April 20", "bumped … to
the 19th", "pushed the trip by a week", "the meeting got pushed back", "pushed back the
wedding"; not "pushed myself to run", "pushed to 3 sets", "pushed back against it",
"pushed the chair back", "bumped into Sarah on Friday"), delayed, brought forward, a comma
or an "again," between the words (:data:`_ASIDE`: "moved my appointment again, to March
26th", "moved Mochi's checkup to May 9th"; not "Got up, changed, drove to work"); 延期,
中止 (not 雨天中止, a rule), リスケ, and, of a plan (:data:`_JA_PLANS`), 延びた, 延ばした, ずれた,
ずらした, and なくなった just after it (締め切りが3日延びた, 飲み会、金曜にずれた, 予約ずらした,
飲み会なくなった, 結婚式がなくなった; not 寿命が延びた, 眼鏡がずれてる, 体内時計が8時間ずれてる,
視線をずらした, 時間がなくなった, 面接の緊張がなくなった), ずらした to a time (来週にずらしてもらった),
ずれ込んだ, 前倒し; 退職した, 転勤になった (not 退職祝い, 退職金, 転勤族); "no longer" as もう with a
negated ている form within ten characters (もう大阪には住んでない, もう飲んでない, もう働いてない,
もう食べていない, もう実家の近くには住んでない; not もう待てない, もう捨てない, a can't or a won't);
"I used to …" after its subject, an adverb between or none ("I used to hate coffee", "I never
used to like coffee", "I also used to live in Kyoto", "My wife used to love jazz": a person's
habit, :func:`_habit_owner`; not "got used to", "I'm used to", "it used to", "you used to",
which tells the one spoken to), and in Japanese 前は, 昔は or 以前は at a sentence's or a
topic's start with a past state within twenty characters of its clause (前はジャズが好きだった,
妻は昔はタバコ吸ってた, 前は平日も空いてたのに; not この前は楽しかった, 駅の前は混んでた, nor
"once" or "last time": 前は一回行ったことあるけど、混んでた, 前は行ったけど混んでた, and a
past told as shared with a また or a 今度 beside it, 前は楽しかったね！また行こう:
:func:`_an_occasion`); and "anymore", or "any more" ending its
clause, which says a change only after a negation (:data:`_NEGATION`; "I don't drink coffee
any more"; "Mochi doesn't want any more" and "I don't want any more coffee" are amounts);
"now" ending its clause, read as 今は (:data:`_NOT_NOW`: "I can't stand sushi now", "it's
$1,950 a month now"; not "right now", "for now", "by now", "for two years now", "I have to
go now", "Now, the roof."; "now that…" and "Now I'm hungry" end no clause); a value gone up
or down ("Rent went up", "prices went up again", "dropped to $999", "raised its fees to
$80"; not "went up the stairs", "went up to Sapporo", "dropped him off by 8"); an age
turned ("turned 7 today", "turned thirty in May", 6歳になった; not "turned one of the rooms
into…", "turned 90 degrees", 6歳になったら); and a decision, ことにした (お酒は飲まないことにした;
not 続けることにした, 辞めないことにした: :data:`_KEPT_ON`)."""

_MAYBES = (
    r"no need to|might|(?:i|we|you|he|she|they) may|maybe|should|could|if|almost"
    r"|thinking (?:of|about)"
    r"|going to|gonna|want to|wanna|planning (?:to|on)|plan to|hope to|hoping to|considering"
    r"|would have|would've|how about|what if"
)
"""A maybe, a wish, a plan or what did not happen, before an English change word."""

_NOT_BEFORE = re.compile(
    r"\b(?:not|never|won't|don't|didn't|doesn't|haven't|hasn't|can't|cannot"
    rf"|wouldn't|shouldn't|{_MAYBES})"
    r"\W+(?:\w+\W+){0,2}$",
    re.ASCII | re.IGNORECASE,
)
"""What makes an English change word say no change, within three words before it: a
negation ("I'm not going to switch", "still haven't switched"), a maybe, a wish, a plan or
what did not happen ("I might switch", "I may switch", not "in may we moved"; "planning on
switching", "hope to switch", "thinking of moving", "I would have switched but…", "how
about I switch"). "anymore" is read the other way (:data:`_NEGATION`)."""

_MAYBE_BEFORE = re.compile(rf"\b(?:{_MAYBES})\W+(?:\w+\W+){{0,2}}$", re.ASCII | re.IGNORECASE)
"""A maybe, a wish or a plan within three words before a negation ("I might not go anymore",
"if I don't go to the gym anymore")."""

_NEGATION = re.compile(
    r"\b(?:not|no|never|nothing|nobody|nowhere|neither|nor|hardly|barely|rarely|seldom|cannot"
    r"|(?!(?:should|might|must)n't)\w+n't)\W+(?:\w+\W+){0,6}$",
    re.ASCII | re.IGNORECASE,
)
"""The negation that makes "anymore" a change, within seven words before it ("I'm not vegan
anymore", "I don't go to the gym anymore", "I never drink coffee anymore", "Not anymore",
"We aren't together anymore"); alone it says nothing ("Any more paintings coming up?"), and
advice is no change ("you shouldn't drink anymore")."""

_NOT_NOW = re.compile(
    r"\b(?:right|just|for|by|until|till|to|of|from|even|not|than|only|before|ago"
    r"|years?|months?|weeks?|days?|hours?|minutes?|while|ages|long|time"
    r"|go|going|leave|leaving|heading|off)\W*$"
    r"|\b(?:have to|has to|need to|needs to|got to|gotta|must|let's|let me|(?:i|we)'ll"
    r"|will|would|about to|off to|tempted to)\W+(?:\w+\W+){0,4}$"
    r"|^\W*(?:(?:and|but|so|ok|okay|well|oh|anyway|alright)\W+)*$",
    re.ASCII | re.IGNORECASE,
)
"""What makes a "now" that ends its clause no change: a "now" of the moment or of a while
("right now", "just now", "for now", "by now", "until now", "a week from now", "not now",
"for two years now", "I have to go now", "I'll call you now", "I'm off to spend some time
with them now"), or one that opens its sentence ("Now, the roof.", "And now, big news");
a negation before it is none ("I don't eat meat now" is a change), and "now that …" or
"Now I'm hungry" do not end a clause."""

_ANYMORE = re.compile(r"any ?more", re.I)
"""The change word that needs a negation before it (:data:`_NEGATION`)."""

_AN_AMOUNT = re.compile(
    r"\b(?:want|wanna|need|have|has|had|take|get|eat|drink|buy|give|add|use|make|spend|afford"
    r"|do)\W+$|\bthere\W+(?:\w+n't|\w+\W+not)\W+$",
    re.I,
)
"""What makes a negated "any more" in two words an amount, not a change: a verb it is the
object of, or a "there isn't" ("Mochi doesn't want any more.", "I can't eat any more", "I
don't need any more", "There isn't any more"; not "I don't smoke any more", "I'm not vegan
any more")."""

_REFUSAL = re.compile(
    r"^(?:won't|wouldn't)\b"
    r"|\b(?:want to|wanna|gonna|plan(?:ning)? to"
    r"|going to (?!(?:the|a|an|my|our|his|her|their|this|that|school|work|church|class|college"
    r"|bed|practice|therapy)\b))"
    r"|^(?:can't|cannot) (?:wait|go on|cope|(?:take|stand|bear|handle|do|deal with|cope with"
    r"|put up with) (?:it|this|that|them|him|her))\b",
    re.I,
)
"""What makes a negated "anymore" a plan, a refusal or an outburst, not a change, read from
the negation on: "I won't eat sugar anymore", "I wouldn't trust Ken anymore", "I'm not going
to drink coffee anymore", "I don't think I want to be vegan anymore", "I can't wait anymore",
"I can't take it anymore", "I can't do this anymore" (not "I'm not going to the gym anymore",
"I can't eat gluten anymore", "I can't afford it anymore": a change)."""

_WILL_BEFORE = re.compile(r"(?:\b(?:will|would)|'ll|'d)\W+(?:\w+\W+){0,2}$", re.I)
""""will" and "would" before a change word's plain form ("I'll switch next month", "I'd
switch if I could"); before a past form it is done ("I'd already switched by then")."""

_DONE = re.compile(r"(?:\w+ed|sold|gave|broke|brought)\b", re.I)
"""A change word in a past form ("moved … to", "switched", "sold"): done, not planned."""

_A_SWITCH = re.compile(r"\b(?:my|the|a|your|his|her|our|their|nintendo)\W+$", re.I)
"""What makes "switch" a thing, not a change ("on my Switch")."""

_A_TOOL = re.compile(
    r"(?:^|\W)what\W*$"
    r"|(?<!\bwas )(?<!\bwere )(?<!\bas )"
    r"\b(?:the|a|an|this|that|these|those|my|your|his|her|our|their|its|some) "
    r"(?:(?!(?:and|but|so|or|because|when|then|since|while|if|is|was|are|were|now)\b)\w+ ){1,3}$",
    re.I,
)
"""What makes "I used to" a thing used, not a habit left: a thing named (one to three words
after a determiner, a "that" or "which" among them) or a "what" just before its subject
("the knife I used to cut it", "the kitchen knife I used to cut the fish", "the app that I
used to pay rent", "What I used to clean the stain was baking soda"); a determiner after
"was" or "as" names a time of life ("When I was a kid I used to hate tomatoes", "As a kid I
used to…", "When I was a kid, I used to": habits)."""

_NOT_AFTER = re.compile(
    r"^\w{0,3}?(?:ない|なかっ|ません|ず(?!っと)|よう|たい|つもり|かも|かな|なら|れば|(?<![たいだ])そう"
    r"|もらえ(?!た|まし)|って(?:本当|ほんと)|っけ)"
    r"|^[^\Wてで]{0,3}?(?:予定|考え|迷っ|悩ん)"
)
"""What makes a Japanese one say no change just after it: a negation (変えない, 辞めません),
an intention, a wish or a plan (変えようかな, 辞めようと思ったけど, 引っ越したい, 辞めるつもり,
引っ越す予定, 転職を考えてる, 辞めるか迷ってる; not after a て-form, which joins a clause:
辞めて予定通り…, 売って迷ってたバイクを買った), a maybe (転勤になりそう, 中止かな; 中止だそう,
hearsay, is told), a condition (中止なら, 変えればよかった; たら: :data:`_IF`), asking
(リスケしてもらえる; してもらえた is done), doubting (中止って本当) or asking oneself
(前は何してたっけ)."""

_KEPT_ON = re.compile(
    "(?:続ける|続け|残る|待つ|このままに|(?:辞め|やめ|止め|変え|替え|売ら|引っ越さ|別れ|移ら)ない)$"
)
"""What makes a ことにした a decision to keep things as they are (続けることにした,
辞めないことにした; 飲まないことにした is a change)."""

_IF = re.compile(r"^\w{0,3}?たら(?!しい)")
"""A condition just after a Japanese change word (中止になったら家で映画見よう), unless what
follows ends in the past (:data:`_PAST_END`: ジム変えたら通うのが楽になった, it happened)."""

_PAST_END = re.compile(r"[ただ][よねわなのさー〜~wｗ笑]*[!！。.…\s]*$")
"""A sentence that ends in the past (…楽になった, …すっきりしたよ！)."""


NEAR_CHARS = 120
"""How far from its change word a shared phrase may be: the words read on each side."""

SHARED_MIN_COSINE = 0.3
"""The default ``later_change_cosine`` (on the default embedder's scale): of 24
corrections written for the purpose (12 per language), the changes' cosines to what they
change ran from .27 to .82; newer memories with change words about other things came to
at most .39, and share no phrase with it. No floor serves for a person alone: of 46 pairs
that shared only the person (English and Japanese), 18 real changes ("My wife works at
the bank", then "My wife quit her job") came to .50-.78 and 28 other news of the same one
("Yuki quit her diet" after "Yuki lives near the station") to .39-.68, so a person alone
links none (:func:`_about_the_same`)."""

MAX_CHANGES = 2
"""How many later changes one result can have put before it (the newest first)."""

Similar = Callable[[int, Sequence[int]], dict[int, float]]
"""The cosine of a stored episode's vector to each of some others' (missing: no vector)."""


def own_words(ep: Episode) -> str:
    """What an episode's own speaker said: an exchange's user turn, else its content."""
    if ep.kind is EpisodeKind.exchange:
        return ep.user_text or ""
    return ep.content or ""


def change_sentences(text: str) -> list[str]:
    """The words around each change word of ``text`` (its first 2,000 characters; at most
    :data:`NEAR_CHARS` on each side, within its sentence, and the sentence before when a
    pronoun stands for what changed: :func:`_refers_back`) that say something changed: a
    change word (:data:`CHANGE`) not negated nor a maybe or a plan ("anymore" negated, not
    as a maybe, a plan or a refusal: "I'm not vegan anymore"), in a sentence that asks
    nothing ("Any more paintings coming up?", "I won't quit", "should I switch", "I might
    not go anymore", "I won't eat sugar anymore", 変えないで, 変えようかな and 中止になったら
    say no change)."""
    out: list[str] = []
    previous = ""
    listed = sentences(text[:2000].translate(APOSTROPHES))
    for at, sentence in enumerate(listed):
        following = listed[at + 1] if at + 1 < len(listed) else ""
        if sentence.endswith(("?", "？")):
            previous = sentence
            continue
        for m in CHANGE.finditer(sentence):
            before, after = sentence[: m.start()], sentence[m.end() :]
            if _ANYMORE.fullmatch(m.group()):
                amount = " " in m.group() and _AN_AMOUNT.search(before) is not None
                if amount or not _negated(before) or _asks(before):
                    continue
            elif m.group().lower() == "now":
                if _NOT_NOW.search(before) or _MAYBE_BEFORE.search(before) or _asks(before):
                    continue
            elif m.group()[0].isascii():
                word = m.group().lower()
                noun = word == "switch" and _A_SWITCH.search(before) is not None
                tool = word.endswith("used to") and _habit(before, m.group(), after) is None
                planned = _WILL_BEFORE.search(before) is not None and not _DONE.match(m.group())
                if noun or tool or planned or _NOT_BEFORE.search(before) or _asks(before):
                    continue
            elif (
                _NOT_AFTER.match(after) is not None
                or (_IF.match(after) is not None and _PAST_END.search(after) is None)
                or _KEPT_ON.search(before) is not None
                or _an_occasion(m.group(), after, f"{previous} {after} {following}")
            ):
                continue
            near = sentence[max(0, m.start() - NEAR_CHARS) : m.end() + NEAR_CHARS]
            if previous and _refers_back(sentence, m):
                near = f"{previous[-NEAR_CHARS:]} {near}"
            out.append(near)
        previous = sentence
    return out


_ONCE_BEFORE = re.compile("^(?:前|以前)は.*(?:だった|かった)$")
"""A 前は with a past that is no habit form (前は楽しかった, 前は雨だった; not 前は通ってた)."""
_TOLD_AS_SHARED = re.compile("^よ?ね(?![^。！？!?\n]*(?:でも|けど|けれど|のに|今|もう))")
"""The ね of a past told to the one who shared it (楽しかったね！), with no now set against it
(楽しかったね、でも今は…)."""
_AGAIN = re.compile("また|今度")
"""An "again" or a "next time": the past was an occasion, to be had again."""


def _an_occasion(change: str, after: str, around: str) -> bool:
    """Whether a Japanese 前は … past (``change``, ``after`` it the rest of its sentence)
    tells the last time, not a state left: a past that is no habit form, told as shared (ね),
    with a また or a 今度 in ``around`` (the sentence before, the rest, and the one after):
    カラオケ、前は楽しかったね！また行こう (not 前は楽しかったね、でも今はつまらない, 前はよく
    通ってたね！また行こう, a habit left)."""
    return (
        _ONCE_BEFORE.match(change) is not None
        and _TOLD_AS_SHARED.match(after) is not None
        and _AGAIN.search(around) is not None
    )


_OWNED_BY = re.compile(r"\b(?:my|our|his|her|their|the)\s+$", re.I)
"""The possessive or "the" before a person word that says "used to" ("the knife my wife used
to cut the fish" names a thing as "the knife I used to cut the fish" does)."""


def _habit(before: str, used_to: str, after: str) -> str | None:
    """Whose habit left ``used_to`` ("I used to", "wife never used to") tells between the
    words ``before`` and ``after`` it (:func:`_habit_owner`: "i", "wife", "ken"); none for a
    subject that is no person ("It used to rain") or a thing used ("the knife my wife used to
    cut the fish", "What I used to clean it was…": :data:`_A_TOOL`)."""
    who = _habit_owner(used_to.split()[0], before, after)
    return None if _A_TOOL.search(_OWNED_BY.sub("", before)) is not None else who


_POINTS_BACK = re.compile(r"\b\w+\W+(?P<it>it|them|that|there)\W+$", re.I)
"""A pronoun just before a change word said after its verb's object, and after that verb,
standing for what changed ("I can't afford it anymore", "I don't go there anymore", "I
don't do that any more", "I can't stand it now": :data:`_AFTER_OBJECT`)."""
_AFTER_OBJECT = re.compile(r"any ?more|now|instead|nowadays|these days", re.I)
"""The change words said after a verb's object ("afford it anymore"); before any other, a
pronoun is the change verb's subject, and one that stands for nothing as often ("It stopped
raining", "It changed my mind"), so only the object after it counts ("sold it")."""
_POINTS_BACK_AFTER = re.compile(r"\w+\W+(?P<it>it|them)\b(?!')", re.I)
"""A pronoun just after a change verb, standing for what changed ("I sold it", "They
cancelled it", "moved it to Friday")."""
_JA_POINTS_BACK = re.compile(
    "(?P<it>それ|そこ|あそこ|あれ)(?=[はをにでも、])(?!(?<=それ)[にで](?!は))"
)
"""A Japanese pronoun for what changed, with its particle (もうそこには通ってない, あれはもう
使ってない, それにはもう使ってない; not それぞれ, そこそこ, nor the conjunctions それに, それで,
それでも, which join the sentence to the one before and stand for nothing)."""
_JA_NOUN = re.compile("[\u4e00-\u9fff々\u30a1-\u30ff]")
"""A kanji or katakana: a Japanese text that may name a thing."""
_LATIN_WORD = re.compile(r"[a-z']+")
"""A word of a folded English text."""


def _refers_back(sentence: str, m: re.Match[str]) -> bool:
    """Whether the change word ``m`` of ``sentence`` changes a pronoun's thing that the
    sentence does not name, so that the sentence before names it ("The gym raised its fees
    again. I can't afford it anymore.", "Remember Kinako's café? I don't go there anymore.",
    駅前のジム、また会費が上がった。もうそこには通ってない。): a pronoun next to it as its object
    ("I sold it", "afford it anymore"; not a subject, "It stopped raining", nor それに, a
    conjunction), and before the pronoun a verb at most (one word that is no stopword, and no
    kanji nor katakana: "The new phone though, I can't afford it anymore" names its thing)."""
    before = _AFTER_OBJECT.fullmatch(m.group()) is not None
    pronoun = (
        _POINTS_BACK_AFTER.match(sentence, m.start())
        or (_POINTS_BACK.search(sentence, 0, m.start()) if before else None)
        or _JA_POINTS_BACK.search(sentence, max(0, m.start() - 6), m.end())
    )
    if pronoun is None:
        return False
    head = sentence[: pronoun.start("it")]
    named = [w for w in _LATIN_WORD.findall(fold(head)) if w not in ENGLISH_STOPWORDS]
    return len(named) <= 1 and _JA_NOUN.search(head) is None


_ASKS = re.compile(r"^\W*(?:should|shall|can|could|would|do|does|did|is|are|will|why)\b", re.I)


def _negated(before: str) -> bool:
    """Whether the words before an "anymore" negate it, and not as a maybe, a plan or a
    refusal ("I don't live there anymore", "I can't eat gluten anymore"; not "I might not go
    anymore", "if I don't go anymore", "I'll never eat sugar anymore", "I won't eat sugar
    anymore", "I can't take it anymore")."""
    negation = _NEGATION.search(before)
    if negation is None:
        return False
    ahead = before[: negation.start()]
    return (
        _MAYBE_BEFORE.search(ahead) is None
        and _WILL_BEFORE.search(ahead) is None
        and _REFUSAL.search(before[negation.start() :]) is None
    )


def _asks(before: str) -> bool:
    """Whether the sentence a change word is in opens as a question without its mark
    ("should I switch Mochi to a different kibble", "why did I ever switch to oat milk";
    not "When I moved to Osaka…", a clause)."""
    return _ASKS.match(before) is not None


def _speaker(ep: Episode) -> str | None:
    speaker = ep.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _subjects(words: str, near: str, names: set[str]) -> list[str]:
    """The phrases of ``words`` that ``near`` (the words around a change word) shares, not a
    speaker's name, a change word (今は in both says nothing about what changed), nor a
    number or a counter alone (:data:`_A_COUNT`: "$1,200" on a laptop and on a bike)."""
    shared = shared_phrases(words[:600], near, limit=20)
    return [
        p
        for p in shared
        if p not in names and CHANGE.fullmatch(p) is None and _A_COUNT.fullmatch(p) is None
    ]


_A_COUNT = re.compile(
    r"\d[\d,.]*(?:st|nd|rd|th|s|k|am|pm)?"
    "|[〇一二三四五六七八九十百千万億兆]+(?:円|ドル|ユーロ|歳|才|年|か?月|ヶ月|日|時間?|分|秒|週間?|回|度"
    "|個|人|本|枚|台|杯|冊|匹|階|番|位|件|点|倍|割|キロ|グラム|メートル|センチ|リットル|ページ)?"
    "|ドル|ユーロ|キロ|グラム|メートル|センチ|リットル|パーセント|ページ"
)
"""A number or a counter alone, which names no thing ("1,200" of "$1,200", "106" of "NH
106" and "the 106 bus", 万円 of 3万円; 号室 names a room)."""


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
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)*(?:(?<=s)'(?![a-z0-9]))?")
"""A word of a folded text, with its "'s" ("son's", "o'brien's") or its "'" after an s
("Chris'")."""
_CAPITAL = re.compile(r"\b(\w+(?:'\w+)*)'")
"""A word before an apostrophe, to tell a name written with a capital ("Ken's")."""

_JA_KIN = (
    "うちの子|息子|娘|祖母|祖父|叔母|伯母|叔父|伯父|母|父|夫|妻|旦那|主人|嫁|彼氏|友達|兄|姉|弟|妹"
    "|上司|同僚|子供|子ども|子|パパ|ママ"
)
"""The Japanese words of a person 「Xの」 names an owner by (not 彼女, she or a girlfriend)."""
_JA_PEOPLE = {kin: kin for kin in _JA_KIN.split("|")} | {
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
_JA_TOPIC = f"{_JA_PERSON}(?:は|も|って|が)"
"""A Japanese person as what a sentence tells about (妻は, 私も, 田中さんって)."""
_JA_GAP = r"(?:[^\Wのがはを]{1,6}の|[\u4e00-\u9fff々\u30a1-\u30ffー]{1,4})"
"""A word between a Japanese owner and its piece (次の, 来月の, 定期; not across が, は, を)."""
_JA_OWNERS = tuple(re.compile(f"{_JA_WHO}{_JA_GAP}{{{gap}}}$") for gap in range(3))
"""Whose a Japanese piece is, by the 「Xの」 just before it, or one or two words before it
(娘の次の健診, 娘の定期健診): the speaker's (私の, 僕の, うちの), a person's (息子の, お母さんの,
母の and ママの alike, 上司の, うちの子の), "his" (彼の) or a name's (田中さんの, ミキちゃんの)."""
_JA_OWNER_CHARS = 40
"""How far before a Japanese piece its owner is looked for (the work stays linear)."""


_TAKEN = re.compile(
    r"(?:\b(?P<det>a|an|the|this|that|my|our|your|his|her|their|its) )?"
    r"\b(?P<who>[a-z]+)(?:'ve|'d|'s| has| have| had)? (?:(?:\w+ly|just|also|already|now|then) )?"
    r"(?:switched|changed|moved)(?: over| back)? (?:to|from) (?:my |our |his |her |their )?$"
)
"""Someone taking another's thing as their own or leaving it, before its owner ("I switched
to McDonald's breakfast", "we finally moved to Mum's old house", "I switched from my
sister's phone plan": the speaker's breakfast, house, plan; "Ken switched to McDonald's
breakfast": Ken's, "My son switched to…": the son's; not "I moved my son's appointment
to…"): whom :func:`_taker` reads."""


def _owners(text: str, subject: str, shared: set[str]) -> set[str]:
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
                    found.add(_ja_owner(owner))
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
    as :func:`_doer` writes it: "i" for "I" and "we", "he" for "he", a person word's one word
    ("son" for "My son"), a name written with a capital in ``text`` ("Ken"); none for a thing
    after a determiner or a word that names no one ("The party moved to Mom's house", "It
    moved to Ken's place")."""
    word = taken["who"]
    if word in ("i", "we"):
        return "i"
    if word in _PRONOUNS or word in _PEOPLE:
        return _PEOPLE.get(word, word)
    if taken["det"] or not _a_name(word):
        return None
    written = re.finditer(rf"\b{word}\b", text, re.IGNORECASE)
    return word if any(w.group()[0].isupper() for w in written) else None


def _ja_owner(owner: re.Match[str]) -> str:
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


def _other_owner(one: str, other: str) -> bool:
    """Whether two owners are surely two people: the speaker differs from any other owner,
    "he" from "she", two names and two person words from each other ("mother" and "father";
    not "child" and "son", one may be the other); a pronoun may be a name's or a person
    word's ("his party" may be "Dad's party"), and a name a person word's ("Yuki's party" may
    be "my wife's party", 健ちゃんの健診 夫の健診)."""
    if one == other:
        return False
    if "i" in (one, other):
        return True
    if one in _PRONOUNS or other in _PRONOUNS:
        return {one, other} == {"he", "she"}
    if one in _KIN and other in _KIN:
        return other not in _KIN_OF.get(one, ()) and one not in _KIN_OF.get(other, ())
    return one not in _KIN and other not in _KIN


_PERSON_DOES = re.compile(
    r"\s+(?:work|live|love|like|hate|enjoy|play|drive|study|teach|smoke|eat|drink|date|cook"
    r"|run|swim|sing|go out with)\b",
    re.I,
)
"""What a person does, after "used to" ("ken used to love jazz", "ken used to live in Kyoto";
not "dinner used to be at 7", "netflix used to mail DVDs")."""
_A_DETERMINER = re.compile(r"\b(?:a|an|the|this|that|my|our|your|his|her|their|its)\W+$", re.I)
"""A determiner just before a word, which makes it a thing's ("the dog", "my phone")."""


def _habit_owner(subject: str, before: str = "", after: str = "") -> str | None:
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


_USED_TO = re.compile(
    r"\b\w+ (?:(?:\w+ly|never|also|always|once|even|still|just) )?used to\b", re.I
)
"""A habit left, after its subject (:func:`_habit`)."""
_JA_USED_TO = re.compile(f"{_JA_TOPIC}(?:前|以前|昔|もともと|元々)は")
"""A Japanese habit left, after the person it is of (妻は前は, 田中さんも昔は)."""


def _habit_of(near: str) -> str | None:
    """Whose habit left the words around a change word tell ("My wife used to love jazz":
    "wife"; "I used to hate running": "i"; 妻は前はジャズが好きだった: 妻), if any."""
    for m in _USED_TO.finditer(near):
        if (who := _habit(near[: m.start()], m.group(), near[m.end() :])) is not None:
            return who
    ja = _JA_USED_TO.search(fold(near))
    return _ja_owner(ja) if ja is not None else None


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
_PERSON_VERB = (
    r"(?:works|worked|lives|lived|loves|loved|likes|liked|hates|hated|enjoys|enjoyed|quits?"
    r"|moved|drives|drove|plays|played|studies|studied|teaches|taught|married|retired"
    r"|smokes|smoked|eats|ate|drinks|drank)"
)
"""What a person does, after a name ("Ken works", "Emma loves"; not "Jazz is", "Netflix
raised", "Starbucks sold out", which name a thing as often)."""
_DOER = re.compile(
    rf"[^\w']*{_LEAD_IN}(?:(?P<me>i|we)\b|(?P<they>he|she|they)\b"
    rf"|(?:(?:my|our|his|her|their|the) (?:\w+ ){{0,2}}?)?(?P<kin>{_PERSON_WORD})\b(?!')"
    rf"(?:,? (?P<called>{_NAME})\b(?!'))?"
    rf"|(?P<name>{_NAME})(?: {_NAME})?(?:, [^,]{{1,40}},| from \w+(?: \w+)?)? "
    rf"(?:(?:\w+ly|just|still|never|also|always|finally) )?{_PERSON_VERB}\b)",
    re.IGNORECASE,
)
"""The person an English sentence opens with as its subject: "I" or "we", a pronoun, a
person word and the name after it ("My coworker Jen quit…", "my college friend…", "Mom
sold…"), or a name before what a person does ("Ken works…", "Emma Watson, my college
friend, lives…", "Emma Clarke from work moved…")."""
_JA_DOER = re.compile(f"(?:[^、。！？!?\\sはがをの]{{1,8}}?(?:は|、))??{_JA_TOPIC}")
"""The person a Japanese sentence tells about, as its topic or subject, at its start or
after a time or a thing (妻は, 佐藤さんが, 最近は息子が, 昨日、兄が)."""
_MY_CLAUSE = re.compile(
    r"[^\w']*(?:[\w']+(?: [\w']+){0,2}, )?[^,;:.!?()\u2013\u2014]*?\b(?:i|we)\b", re.IGNORECASE
)
"""An English sentence whose first clause (past a few words and a comma) holds "I" or "we",
whatever it opens with: the speaker's ("Jazz is what I love", "To be honest, I love jazz",
"Love jazz, I play it every day"; not "Jazz is her thing, I think")."""
_JA_TEXT = re.compile("[\u3041-\u30ff\u4e00-\u9fff]")
"""A kana or a kanji: a Japanese sentence, whose subject, when it names none, is the
speaker (ジャズにハマってて、毎日聴いてる)."""
_CALLED = re.compile(
    rf"\b(?:{_PERSON_WORD})\b,? ({_NAME})\b(?!')"
    rf"|\b({_NAME})(?: {_NAME})?, (?:my|our|a|an) (?:\w+ ){{0,2}}?(?:{_PERSON_WORD})\b",
    re.IGNORECASE,
)
"""A name a person word stands beside ("my friend Sarah", "coworker Jen", "Emma Watson, my
college friend")."""
_JA_CALLED = re.compile(
    "([\u4e00-\u9fff々\u30a1-\u30ffー]{1,6})(?<![者屋店院医局所館社課科])(?:さん|ちゃん|くん|君|様)"
)
"""A Japanese name before its honorific (田中さん, 結衣ちゃん; not 歯医者さん, ケーキ屋さん)."""
_HONORIFIC = re.compile("^お|(?:さん|ちゃん|くん|君|様)$")
"""The お and the honorific a Japanese person word or name may be written with (お母さん)."""


def _doer(sentence: str) -> str | None:
    """Who ``sentence`` tells about, by the person it opens with as its subject: "i" for
    "I" and "we" (私, 僕), "she" for "she", a person word's one word ("mother" for "My mom"),
    the name a person word stands beside ("My coworker Jen": "jen"), a name before what a
    person does ("Ken works at Google": "ken"), 佐藤 for 佐藤さんが, 息子 for 最近は息子が;
    the speaker for a first clause that holds "I" ("Honestly, jazz is what I love":
    :data:`_MY_CLAUSE`) and a Japanese sentence that names no one (毎日ジャズを聴いてる);
    none for a thing ("Jazz is my favourite", "The Fit kept breaking down")."""
    if (ja := _JA_DOER.match(fold(sentence))) is not None:
        return _ja_owner(ja)
    plain = sentence.translate(APOSTROPHES)
    m = _DOER.match(plain)
    if m is None:
        mine = _MY_CLAUSE.match(plain) is not None or _JA_TEXT.search(sentence) is not None
        return "i" if mine else None
    if m["me"]:
        return "i"
    if m["they"]:
        return m["they"].lower()
    if m["kin"]:
        called = (m["called"] or "").lower()
        return called if _a_name(called) else _PEOPLE[m["kin"].lower()]
    name = m["name"].lower()
    return name if _a_name(name) else None


def _a_name(word: str) -> bool:
    """Whether a word written with a capital may be a name ("ken"; not "" nor "the",
    "today", "monday", "mom")."""
    return bool(word) and word not in ENGLISH_STOPWORDS | _DESCRIPTIVE and word not in _PEOPLE


def _leads(words: str, subject: str) -> set[str]:
    """Who the sentences of ``words`` that hold ``subject`` (folded) tell about, by the
    person they open with (:func:`_doer`: "I love jazz": "i"; "My wife loves jazz": "wife";
    "She plays tennis": "she"; "Ken works at Google": "ken"; 妻はジャズが好き: 妻)."""
    return {
        who
        for sentence in sentences(words)
        if subject in fold(sentence) and (who := _doer(sentence)) is not None
    }


def _told(near: str) -> str:
    """The sentence of ``near`` (the words around a change word) that holds the change
    word, past the sentence before that a pronoun may have brought in."""
    return next((s for s in sentences(near) if CHANGE.search(s)), near)


def _mentioned(text: str) -> set[str]:
    """Everyone ``text`` may name, as :func:`_doer` writes them: its words ("ken"), its
    person words ("mother" for "Mom's"), "i" for "I", "me", "we" or "us", and its Japanese
    persons (兄, 田中, "i" for 私)."""
    folded = fold(text)
    words = {_bare(token.group()) for token in _TOKEN.finditer(folded)}
    found = words | {_PEOPLE[w] for w in words if w in _PEOPLE}
    if words & {"i", "me", "we", "us", "i'm", "i've", "i'd", "i'll"}:
        found.add("i")
    return found | {_ja_owner(m) for m in _JA_SOMEONE.finditer(folded)}


_JA_SOMEONE = re.compile(_JA_PERSON)
"""A Japanese person anywhere in a text (:data:`_JA_PERSON`)."""


def _another_doer(words: str, near: str, subject: str) -> bool:
    """Whether ``near`` tells of someone surely other than the one the sentences of
    ``words`` (an older result's) holding ``subject`` tell about (:func:`_leads`), and
    neither names the other: "My coworker Jen quit Google" changes nothing of "Ken works at
    Google", nor "My dad sold the Honda Fit" "My mom drives a Honda Fit", 佐藤さんがトヨタ辞めた
    田中さんはトヨタで働いてる, 弟が大阪に引っ越した 兄は大阪に住んでる. An older fact about the
    speaker may be changed by anyone ("My wife moved the dentist appointment"), and "I
    switched Mochi to the salmon kibble" still changes "Mochi eats the chicken kibble"."""
    theirs = _leads(words, fold(subject)) - {"i"}
    doer = _doer(_told(near))
    if not theirs or doer is None or doer in _mentioned(words) or theirs & _mentioned(near):
        return False
    return all(_other_owner(one, doer) for one in theirs)


def _people_named(text: str) -> set[str]:
    """The names and person words ``text`` names people by, folded: whom its sentences tell
    about (:func:`_doer`), a name a person word stands beside (:data:`_CALLED`), and a
    Japanese name before its honorific (田中 of 田中さん)."""
    plain = text.translate(APOSTROPHES)
    found = {fold(m[1] or m[2]) for m in _CALLED.finditer(plain)}
    found |= {who for sentence in sentences(plain) if (who := _doer(sentence)) is not None}
    return found | {m[1] for m in _JA_CALLED.finditer(fold(text))}


def _a_person(subject: str, named: set[str]) -> bool:
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


_AGE_NOW = re.compile(
    rf"\bturned {_AGE}|[0-9０-９〇一二三四五六七八九十]+(?:歳|才)にな(?:っ|りまし)", re.IGNORECASE
)
"""An age one turned ("My son turned 7 today", 娘が6歳になった)."""
_AN_AGE = re.compile(
    r"\b(?:is|am|i'm|he's|she's|was|aged?|turned|turns) \d{1,3}"
    r"(?=\s*(?:$|[^\w\s$]|(?:years?|yo|and|but|now|today)\b))"
    r"|\b\d{1,3}[ -]years?[ -]old\b|[0-9０-９〇一二三四五六七八九十]+(?:歳|才)",
    re.IGNORECASE,
)
"""An age told ("My son is 6, he's…", "I'm 29", "a 6-year-old", 娘は5歳; not "is $1,800",
"is 1204")."""


def _age_again(words: str, near: str) -> bool:
    """Whether ``near`` tells an age turned of the one ``words`` told an age of, by whom
    each sentence tells about (the speaker when none: 30歳になった): "My son turned 7 today"
    after "My son is 6", 娘が6歳になった after 娘は5歳 (not after 息子は5歳)."""
    told = _told(near)
    if _AGE_NOW.search(told) is None:
        return False
    who = _doer(told) or "i"
    return any(
        not _other_owner(_doer(sentence) or "i", who)
        for sentence in sentences(words.translate(APOSTROPHES))
        if _AN_AGE.search(sentence) is not None
    )


def _about_the_same(words: str, near: str, names: set[str]) -> bool:
    """Whether ``near`` (the words around a change word) shares a subject with ``words`` (an
    older result's) that is the same thing: none of the shared phrases is an owner's on both
    sides and the owners differ ("My son's dentist appointment got moved" does not change
    "My dentist appointment is on March 12th", 父の誕生日会 not 母の誕生日会). A side with no
    owner may mean either ("The dentist appointment got moved"); a plain modifier is no owner
    (the changed value often sits there: "switched Mochi to salmon kibble"). A habit left is
    its subject's, and the older one is about whom its sentence opens with ("My wife used to
    love jazz" changes "My wife loves jazz", not "I love jazz"; 妻は前は… not 私は…), unless
    that subject is a shared phrase itself ("Jazz used to be my thing": what both are
    about); with no owner on either side, two others the two tell about are two people
    (:func:`_another_doer`: "My coworker Jen quit Google" not "Ken works at Google"; anyone
    may change one's thing: "Mom moved the retirement party" after "Dad's retirement party
    is on June 3rd"). A person alone is no subject ("My wife quit her job" changes nothing
    of "My wife loves spicy food"): one shared phrase must be a thing, or ``near`` an age
    turned of whom ``words`` told an age (:func:`_age_again`)."""
    subjects = _subjects(words, near, names)
    shared = {s for s in subjects if s.isascii()}
    habit = _habit_of(near)
    if habit is not None and habit in {fold(s) for s in subjects}:
        habit = None
    for subject in subjects:
        old, new = _owners(words[:600], subject, shared), _owners(near, subject, shared)
        if habit is not None:
            old, new = old or _leads(words[:600], fold(subject)), new or {habit}
        if old and new and all(_other_owner(a, b) for a in old for b in new):
            return False
        if not old and not new and _another_doer(words[:600], near, subject):
            return False
    named = _people_named(words[:600]) | _people_named(near) if subjects else set()
    return any(not _a_person(s, named) for s in subjects) or _age_again(words[:600], near)


def later_changes(
    candidates: list[Candidate],
    packed: Sequence[Candidate],
    similar: Similar,
    min_cosine: float = SHARED_MIN_COSINE,
) -> list[Candidate]:
    """``candidates`` with each ``packed`` result that is a later change of another packed
    result put before it (of several older ones, the closest by ``similar``, the cosine of
    the stored vectors; up to :data:`MAX_CHANGES` for one result): each chain of changes
    (A, then B changing it, then C changing B) stands where its first member ranked, the
    newest first; the changes are scored as the best of their chain and marked
    ``later_change`` and ``changes``. ``similar`` is asked only about pairs that pass the
    rest; when the vectors cannot be read (another process re-embedded the file) nothing
    is changed."""
    said = {id(c): change_sentences(own_words(c.episode)) for c in packed}
    if not any(said.values()) or len(packed) < 2:
        return candidates
    names = {n.lower() for c in candidates if (n := _speaker(c.episode))}
    links: dict[int, Candidate] = {}  # id(change) → the result it changes
    taken: dict[int, int] = {}  # id(result) → changes linked to it
    for change in sorted(packed, key=lambda c: c.episode.occurred_at, reverse=True):
        near = said[id(change)]  # (the newest first: they take a result's last places)
        if not near:
            continue
        anchors = [
            a
            for a in packed
            if a is not change
            and a.episode.occurred_at < change.episode.occurred_at
            and _speaker(a.episode) == _speaker(change.episode)
            and any(_about_the_same(own_words(a.episode), n, names) for n in near)
        ]
        if not anchors:
            continue
        try:  # (the change's vector read once, against each older result's)
            cosines = similar(change.episode.id, [a.episode.id for a in anchors])
        except EmbeddingError:  # (re-embedded by another process: the full text answered)
            return candidates
        close = [
            (cos, a)
            for a in anchors
            if (cos := cosines.get(a.episode.id, -1.0)) >= min_cosine
            and taken.get(id(a), 0) < MAX_CHANGES
        ]
        if close:
            anchor = max(close, key=lambda pair: pair[0])[1]
            links[id(change)] = anchor
            taken[id(anchor)] = taken.get(id(anchor), 0) + 1
    if not links:
        return candidates
    return _chains_first(candidates, links)


def _chains_first(candidates: list[Candidate], links: dict[int, Candidate]) -> list[Candidate]:
    """``candidates`` with each chain that ``links`` makes (a change → the result it
    changes; always an older one, so no cycle) where its best-ranked member was, the
    newest first, its changes marked and scored as the best of the chain."""
    parent: dict[int, int] = {}

    def find(key: int) -> int:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for change_key, anchor in links.items():
        parent[find(change_key)] = find(id(anchor))
    members = set(links) | {id(a) for a in links.values()}
    chains: dict[int, list[Candidate]] = {}
    for c in candidates:
        if id(c) in members:
            chains.setdefault(find(id(c)), []).append(c)
    out: list[Candidate] = []
    for c in candidates:
        if id(c) not in members:
            out.append(c)
            continue
        chain = chains.pop(find(id(c)), None)
        if chain is None:  # (placed with its chain)
            continue
        chain.sort(key=lambda m: m.episode.occurred_at, reverse=True)
        best = max(m.score for m in chain)
        for m in chain:
            older = links.get(id(m))
            if older is not None:
                m.score = max(m.score, best)
                m.components["later_change"] = 1.0
                m.components["changes"] = float(older.episode.id)
        out.extend(chain)
    return out
