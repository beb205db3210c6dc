"""Change words: the words of one message that say something changed (:data:`CHANGE`:
"switched", "moved … to", "pushed … to", "no longer", "not … any more", "I used to", "my wife
used to", "quit", "sold", "… now" ending its clause, "my vet is now Dr. Sato", "went up",
"dropped to $999", "turned 7", a death, a break-up or a job lost ("passed away", "broke
up", "got laid off": :data:`_DEATH`, :data:`ENDING`), 亡くなった, 離婚した, クビになった,
変えた, やめた, 引っ越した, 延期, 中止 (and in hiragana: かえた, ひっこした, ちゅうし), 今は, 前は…だった, 6歳になった, 値上げした, 6000円に上がった, 家賃が上がった, 家賃を8万円に上げた,
飲まないことにした …; and
the English corrections of :func:`corrections`, a value set against one of its kind: "it's
Tuesday, not Monday", "no wait, it's Tuesday"), and
the words around each that :func:`change_sentences` keeps: not negated, not a question, not a
plan or a maybe ("I won't quit", "should I switch", "I might switch", "right now",
変えようかな), with the sentence before when a pronoun, its object, stands for what changed
("… I can't afford it anymore"; not "It stopped raining"). Whose habit a "used to" or a 前は
tells (:func:`habit_of`) is read by the person words of :mod:`.owners`; :mod:`.changes` links
a message's change to the older memory it changes.
"""

from __future__ import annotations

import functools
import re

from ..lazy_re import lazy_compile
from ..text import APOSTROPHES, ENGLISH_STOPWORDS, fold, sentences
from ..values import closed_values, same_kind_change
from .owners import (
    JA_KIN_WORDS,
    JA_PET_WORDS,
    JA_TOPIC,
    PERSON_WORDS,
    PET_WORDS,
    habit_owner,
    ja_owner,
)

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
AGE = (
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

_JA_NUMERAL = "[0-9０-９〇一二三四五六七八九十百千万億]"
"""The last character of a number as written in Japanese (8, ８, 8万, 1万2千, 六十)."""
_JA_VALUE_AT = (
    f"(?:(?<={_JA_NUMERAL}円)|(?<={_JA_NUMERAL}ドル)|(?<={_JA_NUMERAL}(?:ユーロ|ポンド)))"
    "(?:に|まで|へ|も)?"
    f"|(?:(?<={_JA_NUMERAL}(?:キロ|kg))|(?<={_JA_NUMERAL}グラム))(?:に|まで|へ|も)?(?=[減へ増ふ])"
    "|(?<=[0-9０-９][人個匹回本冊台件枚])(?:に|まで|へ)"
)
"""Where a value with its unit, and its particle, end before a verb of :data:`_JA_UP_DOWN`:
an amount of money (2000円上がった, 6000円に上がった, 1万2千円, 五千円), a weight gone down or
up (5キロ減った, 60キロまで減った, 3キロ増えた; not ベンチプレスで60キロ上がった, a lift), or a
count in digits with に, まで or へ (30人に増えた, 週3回に増えた; not ケーキが1個減った, 1回減った
けど); not a clock time, a while or a date (3時, 30分, 19日: as often the moment, or a
commute's length, as a value changed), nor a count in words (一人, 二人, 一回: being alone or a
pair, "once"), nor a share (80%, 3割: a chance of rain, a download's progress, a battery's
charge), which changes a value only as a cost's (:data:`_JA_COST`: 消費税が10%になった)."""
_JA_AMOUNT = (
    f"(?:月|年|月額|年間)?{_JA_NUMERAL}(?:[,，.．]?{_JA_NUMERAL})*"
    "(?:円|ドル|ユーロ|ポンド|%|％|パーセント|割)"
)
"""A cost's value with its unit, what it is paid per before it (8万円, 月1万2千円, 1,200円, 10%,
3割): told after a cost or a pay (:data:`_JA_COST`) it says what it went up or down by or
became."""
_JA_COST = (
    "(?:(?<=[費賃税金])|(?<=(?<![時世交十0-9０-９])代)|(?<=(?<![材資原燃食飲肥塗香染味衣飼])料)"
    "|(?<=(?<![供配補需])給)|(?<=(?<![評株])価)|(?<=値段|価格|給与|収入|年収|月収|月謝))"
)
"""Where the words after a cost or a pay start, as the noun ends: 代, 費, 料, 賃, 給, 価, 税, 金
and 値段, 価格, 給与, 収入, 年収, 月収, 月謝 (家賃, 電気代, 会費, 給料, 時給, 物価, 料金, 貯金; not
材料, 資料, 食料, 供給, 評価, 株価, 時代, 20代); its verb right after it, or after が, も, は or a
comma and at most an "again" or a "bit" (また, さらに, ちょっと, も) and its value
(:data:`_JA_AMOUNT`): 電気代また上がった, 電気代がまた上がった, 家賃が8万円になった; never another
clause between (会費も払ったし気分上がった, 給料が出たから気分上がった, 家賃が高くて気分が上がった)."""
_JA_UP_DOWN = "(?:[上下]が|あが|さが|減|へ)(?=っ|りまし)|(?:増|ふ)え(?=[たてち]|まし)"
"""A value gone up or down, in the past or as so since (上がった, 下がりました, 増えた, 減ってる;
typed in hiragana: あがった, さがった, ふえた, へった): a change only after a value or a cost
(:data:`_JA_VALUE_AT`, :data:`_JA_COST`), for 雨が上がった, 階段を上がった, 子どもが増えた and
お腹がへった change no value."""
_JA_NOT_WISHED = (
    "(?!(?:っ|り?まし|し|され|されまし|にな(?:っ|りまし))?"
    "(?:て(?:ほし|欲し|くれ|もら[いえ]|るといい|たらいい|るはず|る気|るって|たりし|るんじゃ)"
    "|たく|たら(?!しい)|たり|たんじゃ|たはず|たか(?!ら)|たと(?:して|した|しても)|たにしても"
    "|たわけ|たこと(?:は|が|も)?(?:な[いかく]|無|あ)|たが(?:っ|る)|たきゃ))"
)
"""What a Japanese value verb, with its own ending (上がっ, 減りまし, 値上げされ, 値下げになっ), is not
followed by: a wish (上がってほしい, 上がってくれ〜, 上がってもらいたい, 値上げされたくない,
上がってるといいな, 上がってたらいいな, 上げたかった, 上げたがってる, 上げたがる, 上げたきゃ), a
guess (上がってるはず, 上がったはず, 上がってる気がする, 上がってるんじゃない, 上がってたりして), a
question (上がったか, 上がったかな),
hearsay passed on as such (上がってるって噂), a condition or a supposition (上がったら,
上がったとしても, 上げたにしても; 上がったらしい is told), a denial (上がったわけじゃない), what has
or has not happened ever (上げたことはない, 上げたことがある) or a back and forth (上がったり
下がったり); a reason, a complaint, a worry or a wait after it is told of a change
(上がったから引っ越す, 家賃上がって嫌だ, 給料下がって心配)."""
_JA_DONE = f"(?=(?:し|され|しまし|されまし)[たて]|にな(?:っ|りまし)){_JA_NOT_WISHED}"
"""What makes 値上げ, 値下げ, 値上がり or 値下がり a change: done, in the past or its て-form
(値上げされた, 値上がりした, 値下げになった, 値上げされてた, 値上げされて最悪, 値上がりして困る);
not a wish (値上げしてほしくない, 値上げされたくない: :data:`_JA_NOT_WISHED`), a worry or a
mention (値上がりが心配, 値下がり待ち, 値上げ反対, 値上げのニュース見た, 値上げの話は無くなった)."""
_JA_RAISED = (
    "(?:引き)?[上下]げ(?:(?:られ(?:ちゃっ|てしまっ)?|ちゃっ|てしまっ)(?=て(?!も))"
    "|(?:られ)?(?:て(?:くれ(?:てい?)?|もら[っえ]|もらいまし|くださっ|くださいまし|き|い|しまっ"
    "|しまいまし)?|ちゃっ|ちゃいまし|ちまっ|やがっ)?(?:まし)?(?=た))"
)
"""A value raised or cut by someone, done: in the past, as so since or as it came
(上げた, 下げました, 引き上げた, 上げられた, 上げちゃった, 上げられちゃった, 上げてしまった,
上げちゃいました, 下げやがった, 上げてた, 上げていた, 上げていました, 上げてきた, 上げてくれた,
上げてくれてた, 上げてもらった, 上げてもらえた, 上げてくださいました) or
suffered, in its て-form (上げられて最悪, 上げちゃって最悪); not planned, asked, advised or
granted (上げるって, 上げるらしい, 上げようかな, 上げちゃおうかな, 上げないで, 上げてください,
上げた方がいい, 上げられても, 上げてもいい), and in kanji only, for あげた is as often "gave"
(お金をあげた, おやつあげてた)."""
_JA_FROM = (
    "(?:(?:来|今|再来|翌|先々?)(?:月|週|年度?)|[0-9０-９一二三四五六七八九十]{1,2}月"
    "(?:[0-9０-９一二三四五六七八九十]{1,3}日)?|今度|次回)から[、，,]?"
)
"""The time a new value holds from, between a cost and its value (会費を来月から6000円に
上げた, 家賃が4月から8万円になった, 家賃が先月から8万円になった)."""
JA_VALUE_VERB = lazy_compile(
    f"(?:値[上下](?:げ|が)|{_JA_UP_DOWN}|(?:高|安|たか|やす)くな(?=っ|りまし)"
    "|(?:に|まで|へ)な(?=っ|りまし)|(?:引き)?[上下]げ(?=[たまらてちや]))[\u3041-\u3096]{0,16}$"
)
"""A Japanese value verb with its ending, ending a phrase (上がった, 値上がりした, 増えた,
高くなった, になった, 上げた; an ending of 16 kana at most, so a search takes a time linear in
the text on any input): as two messages share it, it names nothing (テンション上がった and
家賃上がった share 上がった), nor, as :mod:`.changes` reads it, with a particle, a unit or
one character more before it (電気代が上がった and ガス代が上がった share 代が上がった;
家賃が7万円になった and 会費が5000円になった, 円になった; 家賃を7万円に上げた and 会費を6000円に
上げた, 円に上げた)."""
_JA_DID = (
    "(?:し(?:た|まし|ちゃ|ちま|て(?!も(?!ら))|と(?:い|きまし)た)|され|にな(?:っ|りまし)"
    "|する(?:こと|事)にな)"
)
"""What makes a change noun (引っ越し, 転職, 変更, キャンセル) an event, done or decided: in the
past or its て-form (引っ越した, 引っ越しました, 引っ越してきた, 引っ越しした, 転職しちゃった,
変更された, 変更してもらった, キャンセルになった, 転職して3年), done ahead as typed (変更しといた,
キャンセルしときました), or decided for one (転職することになった, 変更する事になりました); not the
noun as a modifier or a topic (引っ越し祝い, 引っ越しの荷造り, 転職の相談, 変更点, キャンセル料,
キャンセル待ち), which tells no change, nor a supposition or a suggestion (引っ越しても,
引っ越した方がいいかな)."""
_JA_FINISHED = (
    "(?:[、，,]?[がもは]?[、，,]?(?:無事|ぶじ|やっと|ようやく|ついに|遂に|全部|ぜんぶ)?[、，,]?"
    "(?:終わ|おわ)(?:った(?!ら)|りました)|済(?:んだ(?!ら)|みました|ませた|み)|完了)"
)
"""A move told as finished, after 引っ越し (引っ越し終わった〜, 引っ越しが終わった, 引っ越し無事
終わった！, 引っ越し、やっと終わった, 引っ越し済んだ, 引っ越し完了): the move is done, as 引っ越した
says; not 引っ越しの荷造り終わった (the packing done), nor 引っ越し終わったら (a condition)."""
_JA_JOB_DONE = "(?:先?が?決ま|決め(?:た|まし)|成功(?!を|し(?:たい|たら|ますよう)|する|でき|祈|率|者)|でき(?:た|まし))"
"""What makes 転職 a new job had, past its :data:`_JA_DID`: found or decided (転職先決まった,
転職決めた), succeeded (転職成功した, 転職成功！) or managed (転職できた); not a wish or a rate
(転職成功したい, 転職成功率, 転職できたらいいな: :data:`_IF`)."""
_KANA_AT = "(?:(?<![\u3041-\u3096])|(?<=[にをはもがへ])|(?<=[^っ]と))"
"""Where a change verb typed in hiragana starts: after a particle or no hiragana (せきがかわった;
not the かわった of いれかわった), and わかれた after と, one's partner (かれしとわかれた; not
みちがわかれた, 分かれた, nor the と of やっと, ちょっと: ちょっとかわった味). かえた counts only
after に, what it was changed to (水曜にかえた, スマホにかえた), or as かえてもらった after no
hiragana (美容院かえてもらった): it is as often 買えた, "could buy" (チケットかえた), or the end of
つかえた, むかえた."""
_JA_PARTED = (
    "たあと|た後|てから"
    "|て[、，,]?(?:帰|かえ|家|駅|電車|バス|一人|ひとり|解散|別々|べつべつ|それぞれ|向か|歩)"
)
"""What follows a 別れ that is a parting at a place, not a break-up: what was done after
it (別れたあと一人でカフェ行った, 別れてから買い物した, 別れて帰った, 別れて電車乗った; not
別れたから心配, a worry)."""
_JA_PARTED_AT = lazy_compile(
    "(?<!電話)(?<!メール)(?<!ライン)(?<=[\u4e00-\u9fff々\u30a1-\u30ffー])で[^、，,。！？!?]*$"
)
"""A place or a means before a 別れ in its clause, a parting there (駅で別れた, 改札で
わかれた, 翔太と駅で別れた); by 電話, メール or ライン it is a break-up told so."""
_KANA_NOUN_ENDS = "(?=[にしさだでや]|って|$|[^\u3040-\u309f])"
"""What follows a change noun typed in hiragana, えんき, へんこう or ちゅうし: a particle, する
or the copula, って, or no hiragana (えんきになった, ちゅうしだって; not ちゅうしゃ, ちゅうしん,
nor the えんき of えんきょり, せんえんきっぷ)."""

_LONG_AGO = r"(?! (?:\w+ ){0,2}(?:years|decades) ago)"
"""What does not follow a death that is news: a time long past ("My grandpa died ten years
ago" tells an old death again, no change since what was told of him)."""
_NOT_DYING = (
    r"(?! (?:a little |a bit )?(?:laughing|inside|of (?:embarrassment|shame|boredom|laughter"
    r"|cringe|cuteness|jealousy|envy|excitement|happiness|joy|fright|thirst|hunger"
    r"|exhaustion)|(?:my|your|his|her|our|their|its) hair)\b)"
)
"""What does not follow a "died" that is a death: an idiom ("Grandpa died laughing at my
joke", "She died inside", "Biscuit died of embarrassment lol") or a "dyed" misspelled ("Mom
died her hair red"); "died of cancer" is one."""
_DEATH = (
    rf"passed away{_LONG_AGO}|died{_NOT_DYING}{_LONG_AGO}"
    r"|had to put (?:\w+ ){1,3}?(?:down|to sleep)|crossed the rainbow bridge"
)
"""A death, of a person or a pet ("Biscuit passed away last night", "My grandpa died", "We
had to put Biscuit down", "We had to put Max to sleep"): it changes every fact told of them,
and counts only after a being, a put down only of a pet (:func:`_a_being`: not "I almost
died laughing", "My phone died", "Mia put her kids to sleep")."""
_JA_DEATH = (
    "亡くな(?=っ|りまし)(?!って(?:もう|から)?[0-9０-９一二三四五六七八九十何]+年)|他界|永眠|虹の橋"
    "|死ん(?=だ(?!ように|みたい)|じゃ|でしま)"
)
"""A death in Japanese (きなこが亡くなった, 祖父が他界した, 虹の橋を渡った, 死んじゃった; not
死んだように寝た, slept like a log, nor おじいちゃんが亡くなって10年, an old death told again),
counted only after a being as :data:`_DEATH` is."""
DEATH = lazy_compile(f"{_DEATH}|{_JA_DEATH}", re.IGNORECASE)
"""A death, English or Japanese (:data:`_DEATH`, :data:`_JA_DEATH`)."""
_BEINGS = PERSON_WORDS | PET_WORDS | frozenset("he she him her they them".split())
"""Whom a death is told of: a person word, a pet word or a pronoun (a name besides)."""
_BROKE_UP = (
    r"(?:broke|split) up(?! (?:the|a|an|this|that|these|those|my|your|his|her|our|their|its|it"
    r"|them|some|all|into|in (?:two|three|four|half|pairs|groups|teams|\d)|\d+|two|three|four"
    r"|fights?|groups?)\b)"
)
"""A break-up, "broke up" or "split up" with no object after it ("Jake and I broke up", "We
split up last week", "I broke up with him"; not "I broke up the fight", "We split up the
bill", "We split up into two groups")."""
_SEPARATED = (
    r"(?:we|we're|we've|they|they're|got) (?:just )?separated"
    r"(?! (?:at|from|during|by|when|while|in (?:the|a)|on the|for (?!good)\w+)\b)"
)
"""A separation of a couple ("We separated last year", "My parents got separated"; not "We
got separated at the mall", "separated from the group", "separated for an hour")."""
_DUMPED = (
    r"dumped (?:me|him|her)(?=\s*(?:$|[^\w\s']|(?:for|because|after|before|last|yesterday|today"
    r"|this|on|over|by|via|and|but|so|lol|haha|again|when|out)\b))"
)
"""A partner left, "dumped me", "dumped him", "dumped her" ending its clause or before a
time or a reason ("She dumped me", "He dumped her last week"; not "The kids dumped her toys
everywhere")."""
ENDING = lazy_compile(
    rf"{_DEATH}|{_JA_DEATH}|\b(?:{_BROKE_UP}|divorced|{_SEPARATED}|{_DUMPED})|別れ|わかれ|離婚|別居",
    re.IGNORECASE,
)
"""The end of someone or of a bond with them, a death or a break-up ("Jake and I broke up",
翔太と別れた, 離婚した): unlike other news of a person ("My wife quit her job"), it changes
every fact told of them, so the person alone is what it shares (:mod:`.changes`)."""
_BEING_BEFORE = lazy_compile(
    r"(?:^|\s)(?P<who>[\w']+)(?:\s+(?:just|finally|suddenly|peacefully|sadly|recently"
    r"|has|have|had|unexpectedly|officially))*\s*$"
)
"""The word a death is told of, just before it, past an adverb or an auxiliary ("Biscuit
peacefully passed away", "Grandpa has passed away")."""
_JA_THING_BEFORE = lazy_compile(
    "(?:(?:スマホ|携帯|ケータイ|電池|バッテリー|充電|パソコン|PC|車|ゲーム|目|顔|心|株|推し)[がはも、]*"
    "|(?:ゲーム|試合|ボス戦?|マイクラ|スマブラ)(?:で|の中で)[、]*|笑い|すぎて|過ぎて"
    "|[0-9０-９一二三四五六七八九十何]+年(?:ほど|くらい|ぐらい)?前に?[、]*)$",
    re.IGNORECASE,
)
"""What a Japanese death is not told after: a thing said to die in slang (スマホが死んだ, the
battery; 目が死んでる), a game one lost (ゲームで死んだ), a laugh or an excess (笑い死んだ,
恥ずかしすぎて死んだ), or a time long past (10年前に亡くなった: an old death told again)."""


_JA_NOT_A_BEING = (
    "私|わたし|あたし|俺|おれ|僕|ぼく|うち|自分|今日|きょう|昨日|きのう|今朝|今夜|今週|今月|今年"
    "|さっき|最近|今回|今度|午前|午後|週末|朝|夜|昼|マジ|まじ|ほんと|本当"
)
"""Who is not the being a 死んだ is told of, as its subject: the speaker, who says so of
being worn out (私は死んだ, 俺も死んだ), or a time (今日は死んだ: a hard day)."""
_JA_WHEN = (
    "(?:もう|急に|突然|とうとう|ついに|遂に|昨日|きのう|今朝|昨夜|先週|先月|正式に"
    "|[\u4e00-\u9fff\u30a1-\u30ffー]{1,6}で)[、，,]?"
)
"""What may come between a being and its end: a time, a suddenness or a cause (急に, 昨日,
病気で; not a clause, 走らされて, 喧嘩して, してたら)."""
_JA_DIED_OF = lazy_compile(
    f"(?:^|(?<=[、，,\\s。！？!?の]))(?!(?:{_JA_NOT_A_BEING})[がはも])"
    f"[^\\s、，,。！？!?]{{1,12}}?[がはも][、，,]?(?:{_JA_WHEN}){{0,2}}$"
    "|^[\\s、，,]*[\u4e00-\u9fff\u30a1-\u30ffー]{1,8}で[、，,]?$"
)
"""What a Japanese 死んだ is told after to be a death: its being as its subject, with が, は
or も and at most a time or a cause between (ハムスターが死んじゃった, 猫が昨日死んだ, 祖父は病気で
死んだ), or a cause alone (事故で死んだ); not after another's doing or a clause of the
speaker's (先輩に走らされて死んだ, 弟とゲームしてたら3回死んだ, 暑すぎて死んじゃう: being
worn out), nor with the speaker or a time as its subject (私は死んだ, 今日は死んだ)."""


def _a_being(before: str, death: str) -> bool:
    """Whether a death (``death``, ``before`` it its sentence's words) is told of a being:
    in English a person word, a pet word or a name just before it, or a pet word or a name
    (no person word) within a put down ("Biscuit passed away", "My grandpa died", "We had to
    put Biscuit down"; not "I almost died laughing", "My phone died"), in Japanese anything
    but a thing slang kills (:data:`_JA_THING_BEFORE`: not スマホが死んだ), and a 死んだ only
    of its subject (:data:`_JA_DIED_OF`: not 先輩に走らされて死んだ)."""
    if not death.isascii():
        if death.startswith("死") and _JA_DIED_OF.search(before) is None:
            return False
        return _JA_THING_BEFORE.search(before) is None
    if death.lower().startswith("had to put"):
        last = death.split()[-3 if death.lower().endswith("sleep") else -2]
        pet = last.lower().removesuffix("'s")
        return pet in PET_WORDS or (last[:1].isupper() and pet not in _BEINGS and last != "I")
    m = _BEING_BEFORE.search(before)
    who = m["who"] if m is not None else ""
    return who.lower().removesuffix("'s") in _BEINGS or (who[:1].isupper() and who != "I")


_JA_ONES_HEAD = (
    "(?:^|(?<=[、，,\\s。！？!?「『（(]))(?P<head>(?:(?:うち|私|わたし|あたし|僕|俺)の)?"
    f"(?:(?P<pet>{JA_PET_WORDS}|彼氏|旦那|夫|妻|嫁)の?)?)"
)
"""What may stand before a being told of as a subject: the start of its clause, a "my" and a
pet or a partner word it names (うちの猫のきなこ, 彼氏の翔太, 夫の); not another's
(友達のお母さん, 姉の猫)."""
_JA_ENDED_ONE = lazy_compile(
    f"{_JA_ONES_HEAD}(?!(?:{_JA_NOT_A_BEING})[がはもと])"
    "(?P<who>(?:(?!の)[\u3041-\u3096\u30a1-\u30ffー\u4e00-\u9fff々]){1,10}?)"
    f"(?P<with>[がはも]|と[はも]?)[、，,]?(?:{_JA_WHEN}){{0,2}}$"
)
"""A being as the subject of its end, just before it: Xが, Xは, Xも before a death and Xと
before a break-up, at most a time or a cause between (きなこが亡くなった, 夫と離婚しました)."""
_JA_KIN = lazy_compile(
    f"お?(?:{'|'.join(JA_KIN_WORDS)}|ばあ|じい|かあ|とう|にい|ねえ|彼女?)(?:さん|ちゃん|くん|様)?"
)
"""A Japanese person word, as a being's own (母, お母さん, おばあちゃん, 彼女): after a pet or
a partner word it is theirs (夫の母), not the speaker's."""
_JA_PARTNER = lazy_compile("夫|妻|旦那(?:さん)?|主人|嫁|彼氏|彼女|彼")
"""The person words a break-up is told of: a partner (夫と離婚した, 彼氏と別れた; not 友達と
別れた, 母と別れた, parted for the day)."""
_HONORIFIC_END = lazy_compile("(?<=.)(?:さん|ちゃん|くん|様)$")
"""The honorific a being may be called with one time and not the next (きなこちゃん)."""


def ja_ended_one(said: str) -> str | None:
    """The being a Japanese sentence ``said`` tells the end of as its subject, without an
    honorific: the one dead (きなこが亡くなった: きなこ; うちの猫が虹の橋を渡った: 猫) or the
    speaker's partner or a name left (夫と離婚しました: 夫; 翔太と別れた: 翔太), if any; not
    someone of another's (夫の母が亡くなった, 友達のお母さんが亡くなった), nor a parting at a place
    or of a day (翔太と駅で別れた, 友達と別れた)."""
    for m in ENDING.finditer(said):
        if m.group().isascii() or CHANGE.match(said, m.start()) is None:
            continue
        before = said[: m.start()]
        death = DEATH.match(said, m.start()) is not None
        if death and not _a_being(before, m.group()):
            continue
        if not death and _JA_PARTED_AT.search(before) is not None:
            continue
        one = _JA_ENDED_ONE.search(before)
        if one is None or one["with"].startswith("と") is death:
            continue
        kin = _JA_KIN.fullmatch(one["who"]) is not None
        if kin and (one["head"] or (not death and _JA_PARTNER.fullmatch(one["who"]) is None)):
            continue  # (夫の母: his mother; 友達と別れた, 母と別れた: parted for the day)
        return _HONORIFIC_END.sub("", one["who"])
    return None


def ja_held(words: str, one: str) -> bool:
    """Whether ``words`` (an older memory's) tell of the being ``one`` (as
    :func:`ja_ended_one` gives it) as a subject or an owner: at its clause's start or after a
    "my" and a pet or a partner word, an honorific aside, then が, は, も, って or の
    (うちの猫のきなこはチュール大好き, おばあちゃんは料理上手, 夫の実家; not 友達のお母さんは)."""
    held = f"{_JA_ONES_HEAD}{re.escape(one)}(?:さん|ちゃん|くん|様)?(?:[がはもの]|って)"
    return re.search(held, words) is not None


def _retired_one(before: str, after: str) -> bool:
    """Whether a "retired" (``before`` and ``after`` it its sentence's words) tells a person
    left work: a person word, a pronoun or a name just before it and no object after ("I
    retired", "Dad retired last month", "He's retired now"; not "I retired my old laptop",
    "The team retired his jersey", "my retired dad")."""
    if re.match(
        r"\s+(?:my|your|his|her|our|their|its|the|a|an|this|that|these|those|it|them|some)\b",
        after,
        re.IGNORECASE,
    ):
        return False
    m = _BEING_BEFORE.search(before)
    who = (m["who"] if m is not None else "").lower()
    who = re.sub(r"'(?:s|m|re|ve)$", "", who)
    name = m is not None and m["who"][:1].isupper() and who not in ENGLISH_STOPWORDS
    return who in _BEINGS or who in {"i", "we"} or name


_TOKEN = (
    r"(?:(?<![^\s,;!?()（）「」])[^\s,;!?()（）「」]+(?:,\d{3}(?!\d)[^\s,;!?()（）「」]*)*"
    r"(?:\s?[ap]\.?m\b\.?)?)"
)
"""One word of a correction's value as written ("Tuesday", "$1,950", "7 pm", "19th", 火曜),
read from its start only (not from each character of a long word), a unit it is paid by
after its thousands ("$1,950/mo")."""
_SIDE = rf"(?:(?:on|at|in|by|the|my|our|on the|at the)\s+)?{_TOKEN}(?:\s+{_TOKEN})?"
"""A side of a correction: a word or two, with a preposition or a determiner before it
("Tuesday", "the 19th", "at 7pm", "my sister")."""
_ENDS = r"(?=\s*(?:$|[.!;:,)\u2013\u2014\u2026]|[^\x00-\x7f]|(?:lol|haha)\b))"
"""The end of the clause a correction's value ends, an emoji or a "lol" after it fine
("…, not Monday." "…, not Monday 😅"; not "…, not Monday I think")."""
_DASH = r"(?:\s*[\u2013\u2014\u2026]|\s+--?|\.{2,})"
"""A dash or an ellipsis between two sides ("Not Monday — Tuesday", "Tuesday... not Monday")."""
CORRECTION = lazy_compile(
    r"(?<!\w )(?P<opener>no,? wait|wait,? no(?! (?:one|more|way|problem|idea)\b)|scratch that"
    r"|correction(?=\s*:)|i mis-?spoke|my bad|make that"
    r"|i meant(?! (?:to|it|well|what|that|for|no|nothing|every|business)\b)"
    r"|i said\b[^.!?]{1,60}?\bbut (?:i )?meant"
    r"|actually,? (?:it's|it is|it was|its|that's|that is|that was|they're|they are|it'll be))\b"
    r"|(?<!\w )(?P<bare>actually),? (?=[^,;:.!?]+$|[^,;:.!?]+[,;:.!?])"
    rf"|(?P<x1>{_SIDE}){_DASH}?,?\s+not\s+(?P<y1>{_SIDE}){_ENDS}"
    rf"|\bnot\s+(?P<y2>{_SIDE}),?\s+but\s+(?:(?:it's|it is|it was|it'll be)\s+)?"
    rf"(?P<x2>{_SIDE}){_ENDS}"
    rf"|\bnot\s+(?P<y3>{_SIDE}){_DASH}\s*(?P<x3>{_SIDE}){_ENDS}"
    rf"|(?P<y4>{_TOKEN}){_DASH}?,?\s*\bno,\s+(?P<x4>{_SIDE}){_ENDS}",
    re.IGNORECASE,
)
"""A correction of what was just said, in English (じゃなくて's counterpart), as a shape:
:func:`corrections` keeps those that set a value against another of its kind. "X, not
Y", "not Y but X", "not Y — X" and "Y — no, X", each side a word or two ending its clause;
or an opener that takes back what was said at a clause's start ("no wait", "wait, no",
"scratch that", "correction:", "I misspoke", "sorry, I meant", "my bad", "make that",
"actually it's …", "I said Monday but I meant …"; not "there's no wait", "can't wait", "I
meant to call you", "I actually liked it")."""
_NAME = lazy_compile(r"(?<![\w'])[A-Z][a-z]+(?:'s)?\b(?!')")
"""A word with a capital, a name's ("Sato", "Kyoto")."""
_NOT_NAMES = frozenset({"i", "i'm", "i'll", "i've", "i'd", "ok", "okay", "oh", "omg", "lol"})
"""Capitalised words that name no one ("I", "Oh")."""
_KIN = frozenset(
    "sister brother mother father mom mum dad wife husband son daughter boss partner"
    " girlfriend boyfriend aunt uncle cousin grandma grandpa friend".split()
)
"""The people a "my X, not my Y" sets against each other ("My sister, not my brother")."""
_CLAUSES = lazy_compile(r"[,;:.!?](?!\d)|[\u2013\u2014]")
"""Where the clause after a retracting opener ends: what it takes back is in that clause
("Scratch that, the meeting is at 3"; not "Actually, it's fine, yoga on Monday is
relaxing")."""
_A_LIST = lazy_compile(r"\s*,\s*(?:and|or)\b", re.I)
"""A list going on after a correction's second side ("Tuesday, not Monday, and Friday")."""


def _names(side: str, sentence: str, at: int) -> list[str]:
    """The names in ``side``, found at ``at`` of ``sentence``, not its first word (a
    sentence starts with a capital: "Coffee, not tea")."""
    lead = len(sentence) - len(sentence.lstrip(" \"'(\u201c"))
    return [
        n.group()
        for n in _NAME.finditer(side)
        if at + n.start() > lead and n.group().lower() not in _NOT_NAMES
    ]


def _set_against(x: str, y: str, sentence: str, at_x: int, at_y: int) -> bool:
    """Whether side ``x`` replaces side ``y``: a value of the same kind, another
    (:func:`.values.same_kind_change`: "Tuesday, not Monday", "7pm, not 6pm", "火曜, not
    月曜"), two names ("It's Sato, not Tanaka"; not "Coffee, not tea", a sentence's first
    word), or two of the family ("my sister, not my brother")."""
    if same_kind_change(y, x):
        return True
    last = (x.split()[-1].lower().rstrip(".!?"), y.split()[-1].lower().rstrip(".!?"))
    if _names(x, sentence, at_x) and _names(y, sentence, at_y):
        return last[0] != last[1]  # (not "It's Monday, not Monday.")
    kin = last
    return kin[0] in _KIN and kin[1] in _KIN and kin[0] != kin[1]


def corrections(sentence: str) -> list[re.Match[str]]:
    """The corrections of ``sentence`` (:data:`CORRECTION`) that set a value against the
    one it replaces: two sides of the same kind (:func:`_set_against`: "It's Tuesday, not
    Monday 😅", "Rent is $1,950, not $1,800", "It's not Monday but Tuesday", "Not Monday —
    Tuesday"; not "It's a marathon, not a sprint", "I'm tired, not sick", "It's not a bug but
    a feature", nor a list, "Tuesday, not Monday, and Friday"), or an opener with a value or
    a name after it ("No wait, it's Tuesday", "Actually, Tuesday", "Make that 7pm", "Sorry, I
    meant Ken"; not "No wait, that's amazing!", "Actually, it's fine", "Actually, it's
    raining", "Sorry, I meant to call")."""
    out = []
    for m in CORRECTION.finditer(sentence):
        if m["opener"] or m["bare"]:
            clauses = [c for c in _CLAUSES.split(sentence[m.end() :]) if c.strip()]
            # ("actually it's" states in its own clause what it takes back: "Actually, it's
            # fine, yoga on Monday is relaxing" takes nothing back; "I misspoke earlier, the
            # class is on Wednesday", the clause after)
            actually = m["bare"] or m["opener"].lower().startswith("actually")
            clause = ", ".join(clauses[: 1 if actually else 2])
            if m["bare"] and len(clause.split()) > 3:
                continue  # (a value or a name alone: "Actually, Tuesday.", not "Actually, I …")
            if closed_values(clause) or _names(clause, sentence, m.end()):
                out.append(m)
            continue
        pair = next(n for n in "1234" if m[f"x{n}"] is not None)
        x, y = f"x{pair}", f"y{pair}"
        if _A_LIST.match(sentence, m.end()) is not None:
            continue
        if _set_against(m[x], m[y], sentence, m.start(x), m.start(y)):
            out.append(m)
    return out


_JA_NOT_THIS = lazy_compile(
    "(?P<y>[^、。！？!?\\s]{1,12}?)(?:じゃなくて|じゃなく|ではなく)(?=[、，,]?[^、。！？!?\\s])"
)
"""A Japanese correction's replaced side, the words before じゃなくて with its new side
after (月曜じゃなくて火曜, 18時じゃなくて19時から)."""


def replaced_values(text: str) -> set[tuple[str, str]]:
    """The values ``text`` (its first 2,000 characters) says were wrong, with their kinds
    (:func:`.values.closed_values`): the "not" side of its corrections ("it's Tuesday, not
    Monday": the weekday Monday; "Rent is $1,950, not $1,800"), and what comes before a
    じゃなくて (月曜じゃなくて火曜); none for a correction that names only the new value
    ("Actually, Tuesday")."""
    found: set[tuple[str, str]] = set()
    for sentence in sentences(text[:2000].translate(APOSTROPHES)):
        for m in corrections(sentence):
            side = next((m[f"y{n}"] for n in "1234" if m[f"y{n}"] is not None), None)
            found |= closed_values(side) if side is not None else set()
        for m in _JA_NOT_THIS.finditer(sentence):
            found |= closed_values(m["y"])
    return found


CHANGE = lazy_compile(
    r"\b(?:nowadays|these days|anymore|no longer|instead(?! of)"
    r"|any more(?=\s*(?:$|[^\w\s']|(?:and|but|so|now|because|since|though)\b))"
    r"|switch(?:ed|ing)?(?! up)"
    rf"|chang(?:ed|ing) {_WORD}{{0,3}}?{_ASIDE}?(?:to|from|my mind)"
    rf"|mov(?:ed|ing) {_WORD}{{0,3}}?{_ASIDE}?(?:to|into|out|house|away|back)"
    rf"|quit|stopped|gave up|giving up|sold|replaced|{_BROKE_UP}|{_SEPARATED}|{_DUMPED}"
    r"|lost (?:my|his|her|their|our) job|(?:got|was|were|been) (?:fired|let go|laid off|sacked)"
    r"|laid (?:me |him |her |them )?off|retired"
    rf"|{_DEATH}"
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
    r"|(?:is|are|'s|'re) now(?=\s+[\w$])"
    r"|(?:went|gone|goes|go) (?:up|down)"
    r"(?=\s*(?:$|[^\w\s']|(?:again|and|but|so)\b|(?:to|by) [$\d]))"
    rf"|(?:dropped|rose|fell|jumped|climbed) (?:to|by) {_AMOUNT}"
    rf"|(?:raised|lowered|cut|increased|decreased|upped) (?:\w+ ){{0,3}}?(?:to|by) {_AMOUNT}"
    rf"|turned {AGE})\b"
    r"|今は|今では|最近は|これからは|変え|変わっ|(?<!着)替え|買い換え|乗り換え(?!て)"
    rf"|引っ?越(?=し?{_JA_DID}|す(?:こと|事)にな|し先?が?決ま|し{_JA_FINISHED}|しお疲れ|しおつかれ|$)"
    rf"|転職(?={_JA_DID}|{_JA_JOB_DONE}|$)"
    rf"|(?:変更|キャンセル)(?={_JA_DID}|(?:が|も)?あ(?:っ|りまし)|だ|です|な[んの]|$)"
    r"|売っ(?=た|ちゃ|ちま|払|ぱら|て(?![るいたまおもほくなん])|$)|売(?=る(?:こと|事)にな)"
    r"|売り(?=まし[たて])"
    rf"|別れ(?=た|まし|ちゃ|ちま|て(?!も)|る(?:こと|事)にな|$)(?!{_JA_PARTED})"
    r"|辞め|やめ|代わりに|じゃなくて|ではなく|じゃなく|転校|移っ|移し|延期"
    rf"|{_JA_DEATH}|クビ(?=に(?:な|され))|首にな(?=っ)|解雇(?=され|に)|リストラ(?=され|に[なあ])"
    rf"|(?:離婚|別居)(?={_JA_DID}|$)|別居(?=中(?!の))"
    r"|(?<![雨荒]天)中止|リスケ|退職(?![祝金])|転勤(?!族)"
    rf"|{_JA_PLANS}(?:が|は|も|を)?[^。！？!?\n]{{0,8}}?(?:延び|延ばし|ずれ|ずらし)"
    rf"|{_JA_DAY}ずらし|{_JA_PLANS}(?:が|は|も)?(?:なくなっ|無くなっ)"
    r"|もう[^。！？!?\n、，,]{0,10}?(?:(?:んで|って|いて)|[てで]い"
    r"|(?<=[えけげせぜてでねべぺめれきぎしじちぢびぴみり見寝着居出])て)(?:ない|なかっ|ません)"
    r"|ずれ込|前倒し|繰り上げ|繰り下げ"
    r"|訂正"
    r"|(?<=に)かえ(?=た|まし|ちゃっ|てん)|(?<![\u3041-\u3096])かえ(?=てもらっ)"
    rf"|{_KANA_AT}(?:かわ(?=った|りまし|っちゃ)"
    rf"|(?<=と)わかれ(?=た|まし|ちゃっ)(?!{_JA_PARTED}))"
    rf"|ひっこ(?=し?{_JA_DID}|す(?:こと|事)にな|し{_JA_FINISHED}|$)|(?:えんき|へんこう){_KANA_NOUN_ENDS}"
    rf"|(?<!てん)ちゅうし{_KANA_NOUN_ENDS}"
    r"|(?<=[0-9０-９〇一二三四五六七八九十])(?:歳|才)にな(?=っ|りまし)|(?:こと|事)にし(?=た|まし|て)"
    rf"|値[上下](?:げ|がり){_JA_DONE}"
    rf"|(?:{_JA_VALUE_AT})(?:{_JA_UP_DOWN}){_JA_NOT_WISHED}"
    rf"|{_JA_COST}[がもは]?[、，,]?(?:(?:また|さらに|ちょっと|も)[、，,]?)?(?:{_JA_FROM})?"
    rf"(?:{_JA_AMOUNT}(?:(?:に|まで|へ|も)?(?:{_JA_UP_DOWN})|(?:に|まで)な(?=っ|りまし))"
    rf"|{_JA_UP_DOWN}|(?:高|安|たか|やす)くな(?=っ|りまし)){_JA_NOT_WISHED}"
    rf"|{_JA_COST}[をもは]?[、，,]?(?:(?:また|さらに)[、，,]?)?(?:{_JA_FROM})?"
    rf"(?:{_JA_AMOUNT}から[、，,]?)?{_JA_AMOUNT}(?:に|まで|へ)"
    rf"{_JA_RAISED}{_JA_NOT_WISHED}"
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
ずれ込んだ, 前倒し; 退職した, 転勤になった (not 退職祝い, 退職金, 転勤族); 引っ越した, 転職した,
変更になった, キャンセルした, 売った, 別れた as events, done or decided (:data:`_JA_DID`:
引っ越すことにした, 転職が決まった, 売っちゃった, 売りました, 別れて…; not 引っ越し祝い, 引っ越しの荷造り,
転職の相談, 変更点, キャンセル料, 売ってる, a shop's, 別れ際, 別れても, nor a parting at a place,
駅で別れた, 別れたあと: :data:`_JA_PARTED`); 別居中; the hiragana of the
kanji ones typed as on a phone, where the kana is no everyday other word (:data:`_KANA_AT`,
:data:`_KANA_NOUN_ENDS`: ジム、水曜にかえたわ, せきがかわった, ひっこした, えんき, へんこう, ちゅうし;
not かえった, went home, チケットかえた, could buy, つかえた, ちゅうしゃ, えんきょり); "no longer" as もう with a
negated ている form within ten characters (もう大阪には住んでない, もう飲んでない, もう働いてない,
もう食べていない, もう実家の近くには住んでない, and the short もう食べてない, もう見てない after an
-eru or -iru stem; not もう待てない, もう捨てない, もう勝てない, a can't or a won't);
"I used to …" after its subject, an adverb between or none ("I used to hate coffee", "I never
used to like coffee", "I also used to live in Kyoto", "My wife used to love jazz": a person's
habit, :func:`.owners.habit_owner`; not "got used to", "I'm used to", "it used to", "you used to",
which tells the one spoken to), and in Japanese 前は, 昔は or 以前は at a sentence's or a
topic's start with a past state within twenty characters of its clause (前はジャズが好きだった,
妻は昔はタバコ吸ってた, 前は平日も空いてたのに; not この前は楽しかった, 駅の前は混んでた, nor
"once" or "last time": 前は一回行ったことあるけど、混んでた, 前は行ったけど混んでた, and a
past told as shared with a また or a 今度 beside it, 前は楽しかったね！また行こう:
:func:`_an_occasion`); and "anymore", or "any more" ending its
clause, which says a change only after a negation (:data:`_NEGATION`; "I don't drink coffee
any more"; "Mochi doesn't want any more" and "I don't want any more coffee" are amounts);
"now" ending its clause, read as 今は, unless it tells the moment (:func:`_a_moment`,
:func:`_ja_a_moment`, :data:`_NOT_NOW`: "I can't stand sushi now", "I'm vegan now", 今は独身;
not "I'm at the gym now", "I'm reading Dune now", 今はジムにいる; nor "right now", "for
now", "by now", "for two years now", "it's been a week now", "I have to go now", "Now, the
roof."; "now that…" and "Now I'm hungry" end no clause; a rate before it, :data:`_A_RATE_BEFORE`,
tells what is so since: "it's $1,950 a month now", "I run every day now"); "is now" or "are
now" before a new value of a thing with its owner or "the" (:func:`_a_new_value`: "My vet is
now Dr. Sato", "The rent is now $1,950"; not "It is now 5 pm", "The clinic is now closed");
a value gone up
or down ("Rent went up", "prices went up again", "dropped to $999", "raised its fees to
$80"; not "went up the stairs", "went up to Sapporo", "dropped him off by 8"), and in
Japanese 値上げ, 値下げ, 値上がり, 値下がり done (:data:`_JA_DONE`: 値上げされた, 値上がりした,
値下げになった, 値上げされて最悪; not 値上がりが心配, 値下がり待ち, 値上げ反対, 値上げのニュース見た,
値上げの話は無くなった, nor 値上げなし, 値上げもなし: :data:`_NOT_AFTER`, 値上げしてほしくない:
:data:`_JA_NOT_WISHED`), a value with its unit before :data:`_JA_UP_DOWN` (:data:`_JA_VALUE_AT`:
2000円上がった, 6000円に上がった, 60キロまで減った, 5キロ減った, 30人に増えた; not 一人減った,
ケーキが1個減った, ベンチプレスで60キロ上がった, 80%に上がった, nor with なった: お会計、一人
3000円になった, 全部で5000円になった, 一人になった, 降水確率が80%になった), or a cost or a pay as
the subject of :data:`_JA_UP_DOWN`, of 高くなった, 安くなった, or of its value with なった
(:data:`_JA_COST`: 家賃が上がった, 電気代また上がった, 電気代がまた上がった, 給料が下がった,
家賃があがった, 家賃が8万円になった, 消費税が10%になった; not 雨が上がった, テンションが上がった,
階段を上がった, 気温が上がった, 成績が上がった, 材料が増えた, 子どもが増えた, 給料が出たから気分
上がった, 株価が上がった, nor a wish, a guess or a dread, 給料上がってほしい, 上がってくれ〜,
上がってるはず, 上がってたりして, 上げたがってる, 上げたきゃ, nor a supposition, a denial or a question, 上がったとしても,
上がったわけじゃない, 上がったことはない, 上がったか: :data:`_JA_NOT_WISHED`, 家賃上がってたら
やだな: :data:`_PAST_END`; a complaint or a reason after it is told of it, 家賃上がって嫌だ,
上がったから引っ越す; a time the value holds from may stand between, :data:`_JA_FROM`:
家賃が来月から8万円になった, 家賃が先月から8万円になった; 体重が増えた and ボーナスが減った, with no cost nor unit, 3キロ痩せた
and 60キロまで落ちた, no value verb, 手取り between a cost and its value, are left out); or a
cost or a pay, with を, も, は or no particle, a comma and its old value (7万円から) or a time
it holds from (:data:`_JA_FROM`) between, raised or cut to a new value with に, まで or へ,
done (:data:`_JA_RAISED`: 大家さんが家賃を7万5千円に上げた, 料金を月2980円に下げました,
消費税を10%に引き上げた, 家賃を8万円に上げられた, 時給を1200円に上げてくれた, 上げちゃった,
下げやがった, 上げていました, 上げちゃいました, 上げてもらえた, 上げてくれてた, 上げてくださいました,
大家さん家賃8万円に上げた, 家賃も8万円に上げられた, 家賃、8万円に上げられた, 家賃を7万円から
8万円に上げられた, 会費を来月から6000円に上げた, 時給を先月から1200円に上げてもらった; not 家賃を8万円に上げるらしい, 上げたい, 上げてください, 上げた方が
いい, 上げたら困る, 上げたとしても, 上げたわけじゃない, 成績を上げた, 手を上げた, 温度を28度に
下げた, nor あげた, as often "gave": お金をあげた; with no new value, 家賃を上げた, or what it
went up by, 家賃を1万円上げた, as お金を1万円上げた is often given, left out); an age
turned ("turned 7 today", "turned thirty in May", 6歳になった; not "turned one of the rooms
into…", "turned 90 degrees", 6歳になったら); and a decision, ことにした (お酒は飲まないことにした;
not 続けることにした, 辞めないことにした: :data:`_KEPT_ON`, nor one for a day, 今日はジム休むことにした:
:data:`_ONE_DAY`)."""

_MAYBES = (
    r"no need to|might|(?:i|we|you|he|she|they) may|maybe|should|could|if|almost"
    r"|thinking (?:of|about)"
    r"|going to|gonna|want to|wanna|planning (?:to|on)|plan to|hope to|hoping to|considering"
    r"|would have|would've|how about|what if|suppose|supposing"
)
"""A maybe, a wish, a plan, a supposition or what did not happen, before an English change
word ("even if they raised my rent to $2,000", "suppose they raised it")."""

_NOT_BEFORE = lazy_compile(
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

_MAYBE_BEFORE = lazy_compile(rf"\b(?:{_MAYBES})\W+(?:\w+\W+){{0,2}}$", re.ASCII | re.IGNORECASE)
"""A maybe, a wish or a plan within three words before a negation ("I might not go anymore",
"if I don't go to the gym anymore")."""

_NOT_SO = lazy_compile(
    r"\b(?:not|never|won't|don't|didn't|doesn't|can't|cannot|wouldn't|shouldn't|let's|let us"
    rf"|let me(?!\s+(?:(?:correct|rephrase|clarify)\b|fix(?:\s+(?:that|this|it)\b|\W*$)))"
    rf"|{_MAYBES})\b"
    r"|\b(?:i|we)(?:['’](?:ll|d)\b|\s+(?:\w+ly\s+)?(?:will|would|must|usually|always|often"
    r"|normally|sometimes|generally|prefer|rather)\b)",
    re.IGNORECASE,
)
"""What makes an "X, not Y" no correction of what is so, anywhere in its clause before the
"not": a negation, a maybe, or the speaker's own plan, wish or habit ("I won't go Friday,
not Saturday", "Maybe Friday, not Saturday", "If it's Friday, not Saturday, I'll go", "I'll
go on Friday, not Saturday", "Let's meet Friday, not Saturday", "Let me book it for Friday,
not Saturday", "We should go to Kyoto, not Osaka", "I usually go on Mondays, not
Tuesdays"), as a change word's three words before it (:data:`_NOT_BEFORE`) do; a request
is none either (:func:`_a_request`). What a thing will be or usually is is so ("The party
will be on Saturday, not Friday", "Yoga is usually on Tuesdays, not Mondays"), and "let me"
correct, rephrase, clarify or "fix that" takes back what was said ("Let me correct myself:
Tuesday, not Monday"; "Let me fix dinner on Friday, not Saturday" is a plan)."""
_REMINDER = lazy_compile(
    r"^\W*(?:(?:also|and|oh|so|just|please)\W+)*(?:(?:don['’]t|do not)\s+forget|remember|note"
    r"|keep in mind|make sure)\s+(?:that\s+)?",
    re.IGNORECASE,
)
"""A reminder before what it reminds of: a statement, told as so ("Don't forget it's
Tuesday, not Monday", "Please note it's …", "Also don't forget that …"), or a request after
its "to" ("Don't forget to call mom on Sunday, not Saturday", "Make sure to call …")."""
_STATED_AHEAD = lazy_compile(r"\b(?:is|are|'s|’s)\s+(?:going to|gonna)\s+be\b", re.IGNORECASE)
"""What a thing is going to be, which is so like what it will be ("The party is going to be
on Saturday, not Friday"), not the plan "going to" says of the speaker ("I'm going to …")."""
_REQUEST_VERBS = frozenset(
    "call ask meet book bring take send tell text email message phone ring pick choose get buy"
    " grab put set schedule reserve remind invite order pay add write note save mark wear check"
    " use try do make leave come go visit move plan see".split()
)
"""The verbs a request opens with ("Call mom…", "Get tickets…", "Come over…", "Book it…")."""
_FILLERS = frozenset("please just so ok okay then and also oh".split())
"""Words before a request's verb ("Please call…", "Ok so book…")."""
_OBJECTS = (
    frozenset(
        "me him her us them it you the a an my your our his their this that these those some"
        " over by up out in back on at to there here home early late".split()
    )
    | PERSON_WORDS
)
"""What follows a request's verb, its object or its particle: a pronoun, a determiner or a
possessive, a word for someone (:data:`.owners.PERSON_WORDS`), a phrasal verb's particle or
a preposition ("Call me", "Book the table", "Text dad", "Come over", "Go on Friday"; not
"club" of "Book club meets")."""
_FINITE = frozenset("said says is was has had does did will would can could".split())
"""A verb a name is the subject of ("Mark said the party is …": Mark is no one called)."""
_BE = lazy_compile(r"^(?:is|are|was|were|be|am|isn't|aren't|wasn't|weren't)$|['’](?:s|re)$")
"""A be-verb as one word of a clause (is, were, "be" of "will be", the "'s" or "'re" on any
word: "it's", "club's", "day's", "we're")."""
_CLAUSE_WORD = lazy_compile(r"[\w'’-]+")
"""A word of a clause, its hyphen and apostrophe kept ("check-in", "Mark's")."""


def _an_object(word: str, after: str | None) -> bool:
    """Whether ``word``, the one after a request's verb (``after`` the one after it), is what
    it is done to: one of :data:`_OBJECTS`, a number ("Buy 2 tickets") or a name of two
    letters or more no "'s" nor verb follows ("Ask Ken"; not "Plan B starts", "Mark said",
    "Mark's birthday")."""
    if word.lower() in _OBJECTS or word.isdigit():
        return True
    owner = re.sub(r"['’]s$", "", word)  # "Call Mark's mom": the mom is called
    if owner != word:
        return after is not None and after.lower() in PERSON_WORDS and _a_name(owner)
    return _a_name(word) and (after is None or after.lower() not in _FINITE)


def _a_name(word: str) -> bool:
    """Whether ``word`` is written as a name of two letters or more: "Ken", "TJ" (not "B" of
    "Plan B")."""
    return (
        len(word) > 1
        and word.isalpha()
        and word[0].isupper()
        and (word[1:].islower() or word.isupper())
    )


def _meant_for(rest: list[str]) -> bool:
    """Whether ``rest``, the words after a request's verb, are a bare noun or two, then the
    "for" of the time it is meant for and that time alone, with no be-verb: "tickets for
    Friday", "pizza for 7pm", "concert tickets for the 19th" (a statement tells its time
    with a verb, "on" or "at": "club meets on Thursday", "club on Thursday", "time for the
    shoot is 7am")."""
    at = next((i for i, w in enumerate(rest[:3]) if w.lower() == "for"), 0)
    nouns, time = rest[:at], rest[at + 1 :]
    return (
        bool(nouns)
        and all(w.isalpha() and w.islower() and w not in ENGLISH_STOPWORDS for w in nouns)
        and 0 < len(time) <= 4
        and not any(_BE.search(w.lower()) for w in rest)
    )


def _a_request(lead: str) -> bool:
    """Whether the clause ``lead`` is a request: it opens with a verb of
    :data:`_REQUEST_VERBS` (after "please", "ok" or "also") whose next word is its object
    (:func:`_an_object`), and has no be-verb (:data:`_BE`) within its first four words ("Call
    mom on Sunday", "Buy 2 tickets", "Come over", "Ask Ken", "Send it to Ken"; not "Book club
    meets on Thursday", "Call time's 7am", "Plan B starts", "Mark said the party is…",
    "Check out time is 11am", "Book club will be…": statements), or whose next words are a
    bare noun and the time it is meant for (:func:`_meant_for`: "Get tickets for Friday",
    "Order pizza for 7pm"). A bare noun with any other preposition reads as a statement
    ("Book club on Thursday, not Wednesday" corrects, and so, a known miss, does "Pay rent on
    the 1st, not the 5th")."""
    words = _CLAUSE_WORD.findall(lead)
    while words and words[0].lower() in _FILLERS:
        words.pop(0)
    if len(words) < 2 or words[0].lower() not in _REQUEST_VERBS:
        return False
    if not _an_object(words[1], words[2] if len(words) > 2 else None):
        return _meant_for(words[1:])
    owned = re.search(r"['’]s$", words[1]) is not None  # ("Call Mark's mom": no "is")
    return not any(_BE.search(w.lower()) for w in words[int(owned) + 1 : 4])


def _not_so(sentence: str, m: re.Match[str]) -> bool:
    """Whether the correction ``m`` of ``sentence`` is an "X, not Y" (or "not Y but X", "not
    Y — X", "Y — no, X") told as a maybe, a plan, a habit (:data:`_NOT_SO` in its clause up to
    its first side) or a request (:func:`_a_request`), which corrects nothing; an opener that
    takes back what was said ("no wait, it's Friday, not Saturday") is its own correction,
    always one."""
    if m["opener"] or m["bare"]:
        return False
    first = next(g for g in ("x1", "y2", "y3", "y4") if m[g] is not None)  # (its first side)
    lead = f"{_clause_before(sentence[: m.start()])} {m[first]}".lstrip()
    reminder = _REMINDER.match(lead)
    if reminder is not None:
        lead = lead[reminder.end() :]
        if lead[:3].lower() == "to ":
            return True  # (a reminder to do something: "Don't forget to call mom …")
    lead = _STATED_AHEAD.sub("will be", lead)
    return _NOT_SO.search(lead) is not None or _a_request(lead)


_NEGATION = lazy_compile(
    r"\b(?:not|no|never|nothing|nobody|nowhere|neither|nor|hardly|barely|rarely|seldom|cannot"
    r"|(?!(?:should|might|must)n't)\w+n't)\W+(?:\w+\W+){0,6}$",
    re.ASCII | re.IGNORECASE,
)
"""The negation that makes "anymore" a change, within seven words before it ("I'm not vegan
anymore", "I don't go to the gym anymore", "I never drink coffee anymore", "Not anymore",
"We aren't together anymore"); alone it says nothing ("Any more paintings coming up?"), and
advice is no change ("you shouldn't drink anymore")."""

_NOT_NOW = lazy_compile(
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
_A_RATE_BEFORE = lazy_compile(
    r"(?:(?<![\d,.])\d[\d,.]*(?:\s*[a-z%]+)?|once|twice|thrice|times"
    r"|(?:one|two|three|four|five|six|seven|eight|nine|ten)\s+[a-z]+)\s+(?:a|an|per|every|each)\s+(?:other\s+)?"
    r"(?:hour|day|night|week|weekend|month|year)\W*$"
    r"|\bevery\s+(?:other\s+)?(?:day|night|morning|evening|week|weekend|month|year)\W*$",
    re.ASCII | re.IGNORECASE,
)
"""A rate just before a "now", which tells a value or a habit as it is since it changed,
not a while (:data:`_NOT_NOW`): "it's $1,950 a month now", "I call my mom twice a week
now", "I run every day now"; not "for two years now", "it's been a week now". A number
starts only after no digit, comma or point and its unit is one run of letters, so a search
takes a time linear in the text on any input (a run of digits or of spaces)."""

_CLAUSE_SEPARATOR = lazy_compile(r"[,;:](?!\d)|[\u2013\u2014]|\b(?:and|so|because|since)\b", re.I)
"""What a clause a "now" ends begins after: a comma or a joining word."""


def _clause_before(before: str) -> str:
    """The clause a "now" ends, ``before`` it its sentence's words: what follows the last comma
    or joining word ("I can't talk" of "I'm at the gym, I can't talk"), found in one pass so a
    long text without one costs no more than reading it."""
    start = 0
    for start_at in _CLAUSE_SEPARATOR.finditer(before):
        start = start_at.end()
    return before[start:]


_ADVERBS = r"(?:(?:still|already|just|finally|currently|\w+ly)\s+)?"
_LASTING_ING = (
    r"(?:working|living|using|dating|seeing|studying|learning|teaching|training|renting"
    r"|driving|taking|attending|going|commuting|staying|feeling|getting|earning|paying)"
)
"""What one does over a while, told as going on ("I'm working from home now", "I'm living in
Osaka now", "I'm using Linux now"), no action of this minute."""
_MOMENT = lazy_compile(
    # a place one is at: "I'm at the gym", "I'm on the train", "I'm at work", "I'm home"
    rf"\b(?:am|is|are|was|'m|'s|'re)\s+{_ADVERBS}(?:(?:at|on|in|inside|outside)\s+"
    r"(?:the|my|our|his|her|their|your|this|that)\b|(?:at|in)\s+(?:work|home|school|church"
    r"|class|lunch|dinner|bed|practice)\b|(?:home|here|there|back|out|outside|up|awake|asleep"
    r"|on (?:my|the|our) way)\W*$)"
    # the weather, the clock, a battery
    r"|\b(?:rain\w*|snow\w*|pouring|drizzl\w*|hail\w*|sunny|cloudy|windy|stormy|foggy"
    r"|thunder\w*|battery)\b"
    r"|\bit(?:'s| is)\s+(?:(?:almost|nearly|just|already|past)\s+)?(?:\d{1,2}(?::\d\d)?\s*"
    r"(?:am|pm|o'?clock)|\d{1,2}:\d\d|midnight|noon)\W*$"
    # a passing state, what one can't do this minute
    rf"|\b(?:am|is|are|was|'m|'s|'re)\s+{_ADVERBS}(?:closed|open)\W*$"
    rf"|\b(?:am|is|are|was|'m|'s|'re)\s+{_ADVERBS}(?:(?:so|very|pretty|kinda|super)\s+)?"
    r"(?:cold|mad|angry|upset|annoyed|pissed|terrible|awful|horrible|empty|on"
    r"|out for (?:delivery|lunch|dinner|a walk|a run)|(?:in|on) a (?:meeting|call))"
    r"(?:\s+(?:at|with)\s+\w+)?(?:\s+again)?\W*$"
    r"|\b(?:phone|laptop|battery|tablet|ipad|kindle|watch|airpods|headphones|earbuds|controller"
    r"|app|site|website|server|wifi|wi-fi|internet|network|power)\s+(?:is|are|was|'s|'re)\s+"
    rf"{_ADVERBS}(?:dead|dying|down)(?:\s+again)?\W*$"
    r"|\b(?:busy|tired|sleepy|exhausted|hungry|starving|thirsty|bored|free|asleep|awake|drunk"
    r"|full|late|ready|done|finished)\b"
    r"|\b(?:can't|cannot|can not|couldn't)\s+(?:\w+\s+)?(?:talk|chat|call|answer|text|reply"
    r"|speak|pick up|come|make it|focus|think)\b"
    # an action of this minute ("Sending you the recipe", "I'm reading Dune")
    rf"|(?:^\W*|\b(?:am|is|are|'m|'s|'re)\s+{_ADVERBS})(?!{_LASTING_ING})\w+ing\b",
    re.ASCII | re.IGNORECASE,
)
"""What makes the clause a "now" ends a moment, not a change: a place one is at ("I'm at the
gym now", "I'm on the train now", "I'm at work now", "I'm home now"), the weather ("It's
raining now"), the clock or a battery ("It's 3pm now", "I'm at 50% battery now"), a passing
state or what one can't do this minute ("I'm busy now", "I can't talk now", "My coffee is
cold now", "My bf is mad at me now", "my boss is in a meeting now", "My order is out for
delivery now", "The game is on now", "the traffic is terrible now", "My inbox is empty now",
a phone dead or an app down, "The app is down again now"), or an action of
this minute ("Sending you the recipe now", "I'm reading Dune now"); not "I'm at Google now",
"I'm working from home now", "He's in first grade now", "I'm vegan now"."""
_HABIT_SAID = lazy_compile(r"\b(?:less|more|only|mostly|every|always|usually|instead)\b", re.I)
"""A word that makes an action told as going on a habit ("I'm eating less meat now")."""


def _a_moment(before: str) -> bool:
    """Whether a "now" ending its clause (``before`` it, its sentence's words) tells only the
    moment (:data:`_MOMENT`: "I'm on the train now", "It's 3pm now"), which changes nothing
    told before; else it tells what is so now, unlike before ("I'm vegan now", "I have a cat
    now", "The rent is higher now")."""
    clause = _clause_before(before[-200:])
    return _MOMENT.search(clause) is not None and _HABIT_SAID.search(clause) is None


_JA_MOMENT = lazy_compile(
    "に(?:いる|いて|居る|居て|いま|来て|着い)|雨|雪|晴れ|曇|台風|忙し|眠|疲れ|手が離せ|暇"
    "|電話(?:でき|出られ|出れ|無理)|話せな|お腹|腹減|バッテリー|電池|充電"
    "|(?:移動|運転|会議|仕事|授業|作業|食事|外出|休憩|通勤|電車|出張)中"
    "|[0-9０-９一二三四五六七八九十]時(?:[0-9０-９]+分|半|過ぎ|前|頃|ごろ)?(?:だ|です|[、。！!]|$)"
)
"""What makes the clause after a 今は a moment, not a change: a place one is at (今はジムにいる),
the weather (今は雨降ってない), a passing state or what one can't do this minute (今は忙しい,
今は眠い, 今は手が離せない, 電話できない, 移動中), the clock or a battery (今は夜の11時だ); not
今はリモートワーク, 今は独身, 今は猫を飼ってる, 今は大阪に住んでる."""


def _ja_a_moment(after: str) -> bool:
    """Whether a 今は (``after`` it, the rest of its sentence) tells only the moment
    (:data:`_JA_MOMENT` in its clause: 今はジムにいるから電話できない), which changes nothing."""
    clause = re.split("[、，,。！？!?]", after, maxsplit=1)[0]
    return _JA_MOMENT.search(clause) is not None


_ANYMORE = lazy_compile(r"any ?more", re.I)
"""The change word that needs a negation before it (:data:`_NEGATION`)."""

_AN_AMOUNT = lazy_compile(
    r"\b(?:want|wanna|need|have|has|had|take|get|eat|drink|buy|give|add|use|make|spend|afford"
    r"|do)\W+$|\bthere\W+(?:\w+n't|\w+\W+not)\W+$",
    re.I,
)
"""What makes a negated "any more" in two words an amount, not a change: a verb it is the
object of, or a "there isn't" ("Mochi doesn't want any more.", "I can't eat any more", "I
don't need any more", "There isn't any more"; not "I don't smoke any more", "I'm not vegan
any more")."""

_REFUSAL = lazy_compile(
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

_WILL_BEFORE = lazy_compile(r"(?:\b(?:will|would)|'ll|'d)\W+(?:\w+\W+){0,2}$", re.I)
""""will" and "would" before a change word's plain form ("I'll switch next month", "I'd
switch if I could"); before a past form it is done ("I'd already switched by then")."""

_DONE = lazy_compile(r"(?:\w+ed|sold|gave|broke|brought)\b", re.I)
"""A change word in a past form ("moved … to", "switched", "sold"): done, not planned."""

_A_SWITCH = lazy_compile(r"\b(?:my|the|a|your|his|her|our|their|nintendo)\W+$", re.I)
"""What makes "switch" a thing, not a change ("on my Switch")."""

_A_TOOL = lazy_compile(
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

_NOT_AFTER = lazy_compile(
    r"^\w{0,3}?(?:ない|なかっ|ません|ず(?!っと)|よう|たい|つもり|かも|かな|なら|れば|(?<![たいだ])そう"
    r"|もらえ(?!た|まし)|って(?:本当|ほんと)|っけ"
    r"|[たる](?:方|ほう)(?:が|は|[、，,])?[^。！？!?\n]{0,6}?(?:いい|良い|よい|よかっ|良かっ|マシ|まし|べき"
    r"|かな|かも|のかな|だろ|でしょ)|[たる](?:方|ほう)$)"
    r"|^[^\Wてで]{0,3}?(?:予定|考え|迷っ|悩ん)|^[はも]?(?:なし|無し)"
)
"""What makes a Japanese one say no change just after it: a negation (変えない, 辞めません),
an intention, a wish or a plan (変えようかな, 辞めようと思ったけど, 引っ越したい, 辞めるつもり,
引っ越す予定, 転職を考えてる, 辞めるか迷ってる; not after a て-form, which joins a clause:
辞めて予定通り…, 売って迷ってたバイクを買った), a maybe (転勤になりそう, 中止かな; 中止だそう,
hearsay, is told), a condition (中止なら, 変えればよかった; たら: :data:`_IF`), asking
(リスケしてもらえる; してもらえた is done), doubting (中止って本当), asking oneself
(前は何してたっけ), advice (売ったほうがいいかな, 別れた方がいいかな, 辞めちゃった方が楽かな,
変えるほうがいい: 方が after a change verb's た or る, as after 引っ越し: :data:`_JA_DID`), or
none of it (値上げなし, 値上げもなし, 変更もなし). A complaint, a worry or
a wait after a change is told of it (辞めたけどやだった, 別れたから心配, 延期で待たされた); a
value's wish is read on its verb (:data:`_JA_NOT_WISHED`: 給料上がってほしい)."""

_KEPT_ON = lazy_compile(
    "(?:続ける|続け|残る|待つ|このままに|(?:辞め|やめ|止め|変え|替え|売ら|引っ越さ|別れ|移ら)ない)$"
)
"""What makes a ことにした a decision to keep things as they are (続けることにした,
辞めないことにした; 飲まないことにした is a change)."""

_ONE_DAY = lazy_compile(
    "(?:今日|今夜|今晩|今朝|今週末|週末|明日|あした|あす|明後日|あさって|来週|[月火水木金土日]曜日?)は"
)
"""A day or a time a ことにした is limited to, a one-off, not a change (今日はジム休むことにした,
今週末はジム行かないことにした, 土曜は家にいることにした); not 今回は, which may open a lasting
decision (今回は本気で禁酒することにした)."""

_IF = lazy_compile(r"^\w{0,3}?たら(?!しい)")
"""A condition just after a Japanese change word (中止になったら家で映画見よう), unless what
follows ends in the past (:data:`_PAST_END`: ジム変えたら通うのが楽になった, it happened)."""

_PAST_END = lazy_compile(r"(?<![や嫌])[ただ][よねわなのさー〜~wｗ笑]*[!！。.…\s]*$")
"""A sentence that ends in the past (…楽になった, …すっきりしたよ！); not in やだ, a dread
(家賃上がってたらやだな, 中止になったらやだ)."""


_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|sixty|seventy|eighty|ninety)\b"
)
"""A number in a word ("seven", "forty"): a value after an "is now" and in :data:`_NUMBER`."""
_IS_NOW = lazy_compile(r"(?:is|are|'s|'re) now", re.ASCII | re.IGNORECASE)
"""A "now" after a be-verb, before the value it gives (:func:`_a_new_value`)."""
_OWN_SUBJECT = lazy_compile(
    r"\W*(?:(?:and|but|so|oh|ok|okay|well|also|anyway|btw|update|yeah|yep|lol|lmao|haha\w*"
    r"|hehe\w*|omg|ps|fyi|just fyi|apparently|guess what|heads up|news)\W+)*"
    r"(?:my|our|his|her|their|the|[a-z]+'s)\s+(?:[\w'-]+\s+){0,2}?[\w-]+\s*",
    re.ASCII | re.IGNORECASE,
)
"""The whole clause before an "is now": a thing with its owner or "the", in one to three
words ("my vet", "our kids' school", "the rent", "Mochi's vet"), after a chat opener at most
("So yeah my vet…", "lol my vet…", "FYI my vet…", "Apparently my vet…", "Heads up, my
vet…"; a hedge is none: "I think my vet…", "Maybe my vet…"); not a pronoun, a name or a clause ("It is now 5 pm", "That is now my favourite", "Ken is now
at Apple", "I think it is now")."""
_GIVEN_AHEAD = lazy_compile(r"\s*(?:going to|gonna|about to|supposed to)\b", re.I)
"""A value an "is now" only says is ahead ("The meeting is now going to be on Friday")."""
_VALUE_ENDS = lazy_compile(r"[,;:.!?\u2013\u2014]|\b(?:and|but|so|because|since|though)\b", re.I)
"""Where the value after an "is now" ends: the clause's end."""
_A_VALUE = lazy_compile(
    r"\s*(?:(?:dr|mr|mrs|ms|mx|prof)\b|(?-i:[A-Z])(?!\b)|[$\u00a3\u20ac\u00a5]?\d"
    r"|[\w.+-]*[\d@]|(?:a|an|the)\s+\w|(?:at|with)\s+(?:(?-i:[A-Z])|\d)"
    r"|on\s+(?:the\s+)?(?:\d|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)"
    rf"|{_NUMBER_WORD}"
    r"|in\s+(?:\w+\s+)?(?:grade|year|college|kindergarten|preschool|university|high school"
    r"|middle school)\b|(?:closed|open)\s+(?:(?:on|every|at|from|until|till)\b|\d)"
    r"|(?:retired|married|divorced|engaged|pregnant|single|vegan|vegetarian|sober|unemployed"
    r"|remote|freelance|self-employed)\b)",
    re.ASCII | re.IGNORECASE,
)
"""What an "is now" gives that reads as a new value of the thing, not its state this hour: a
name (a title, "dr sato" as typed, or a capital: "Dr. Sato", "Anytime Fitness"), a number, an
amount, a price, a day or a time ("$1,950", "7", "at 3pm", "on Saturday"), a word with a
digit or an "@" ("hunter2", "ken@example.com"), what it is ("a vegetarian", "a Honda"), where
one works ("at Google", "with Acme"), a school year ("in first grade"), a rule ("closed on
Sundays", "open 24h") or a lasting state ("retired", "married", "vegan"); not "dead", "cold", "mad at
me", "in a meeting", "out for delivery", "on", "really long", "terrible", "empty", "down
again" nor "in Tokyo for the week", the thing as it is this hour (a lone "I" is no name)."""


_NUMBER = rf"(?:\d(?:[\d,.]*\d)?|{_NUMBER_WORD})"
"""A number as typed or in a word ("39", "38.5", "1,200", "seven")."""
_AT_A_NUMBER = lazy_compile(r"\s*at\s+(?=\d)", re.ASCII | re.IGNORECASE)
"""An "at" before a number after an "is now": a time ("at 3pm") or a level ("at 5%")."""
_A_CLOCK = lazy_compile(
    r"\d{1,2}(?:[:.]\d\d)?(?:\s*(?:[ap]\.?m\b|o'?clock\b)"
    r"|(?=\s*(?:$|[,;!?\u2013\u2014]|\.(?!\d)|(?:tonight|today|tomorrow|on|every|sharp|instead"
    r"|now|and|but|so|though|lol|haha)\b)))",
    re.ASCII | re.IGNORECASE,
)
"""A time of day after an "at" ("at 3pm", "at 7:30", "at 7", "at 7 on Fridays"); not "at 5%",
"at 80k miles", "at 38.5", which are levels."""
_A_BARE_NUMBER = lazy_compile(rf"\s*{_NUMBER}", re.ASCII | re.IGNORECASE)
"""A number with no currency sign just after an "is now" ("39", "1200 in the game")."""
_NUMBER_AS_VALUE = lazy_compile(
    r"\s*k?\s*(?:dollars?|bucks|yen|euros?|pounds?|quid|usd|jpy|eur|gbp|cents?|grand"
    r"|(?:a|an|per)\s+(?:month|year|week|night|hour|day|head|person|lesson|class)\b"
    r"|/\s*(?:mo|month|yr|year|wk|week|hr|hour|night)\b)"
    r"|\s*(?:[ap]\.?m\b|o'?clock\b)|:\d\d|(?:st|nd|rd|th)\b|(?<!\d\d\d)/\d\d?\b(?!/\d{3})"
    r"|(?!(?:k|m|mi|km|kms|mph|kph|kmh|kg|kgs|lbs?|pts|yo|y/o|c|f|am|pm)\b)[-\w@]",
    re.ASCII | re.IGNORECASE,
)
"""What makes a bare number after an "is now" a value: a currency or a rate after it ("1200
dollars", "95000 yen", "80 a month"), a time or a date ("3pm", "7:30", "the 19th", "5/20"),
or a code the number opens ("090-1234-5678", "4B"; not "80k", "70kg", "5yo": an amount, nor
"120/80", a reading: a date's month has at most two digits)."""
_AN_AGE = lazy_compile(
    r"\s*(?:(?:years?|yrs?|months?|weeks?)(?:\s+old)?|y/?o)?"
    r"\s*(?:$|[^\w\s]|(?:and|but|so|now|today|already|too|lol|haha)\b)",
    re.ASCII | re.IGNORECASE,
)
"""A number ending its clause, or "years old" or "months old" after it: an age ("My daughter is
now 7", "My son is now 6 months old")."""
_AGED = PERSON_WORDS | frozenset(
    "dog dogs cat cats puppy kitten pet niece nephew grandson granddaughter twins bf gf".split()
)
"""Whose number after an "is now" is an age, a new value: a person's or a pet's."""
_PRICED = frozenset(
    """rent fee fees price prices cost costs bill fare salary pay wage wages tuition premium
    subscription membership copay deductible mortgage payment budget""".split()
)
"""Whose bare number after an "is now" is a price ("The rent is now 1,200")."""
_PLANNED = lazy_compile(_PLANS, re.IGNORECASE)
"""Whose bare number after an "is now" is a time ("The meeting is now 3")."""


def _a_reading(subject: str, after: str) -> bool:
    """Whether the number ``after`` an "is now" is a reading of a gauge or a count, which a
    later one replaces as the hour goes, not a new value of ``subject``: a level after "at"
    that is no time ("My phone is now at 5% lol", "my car is now at 80k miles"), or a bare
    number that is no price, time, code or age (:data:`_NUMBER_AS_VALUE`: "My fever is now
    39", "My score is now 1200 in the game", "My laptop is now 5 years old lol"; an age only
    of a person or a pet, a price only of a cost, :data:`_AGED`, :data:`_PRICED`)."""
    at = _AT_A_NUMBER.match(after)
    if at is not None:
        return _A_CLOCK.match(after, at.end()) is None
    number = _A_BARE_NUMBER.match(after)
    if number is None:
        return False
    head = subject.split()[-1].lower().removesuffix("'s").removesuffix("'")
    if _NUMBER_AS_VALUE.match(after, number.end()) is not None or head in _PRICED:
        return False
    if _PLANNED.fullmatch(head) is not None:
        return False
    return head not in _AGED or _AN_AGE.match(after, number.end()) is None


_A_VISIT = lazy_compile(
    r"\s*at\s+(?-i:[A-Z])[\w'&.-]*(?:\s+[\w'&.-]+){0,2}?\s+"
    r"(?:for\s+(?!(?:the|a)\s+(?:past|last|while)\b)(?:the|a|an|this|that|my|his|her|our|their"
    r"|some|a few|a couple|two|three|\d+)\b|(?:until|till|til|today|tonight|rn|overnight)\b"
    r"|this\s+(?:week|weekend|morning|afternoon|evening)\b"
    r"|(?!(?:working|interning|teaching|studying)\b)(?-i:[a-z]\w*ing)\b)",
    re.ASCII | re.IGNORECASE,
)
"""An "at <Place>" after an "is now" with a purpose or a span after it, a visit as "in Tokyo
for the week" is ("My husband is now at Costco getting groceries lol", "My daughter is now at
Grandma's for the weekend", "My kid is now at Lincoln for the field trip"; not "My sister is
now at Google", "… at Google working on Maps")."""


def _a_new_value(before: str, is_now: str, after: str) -> bool:
    """Whether an "is now" (``before`` and ``after`` it its sentence's words) gives a thing
    a new value, as "… now" ending its clause does: its subject is the whole clause before it
    and a thing with its owner or "the" (:data:`_OWN_SUBJECT`: "My vet is now Dr. Sato",
    "The rent is now $1,950", "My vet's now retired"), told as so, not negated nor a maybe
    (:data:`_NOT_BEFORE`), not ahead (:data:`_GIVEN_AHEAD`), and the clause read with the
    "now" at its end tells no moment (:func:`_a_moment`: "The clinic is now closed" is "…
    closed now", this hour), and what it gives reads as a value (:data:`_A_VALUE`: not "My
    phone is now dead", "My sister is now in Tokyo for the week"), neither a visit
    (:data:`_A_VISIT`: "My husband is now at Costco getting groceries") nor the reading of a
    gauge (:func:`_a_reading`: "My fever is now 39"). A pronoun, a name or "now"
    as the subject says nothing ("It is now 5 pm", "Now is a good time"); "right now" is the
    moment (:data:`_NOT_NOW`)."""
    subject = _clause_before(before)
    if _OWN_SUBJECT.fullmatch(subject) is None or _NOT_BEFORE.search(before) is not None:
        return False
    if _GIVEN_AHEAD.match(after) is not None:
        return False
    value = _VALUE_ENDS.split(after, maxsplit=1)[0]
    if _A_VALUE.match(value) is None or _A_VISIT.match(value) is not None:
        return False
    if _a_reading(subject, after):
        return False
    verb = is_now.removesuffix(" now")
    space = "" if verb.startswith("'") else " "  # ("My vet's", "My vet is")
    said = f"{subject.rstrip()}{space}{verb}{value}"
    return not _a_moment(said)


_TITLE_DOT = lazy_compile(r"(?<!\d\s)\b(Dr|Mr|Mrs|Ms|Mx|Prof)\.\s*(?=[A-Za-z])", re.I)
"""The dot of a title before a name, which ends no sentence ("My vet is now Dr. Sato, I
switched clinics" is one), read as a space: a name typed in lower case or with no space
after the dot too ("my vet is now dr. sato", "Dr.Sato"), so the name is kept whole."""

_ELLIPSIS_NOT = lazy_compile(r"\.{2,}\s*(?=not\b)")
"""Dots before a lowercase "not", which go on with the sentence rather than end it: they are
read as one "…" (a dash of :data:`CORRECTION`), so "Yoga is Tuesday... not Monday" stays one
sentence; a capital after them opens another ("I was tired... Not Monday though, …")."""

NEAR_CHARS = 120
"""How far from its change word a shared phrase may be: the words read on each side."""


def change_sentences(text: str) -> list[str]:
    """The words around each change word of ``text`` (its first 2,000 characters; at most
    :data:`NEAR_CHARS` on each side, within its sentence, and the sentence before when a
    pronoun stands for what changed: :func:`_refers_back`; dots before a lowercase "not"
    end none, :data:`_ELLIPSIS_NOT`) that say something changed: a
    change word (:data:`CHANGE`, or a correction: :func:`corrections`) not negated nor a
    maybe or a plan ("anymore" negated, not
    as a maybe, a plan or a refusal: "I'm not vegan anymore"), in a sentence that asks
    nothing ("Any more paintings coming up?", "I won't quit", "should I switch", "I might
    not go anymore", "I won't eat sugar anymore", 変えないで, 変えようかな and 中止になったら
    say no change)."""
    return list(_changes_read(text[:2000]))


@functools.lru_cache(maxsize=256)
def _changes_read(head: str) -> tuple[str, ...]:
    """:func:`change_sentences` of a text's first 2,000 characters ``head``, read once per
    text: a pack's quotes read the sentences after their best again for each block and
    each side of an exchange, and the later-change check and the corrections read the
    same messages again, and a long paste full of change words ("not Monday but Tuesday,
    …") took a second to pack. Its users' words are dropped with :func:`forget_changes_read`."""
    out: list[str] = []
    previous = ""
    read = _TITLE_DOT.sub(r"\1 ", head.translate(APOSTROPHES))
    listed = sentences(_ELLIPSIS_NOT.sub("\u2026 ", read))
    for at, sentence in enumerate(listed):
        following = listed[at + 1] if at + 1 < len(listed) else ""
        if sentence.endswith(("?", "？")):
            previous = sentence
            continue
        found = [*CHANGE.finditer(sentence), *corrections(sentence)]
        for m in sorted(found, key=lambda m: m.start()):
            before, after = sentence[: m.start()], sentence[m.end() :]
            death = DEATH.match(sentence, m.start())
            if death is not None and not _a_being(before, death.group()):
                continue
            if m.group().lower() == "retired" and not _retired_one(before, after):
                continue
            if m.re is CORRECTION.compiled():
                if _asks(before) or _not_so(sentence, m):
                    continue
            elif _ANYMORE.fullmatch(m.group()):
                amount = " " in m.group() and _AN_AMOUNT.search(before) is not None
                if amount or not _negated(before) or _asks(before):
                    continue
            elif m.group().lower() == "now":
                moment = _NOT_NOW.search(before) and _A_RATE_BEFORE.search(before) is None
                if moment or _MAYBE_BEFORE.search(before) or _asks(before):
                    continue
                if _a_moment(before):
                    continue
            elif _IS_NOW.fullmatch(m.group()):
                if not _a_new_value(before, m.group(), after):
                    continue
            elif (m.group() == "今は" and _ja_a_moment(after)) or (
                m.group() in ("別れ", "わかれ") and _JA_PARTED_AT.search(before) is not None
            ):
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
                or (m.group()[0] in "こ事" and _ONE_DAY.search(before) is not None)
                or _an_occasion(m.group(), after, f"{previous} {after} {following}")
            ):
                continue
            near = sentence[max(0, m.start() - NEAR_CHARS) : m.end() + NEAR_CHARS]
            if previous and _refers_back(sentence, m):
                near = f"{previous[-NEAR_CHARS:]} {near}"
            out.append(near)
        previous = sentence
    return tuple(out)


def forget_changes_read() -> None:
    """Drop what :func:`change_sentences` read of each text (users' words, which a forgotten
    agent's or a scrubbed delete's must not leave in the process)."""
    _changes_read.cache_clear()


_ONCE_BEFORE = lazy_compile("^(?:前|以前)は.*(?:だった|かった)$")
"""A 前は with a past that is no habit form (前は楽しかった, 前は雨だった; not 前は通ってた)."""
_TOLD_AS_SHARED = lazy_compile("^よ?ね(?![^。！？!?\n]*(?:でも|けど|けれど|のに|今|もう))")
"""The ね of a past told to the one who shared it (楽しかったね！), with no now set against it
(楽しかったね、でも今は…)."""
_AGAIN = lazy_compile("また|今度")
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


_OWNED_BY = lazy_compile(r"\b(?:my|our|his|her|their|the)\s+$", re.I)
"""The possessive or "the" before a person word that says "used to" ("the knife my wife used
to cut the fish" names a thing as "the knife I used to cut the fish" does)."""


def _habit(before: str, used_to: str, after: str) -> str | None:
    """Whose habit left ``used_to`` ("I used to", "wife never used to") tells between the
    words ``before`` and ``after`` it (:func:`.owners.habit_owner`: "i", "wife", "ken"); none for a
    subject that is no person ("It used to rain") or a thing used ("the knife my wife used to
    cut the fish", "What I used to clean it was…": :data:`_A_TOOL`)."""
    who = habit_owner(used_to.split()[0], before, after)
    return None if _A_TOOL.search(_OWNED_BY.sub("", before)) is not None else who


_POINTS_BACK = lazy_compile(r"\b\w+\W+(?P<it>it|them|that|there)\W+$", re.I)
"""A pronoun just before a change word said after its verb's object, and after that verb,
standing for what changed ("I can't afford it anymore", "I don't go there anymore", "I
don't do that any more", "I can't stand it now": :data:`_AFTER_OBJECT`)."""
_AFTER_OBJECT = lazy_compile(r"any ?more|now|instead|nowadays|these days", re.I)
"""The change words said after a verb's object ("afford it anymore"); before any other, a
pronoun is the change verb's subject, and one that stands for nothing as often ("It stopped
raining", "It changed my mind"), so only the object after it counts ("sold it")."""
_POINTS_BACK_AFTER = lazy_compile(r"\w+\W+(?P<it>it|them)\b(?!')", re.I)
"""A pronoun just after a change verb, standing for what changed ("I sold it", "They
cancelled it", "moved it to Friday")."""
_JA_POINTS_BACK = lazy_compile(
    "(?P<it>それ|そこ|あそこ|あれ)(?=[はをにでも、])(?!(?<=それ)[にで](?!は))"
)
"""A Japanese pronoun for what changed, with its particle (もうそこには通ってない, あれはもう
使ってない, それにはもう使ってない; not それぞれ, そこそこ, nor the conjunctions それに, それで,
それでも, which join the sentence to the one before and stand for nothing)."""
_JA_NOUN = lazy_compile("[\u4e00-\u9fff々\u30a1-\u30ff]")
"""A kanji or katakana: a Japanese text that may name a thing."""
_LATIN_WORD = lazy_compile(r"[a-z']+")
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


_ASKS = lazy_compile(r"^\W*(?:should|shall|can|could|would|do|does|did|is|are|will|why)\b", re.I)


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


_USED_TO = lazy_compile(
    r"\b\w+ (?:(?:\w+ly|never|also|always|once|even|still|just) )?used to\b", re.I
)
"""A habit left, after its subject (:func:`_habit`)."""
_JA_USED_TO = lazy_compile(f"{JA_TOPIC}(?:前|以前|昔|もともと|元々)は")
"""A Japanese habit left, after the person it is of (妻は前は, 田中さんも昔は)."""


def habit_of(near: str) -> str | None:
    """Whose habit left the words around a change word tell ("My wife used to love jazz":
    "wife"; "I used to hate running": "i"; 妻は前はジャズが好きだった: 妻), if any."""
    for m in _USED_TO.finditer(near):
        if (who := _habit(near[: m.start()], m.group(), near[m.end() :])) is not None:
            return who
    ja = _JA_USED_TO.search(fold(near))
    return ja_owner(ja) if ja is not None else None


def told(near: str) -> str:
    """The sentence of ``near`` (the words around a change word) that holds the change
    word, past the sentence before that a pronoun may have brought in."""
    return next((s for s in sentences(near) if CHANGE.search(s) or corrections(s)), near)
