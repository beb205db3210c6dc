"""A correction said in the next turn ("Actually it's Tuesday, not Monday", いや、火曜だった)
comes in before the memory it corrects, marked as its change: on real SQLite with the
offline default embedder, and the words that say a turn corrects."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory, Retrieval, Retrieved
from memengine.embed.usem3 import USEM3Embedder
from memengine.models import Episode, EpisodeKind
from memengine.pack import build_pack
from memengine.retrieve.corrections import corrects, corrects_later

T0 = datetime(2026, 9, 1, 20, 0, tzinfo=timezone.utc)
FILLER = [
    ("今日も仕事疲れた〜", "お疲れさま！"),
    ("夜ご飯はカレーにした", "いいね"),
    ("Work was so busy today", "Rest up."),
    ("Made pasta tonight", "Yum!"),
]


def _turn(user: str, reply: str = "OK") -> Episode:
    return Episode(
        id=1, agent="u", kind=EpisodeKind.exchange, user_text=user, reply_text=reply,
        content=f"User: {user}\nPartner: {reply}", occurred_at=T0, created_at=T0,
    )  # fmt: skip


YOGA_EN = _turn("My yoga class is on Monday at 6pm", "Nice routine!")
YOGA_JA = _turn("ヨガは月曜の夜7時からなんだ", "いいね！")


@pytest.mark.parametrize(
    "said",
    [
        "actually it's Tuesday, not Monday",
        "Sorry, I meant Tuesday",
        "Oops, it's on Tuesday at 6pm, not Monday",
        "No wait, Tuesday",
        "It's Tuesday, not Monday 😅",
        "*Tuesday",
        "I mean Tuesday",
        "Tuesday, not Monday",
        "no, Tuesday lol",
        "Nope, Tuesday",
        "hold on, it's Tuesday",
        "my mistake, it's Tuesday",
        "ugh I meant Tuesday",
        "Scratch that, it's at 7pm",
        "いや、火曜だった",
        "いや火曜だった",
        "いや、火曜だったｗ",
        "やっぱ火曜だった",
        "勘違いしてた、火曜だわ",
        "ちがう、火曜日！",
        "ごめん、月曜じゃなくて火曜だった",
        "ごめん月曜じゃない、火曜",
        "火曜の間違いだった",
        # the memory's own subject, a correction's words and a time's frame beside the value
        "Actually the class is on Tuesday",
        "Actually yoga is on Tuesday at 6pm",
        "No wait, Tuesday. I always mix those up",
        "Ugh, I meant Tuesday evening",
        "hold on, it's Tuesday at 7, I got mixed up",
        "Sorry, typo, Tuesday at 6pm",
        "いや、ヨガは火曜の夜7時からだった",
        "間違えた、火曜日",
        "あ、ミスった、火曜だ",
        "ごめん、正しくは火曜の7時",
        "ごめん、ヨガは火曜日だった笑",
        # a longer turn's short first sentence, and why it changed after it
        "No wait. Tuesday.",
        "Actually it's Tuesday not Monday. I double-checked the confirmation email from the"
        " studio and they moved all the Monday slots because the teacher is away that week.",
        "いや、火曜だった。"
        + "先生が月曜はお休みになったらしくて、しばらくは火曜のクラスに振り替えなんだって。" * 3,
    ],
)
def test_a_short_turn_that_corrects_a_value_is_read_as_one(said: str) -> None:
    fact = YOGA_JA if any("\u3040" <= ch <= "\u9fff" for ch in said) else YOGA_EN
    assert corrects(fact, _turn(said))


@pytest.mark.parametrize(
    ("fact", "said"),
    [
        # elaboration, news, a request: no value of the memory's kind set against its own
        (YOGA_EN, "Actually it was really fun"),
        (YOGA_EN, "Actually, my sister is coming too"),
        (YOGA_EN, "actually i think i'll go to bed now"),
        (YOGA_EN, "No wait, I have to tell you something, I got promoted!"),
        (YOGA_EN, "Sorry, I meant to tell you earlier, I got the job"),
        (YOGA_EN, "Actually, can you help me plan the trip?"),
        (YOGA_EN, "Sorry, it's been a long day"),
        (YOGA_EN, "It's cold, not warm"),
        (YOGA_EN, "Is it Tuesday, not Monday?"),  # a question
        (YOGA_EN, "Oops, it's Sam's birthday on Friday, not Saturday"),  # another matter
        (YOGA_EN, "Actually " + "the whole story is long, " * 8 + "on Tuesday"),
        (YOGA_EN, "Actually it was so fun on Tuesday. " + "The teacher showed us new poses. " * 5),
        (YOGA_EN, "Wait. The party is on Saturday, I almost forgot!"),
        (_turn("好きな食べ物はカレーだよ"), "今日はカレーじゃなくてシチューが食べたい気分"),
        (_turn("今日から新しい職場は渋谷だよ"), "初日から電車乗り間違えた…"),
        (_turn("駅前のラーメン屋行ってきた"), "うーん、期待してたのと違った"),
        (_turn("週末に彼氏と箱根旅行行ってきた", "疲れたでしょ？"), "いや、最高だった"),
        (YOGA_JA, "あ、そういえば明日ママの誕生日だった"),
        (YOGA_JA, "いや〜今日は疲れた"),
        (YOGA_JA, "ごめん、昨日は寝落ちだった"),
        (YOGA_JA, "私じゃなくて弟が行った"),
        # shaped as a correction, with a value of the kind, but of a subject of its own or
        # of the time it is now: another matter
        (YOGA_EN, "Actually I'm free on Tuesday"),
        (YOGA_EN, "Oh no, my dentist appointment is at 3pm"),
        (YOGA_EN, "Wait, it's already 9pm"),
        (YOGA_EN, "Wait, it's 9pm now"),
        (YOGA_EN, "Actually, dinner is at 7pm tonight"),
        (YOGA_EN, "Sorry, gotta run, meeting at 7pm"),
        (YOGA_EN, "No, I work on Tuesday"),
        (YOGA_EN, "Wait, I just remembered the party is on Saturday"),
        (YOGA_EN, "I moved my dentist appointment to Thursday"),
        (YOGA_EN, "The party got pushed to Saturday"),
        (YOGA_EN, "My flight was rescheduled to 9am"),
        (YOGA_JA, "やっぱ金曜の飲み会楽しみ"),
        (YOGA_JA, "いや、今日は21時まで残業"),
        (YOGA_JA, "ごめん、明日は19時から会議だった"),
        (YOGA_JA, "あれ、もう22時だ"),
        (YOGA_JA, "今22時だよ"),
        (YOGA_JA, "歯医者、木曜に変更した"),
        (YOGA_JA, "飲み会が金曜にずれた"),
    ],
)
def test_other_turns_correct_nothing(fact: Episode, said: str) -> None:
    assert not corrects(fact, _turn(said))


@pytest.mark.parametrize(
    ("fact", "said", "corrected"),
    [
        # typed as people type: "nvm", a starred word, "actually" mid-turn, "wrong day", a
        # reason after the value's clause, a possessive the memory holds too
        ("My yoga class is on Monday at 6pm", "nvm its thursday", True),
        ("My yoga class is on Monday at 6pm", "thursday* sorry", True),
        ("My yoga class is on Monday at 6pm", "it's actually 7:30 not 6pm", True),
        ("My yoga class is on Monday at 6pm", "sorry wrong day, thursday", True),
        ("My yoga class is on Monday at 6pm", "scratch that, they moved us to 8pm", True),
        (
            "My yoga class is on Monday at 6pm",
            "Actually yoga is on Thursday, the studio changed it",
            True,
        ),
        ("Rent is $1,950 a month", "wait no $1,850, the landlord lowered it", True),
        ("Sam's party is on Saturday", "wait, Sam's party is on Sunday", True),
        ("My mom's birthday is on June 14", "Actually Mom's birthday is June 15", True),
        ("ヨガは月曜の夜7時からなんだ", "あ、ちがう、木曜だ", True),
        ("ヨガは月曜の夜7時からなんだ", "あっごめん、火曜！", True),
        ("ヨガは月曜の夜7時からなんだ", "ちがった、火曜だ", True),
        ("ヨガは月曜の夜7時からなんだ", "ごめん、ヨガ火曜だったｗｗ", True),
        ("ヨガは月曜の夜7時からなんだ", "ゴメン、火曜だった", True),
        ("ヨガは月曜の夜7時からなんだ", "やっぱ火曜だわ、スタジオのサイト見たら", True),
        ("家賃は7万8千円", "やば、家賃8万2千円だった", True),
        # a clock's colon is no clause's end; "only" a price; "already" with a change's verb
        (
            "My dentist appointment is at 6:30pm on Friday",
            "sorry 7:30pm not 6:30pm, the office called",
            True,
        ),
        (
            "My dentist appointment is at 6:30pm on Friday",
            "wait no, 19:30, the office called",
            True,
        ),
        ("The shoes were $99", "wait no, it's only $79", True),
        ("My mom's birthday is on March 13", "wait no, march 14", True),
        ("My yoga class is on Monday at 6pm", "Sorry, it was already moved to Tuesday", True),
        # a bare hour set against the memory's ("at 8 not 7 btw", "sorry, 8 not 7")
        ("Dinner with Sam is on Friday at 7pm", "at 8 not 7 btw", True),
        ("Dinner with Sam is on Friday at 7pm", "sorry, 8 not 7", True),
        ("Dinner with Sam is on Friday at 7pm", "wait no it's 8 not 7", True),
        ("Dinner with Sam is on Friday at 7pm", "8 not 7*", True),
        ("Dinner with Sam is on Friday at 7pm", "sorry I meant 8", True),
        ("Dinner with Sam is on Friday at 7pm", "no it's at 8 instead", True),
        ("Dinner with Sam is on Friday at 7pm", "actually at 8 lol", True),
        ("Dinner with Sam is on Friday at 7pm", "sorry, 8 not 7 people", False),
        ("Dinner with Sam is on Friday at 7pm", "no, 8 not 7?", False),
        ("Dinner with Sam is on Friday at 7pm", "sorry, 9 not 6", False),  # (no 6 told)
        ("I have 7 cats", "sorry, 8 not 7", False),  # (the memory states no time)
        # a name set against the memory's: "Sorry, Mia not Emma"
        ("My daughter Emma's piano recital is on Friday", "Sorry, Mia not Emma", True),
        ("My daughter Emma's piano recital is on Friday", "I mean Mia, not Emma", True),
        ("My daughter Emma's piano recital is on Friday", "no wait, Mia not Emma, my bad", True),
        ("娘のエマのピアノ発表会は金曜なんだ", "ごめん、エマじゃなくてミア", True),
        ("My daughter Emma's piano recital is on Friday", "Mia, not Emma, is my favourite", False),
        ("My daughter Emma's piano recital is on Friday", "Sorry, Mia not Sophie", False),
        ("My daughter Emma's piano recital is on Friday", "wait, Emma not Mia", False),
        ("My daughter Emma's piano recital is on Friday", "Team Mia not Emma lol", False),
        ("娘のエマのピアノ発表会は金曜なんだ", "エマじゃなくてミアが好き", False),
        ("We're thinking of naming the baby Emma", "Oh I like Mia, not Emma", False),
        ("My sister thinks we should honeymoon in London", "No, I think Paris not London", False),
        ("Jake is a huge Celtics fan", "sorry but Lakers not Celtics for me", False),
        ("ピザとコーラ頼んだ", "コーラじゃなくてペプシがいいな", False),
        ("夜ご飯はカレーにした", "カレーじゃなくてシチューにすればよかった", False),
        ("娘のエマのピアノ発表会は金曜なんだ", "エマじゃなくてミアのほうがピアノうまいよ", False),
        ("My daughter Emma's piano recital is on Friday", "sorry, her name's Mia not Emma", True),
        ("娘のエマのピアノ発表会は金曜なんだ", "いや、エマじゃなくてミアだった、ごめん", True),
        ("明日は田中さんとランチ", "ごめん、田中さんじゃなくて鈴木さんだった", True),  # (kanji)
        ("来月東京に出張", "いや、東京じゃなくて大阪", True),
        ("来月東京に出張", "東京じゃなくて大阪がよかったな", False),
        ("明日は田中さんとランチ", "田中さんじゃなくて鈴木さんとディナー", False),
        ("Dinner with Sam Friday at 7", "oops I meant 8", True),  # ("at 7" ends its line)
        ("Dinner with Sam is on Friday at 7pm", "oops it's 8 not 7 😅", True),
        ("Dinner with Sam is on Friday at 7pm", "8 not 7 my bad", True),
        ("Dinner with Sam is on Friday at 7pm", "sorry meant 8 lol", True),
        ("Dinner with Sam is on Friday at 7pm", "oh wait Sam pushed it back to 8", True),
        ("Dinner with Sam is on Friday at 7pm", "sorry, we're 8 not 7", False),  # (counts)
        ("Dinner with Sam is on Friday at 7pm", "oh wait, we'll be 8 not 7", False),
        ("The Lakers game is on Sunday at 7pm", "lol we were down 8 not 7", False),
        ("Starting my pushup challenge at 7pm", "oh wait, day 8 not 7", False),
        ("Family dinner on Sunday at 6pm", "actually it's just 5 not 6", False),
        ("Dinner with Sam is on Friday at 7pm", "oops I'm at 3 lol", False),
        ("Dinner with Sam is on Friday at 7pm", "see you at 8 then", False),
        # who moved it, said inside the value's clause; not the speaker's own, nor another thing
        (
            "My dentist appointment is on Thursday at 2pm",
            "oh wait Dr. Patel moved it to Friday",
            True,
        ),
        (
            "My dentist appointment is on Thursday at 2pm",
            "oh wait the office moved it to Friday",
            True,
        ),
        ("ヨガは月曜の夜7時からなんだ", "ごめん、先生の都合で火曜になった", True),
        ("ヨガは月曜の夜7時からなんだ", "ごめん、急用で火曜になった", True),
        ("ヨガは月曜の夜7時からなんだ", "いや、台風で火曜になった", True),
        ("ヨガは月曜の夜7時からなんだ", "あ、火曜だった", True),  # (あ、 before a だった)
        ("ヨガは月曜の夜7時からなんだ", "いや、8時開始だった", True),
        ("ヨガは月曜の夜7時からなんだ", "あ、金曜は飲み会だった", False),
        ("ヨガは月曜の夜7時からなんだ", "あ、そうだ、火曜はジムだった", False),
        ("ヨガは月曜の夜7時からなんだ", "あ、今日火曜だった", False),
        (
            "My dentist appointment is on Thursday at 2pm",
            "oh wait the office bumped it to Friday",
            True,
        ),
        (
            "My dentist appointment is on Thursday at 2pm",
            "sorry, the office had to move it to Friday",
            True,
        ),
        ("Dinner with Sam is on Friday at 7pm", "never mind, Sam moved it to Saturday", True),
        ("My yoga class is on Monday at 6pm", "oh wait my dentist moved it to Tuesday", False),
        ("My yoga class is on Monday at 6pm", "wait, Sam moved his party to Tuesday", False),
        ("My yoga class is on Monday at 6pm", "wait my boss moved my meeting to Tuesday", False),
        ("ヨガは月曜の夜7時からなんだ", "ごめん、彼氏の都合で火曜にデート", False),
        ("My yoga class is on Monday at 6pm", "The class is on Tuesday. Actually I love it", False),
        # a one-off change, a second value beside the memory's, someone else's thing
        ("My yoga class is on Monday at 6pm", "oh wait, this week it is on Tuesday", False),
        ("My yoga class is on Monday at 6pm", "Actually tonight it is at 7pm", False),
        (
            "My yoga class is on Monday at 6pm",
            "actually there's a yoga class on tuesday too",
            False,
        ),
        ("My yoga class is on Monday at 6pm", "no wait, I also have one Tuesday", False),
        ("My yoga class is on Monday at 6pm", "No, Tuesday works better for lunch", False),
        (
            "My dentist appointment is Thursday at 2pm",
            "wait, my other appointment is Friday",
            False,
        ),
        ("My mom's birthday is on June 14", "No, my birthday is July 3", False),
        ("ヨガは月曜の夜7時からなんだ", "ごめん、来週だけ火曜", False),
        ("ヨガは月曜の夜7時からなんだ", "いや、火曜もヨガあるんだよね", False),
        ("ヨガは月曜の夜7時からなんだ", "いや、明日は夜8時から", False),
        ("彼女の誕生日は6月14日！", "いや、僕の誕生日は7月3日", False),
        ("飲み会は金曜日になったよ", "ごめん、土曜もまた飲み会ある", False),
    ],
)
def test_corrections_as_typed_in_chat(fact: str, said: str, corrected: bool) -> None:
    """A review wrote corrections and other next turns as companion-chat users type them."""
    assert corrects(_turn(fact), _turn(said)) is corrected


@pytest.mark.parametrize(
    ("between", "said", "corrected"),
    [
        ("I got a new yoga mat too", "oh wait, it's Tuesday, not Monday", True),
        ("lol my cat just knocked over my tea", "sorry, Tuesday not Monday", True),
        ("なんか眠い", "あ、月曜じゃなくて火曜だった", True),
        ("I got a new yoga mat too", "oh wait, it's on Tuesday", False),  # (names no old one)
        ("Pilates is on Wednesday", "sorry, Tuesday not Monday", False),  # (a weekday between)
        ("I got a new yoga mat too", "Oops, Sam's party is Friday, not Saturday", False),
    ],
)
def test_a_correction_two_turns_later_names_what_it_takes_back(
    between: str, said: str, corrected: bool
) -> None:
    """One turn between: the correction must say what was wrong, and the memory say it."""
    fact = _turn("My yoga class is on Monday at 6pm") if "月曜" not in said else YOGA_JA
    assert corrects_later(fact, _turn(between), _turn(said)) is corrected


def _small_talk(mem: Memory) -> datetime:
    """Twelve days of small talk for agent "u"; the moment of day 3 the tests tell a fact."""
    for d in range(12):
        said, reply = FILLER[d % 4]
        mem.add_exchange(said, reply, agent="u", occurred_at=T0 + timedelta(days=d))
    return T0 + timedelta(days=3, minutes=5)


def _yoga(mem: Memory, fact: str, correction: str, *, gap: timedelta, speaker: str = "") -> int:
    """Filler over twelve days, the fact on day 3 and ``correction`` ``gap`` after it;
    the correction's id."""
    meta = {"speaker": speaker} if speaker else None
    at = _small_talk(mem)
    mem.add_exchange(fact, "OK!", agent="u", occurred_at=at, metadata=meta)
    other = {"speaker": "Partner"} if speaker else None
    return mem.add_exchange(
        correction, "了解！", agent="u", occurred_at=at + gap, metadata=other or meta
    )


@pytest.mark.parametrize(
    ("fact", "correction", "question", "says"),
    [
        (
            "My yoga class is on Monday at 6pm",
            "actually it's Tuesday, not Monday",
            "When is my yoga class?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "My yoga class is on Monday at 6pm",
            "Sorry, I meant Tuesday",
            "When is my yoga class?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "ヨガは月曜の夜7時からなんだ",
            "いや、火曜だった",
            "ヨガって何曜日だっけ？",
            "の記憶の訂正",
        ),
        (
            "Dinner with Sam is on Friday at 7pm",
            "at 8 not 7 btw",
            "What time is dinner with Sam?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "My dentist appointment is on Thursday at 2pm",
            "oh wait Dr. Patel moved it to Friday",
            "When is my dentist appointment?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "My daughter Emma's piano recital is on Friday",
            "Sorry, Mia not Emma",
            "Whose piano recital is on Friday?",
            "corrects the memory of 20:05 the same day",
        ),
    ],
)
def test_a_correction_in_the_next_turn_is_packed_before_what_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder, fact: str, correction: str, question: str, says: str
) -> None:
    """It names no subject of its own: the question found the old turn alone (the
    correction ranked `low`, unpacked, and the reply told the old day as the fact)."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        fixed = _yoga(mem, fact, correction, gap=timedelta(minutes=1))
        r = mem.retrieve(question, agent="u", now=now)
        pack = mem.pack(r, principles=False)
        assert fixed in pack.episode_ids
        assert pack.text.index(correction) < pack.text.index(fact)
        assert says in pack.text
        item = next(x for x in r.results if x.episode.id == fixed)
        assert item.relevance != "low" and item.components["correction"] == 1.0


def test_a_correction_two_turns_later_is_packed_before_what_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """ "My yoga class is on Monday at 6pm", "I got a new mat too", then "oh wait, it's
    Tuesday, not Monday": the correction was two turns on and not read."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        at = _small_talk(mem)
        fact = "My yoga class is on Monday at 6pm"
        mem.add_exchange(fact, "Nice!", agent="u", occurred_at=at)
        mem.add_exchange(
            "I got a new mat too", "Fun!", agent="u", occurred_at=at + timedelta(minutes=1)
        )
        said = "oh wait, it's Tuesday, not Monday"
        fixed = mem.add_exchange(said, "Got it!", agent="u", occurred_at=at + timedelta(minutes=2))
        r = mem.retrieve("When is my yoga class?", agent="u", now=now)
        pack = mem.pack(r, principles=False)
        assert fixed in pack.episode_ids
        assert pack.text.index(said) < pack.text.index(fact)
        assert "corrects the memory of" in pack.text


def test_another_speakers_turn_or_a_later_one_is_no_correction(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """A chat log's next message by the other person ("Actually, …") corrects nothing its
    speaker said; a turn past the neighbour gap (an hour) is no next turn."""
    now = T0 + timedelta(days=13)
    for name, gap, speaker in (
        ("other.db", timedelta(minutes=1), "Caroline"),
        ("late.db", timedelta(hours=3), ""),
    ):
        with Memory.open(tmp_path / name, embedder=usem3, clock=FixedClock(now)) as mem:
            said = "actually it's Tuesday, not Monday"
            fixed = _yoga(mem, "My yoga class is on Monday at 6pm", said, gap=gap, speaker=speaker)
            r = mem.retrieve("When is my yoga class?", agent="u", now=now)
            assert not any("correction" in x.components for x in r.results)
            item = next((x for x in r.results if x.episode.id == fixed), None)
            assert item is None or "changes" not in item.components


@pytest.mark.parametrize(
    ("fact", "said", "question"),
    [
        (
            "My yoga class is on Monday at 6pm",
            "Wait, I just remembered the party is on Saturday",
            "When is my yoga class?",
        ),
        ("ヨガは月曜の夜7時からなんだ", "いや、金曜は飲み会だった", "ヨガって何曜日だっけ？"),
    ],
)
def test_a_next_turn_about_something_else_is_no_correction(
    tmp_path: Path, usem3: USEM3Embedder, fact: str, said: str, question: str
) -> None:
    """Shaped as a correction ("Wait, …", ごめん、…だった) with a value of the memory's kind,
    but of a subject of its own: it was packed first as the correction, and the reply
    told Saturday as the yoga class's day."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        other = _yoga(mem, fact, said, gap=timedelta(minutes=3))
        r = mem.retrieve(question, agent="u", now=now)
        assert r.results and r.results[0].episode.id != other
        assert not any("correction" in x.components for x in r.results)
        assert "訂正" not in mem.pack(r, principles=False).text
        assert "corrects the memory" not in mem.pack(r, principles=False).text


def test_a_correction_of_a_correction_comes_first(tmp_path: Path, usem3: USEM3Embedder) -> None:
    """Monday, then "Scratch that, it's Tuesday, not Monday", then "No wait, it's Wednesday,
    not Tuesday": Wednesday first, then Tuesday, then Monday (the middle value was packed
    as the truth, Wednesday left out)."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        at = _small_talk(mem)
        told = [
            "The team meeting is on Monday at 3pm",
            "Scratch that, it's Tuesday, not Monday",
            "No wait, it's Wednesday, not Tuesday",
        ]
        ids = [
            mem.add_exchange(t, "OK", agent="u", occurred_at=at + timedelta(minutes=i))
            for i, t in enumerate(told)
        ]
        r = mem.retrieve("When is the team meeting?", agent="u", now=now)
        pack = mem.pack(r, principles=False)
        assert [i for i in pack.episode_ids if i in ids] == ids[::-1]


def test_an_elaboration_or_the_companions_message_is_no_correction(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """ "Actually it was really fun" tells more, it corrects nothing: the fact stays first
    and nothing says "corrects"; nor does a message without a speaker (the companion's own,
    perhaps) correct the user's."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        at = _small_talk(mem)
        fact = mem.add_exchange(
            "I went to the Taylor Swift concert with Mia last night", "Fun!", agent="u",
            occurred_at=at,
        )  # fmt: skip
        mem.add_exchange(
            "Actually it was really fun, the crowd was amazing", "Love it", agent="u",
            occurred_at=at + timedelta(minutes=1),
        )  # fmt: skip
        yoga = mem.add("My yoga class is on Monday at 6pm", kind="message", agent="u",
                       occurred_at=at + timedelta(hours=5))  # fmt: skip
        mem.add("Actually, Tuesday works better for most people", kind="message", agent="u",
                occurred_at=at + timedelta(hours=5, minutes=1))  # fmt: skip
        r = mem.retrieve("Who did I go to the concert with?", agent="u", now=now)
        assert r.results[0].episode.id == fact
        assert "corrects" not in mem.pack(r, principles=False).text
        r = mem.retrieve("When is my yoga class?", agent="u", now=now)
        assert r.results[0].episode.id == yoga
        assert not any("correction" in x.components for x in r.results)


def test_a_correction_with_the_models_reason_still_says_it_corrects() -> None:
    """On the LLM turn the rerank's reason is shown, and a later change's words go first:
    a correction's said "newer than … on the same subject" where the fast path says it
    corrects the memory."""
    fact = _turn("My yoga class is on Monday at 6pm", "Nice routine!").model_copy(
        update={"id": 13, "occurred_at": T0}
    )
    fixed = _turn("actually it's Tuesday, not Monday", "Got it").model_copy(
        update={"id": 14, "occurred_at": T0 + timedelta(minutes=1)}
    )
    marks = {"correction": 1.0, "next_turn": 1.0, "later_change": 1.0, "changes": 13.0}
    retrieval = Retrieval(
        results=(
            Retrieved(episode=fixed, score=1.0, rank=1, relevance="high", components=marks,
                      reason="the new day"),
            Retrieved(episode=fact, score=0.9, rank=2, relevance="high", reason="the class"),
        ),
        queries=("When is my yoga class?",),
        should_inject=True,
        now=T0 + timedelta(days=3),
        agent="u",
    )  # fmt: skip
    text = build_pack(retrieval, query="When is my yoga class?", budget_tokens=800).text
    assert "corrects the memory of 20:00 the same day; the new day" in text
    ja = build_pack(
        retrieval.model_copy(update={"language": "ja"}), query="ヨガいつ？", budget_tokens=800
    ).text
    assert "同じ日の 20:00 の記憶の訂正 / the new day" in ja


def _classes(mem: Memory) -> tuple[int, int, int]:
    """Small talk, then "pilates on Friday", "yoga on Monday" and a minute later "Actually
    it's Tuesday, not Monday": the three ids."""
    at = _small_talk(mem)
    told = [
        ("My pilates class is on Friday at 7am", "OK!", at - timedelta(hours=2)),
        ("My yoga class is on Monday at 6pm", "OK!", at),
        ("Actually it's Tuesday, not Monday", "Got it, Tuesday.", at + timedelta(minutes=1)),
    ]
    pilates, yoga, fixed = (
        mem.add_exchange(said, reply, agent="u", occurred_at=when) for said, reply, when in told
    )
    return pilates, yoga, fixed


def test_a_limit_keeps_a_correction_with_the_memory_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """With ``limit=2`` the correction took the yoga memory's slot (pilates, correction) and
    its reason no longer said what it corrects: the pair stays, the other result goes."""
    now = T0 + timedelta(days=13)
    question = "When are my pilates and yoga classes?"
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        pilates, yoga, fixed = _classes(mem)
        r = mem.retrieve(question, agent="u", now=now, limit=3)
        assert [x.episode.id for x in r.results] == [pilates, fixed, yoga]
        r = mem.retrieve(question, agent="u", now=now, limit=2)
        assert [x.episode.id for x in r.results] == [fixed, yoga]
        text = mem.pack(r, principles=False).text
        assert "corrects the memory of 20:05 the same day" in text
        assert text.index("Tuesday, not Monday") < text.index("Monday at 6pm")


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("When is my yoga class?", "→ why: corrects the memory of 20:05 the same day;"),
        ("ヨガって何曜日だっけ？", "→ 関連: 同じ日の 20:05 の記憶の訂正 /"),
    ],
)
def test_a_correction_kept_alone_still_says_what_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder, question: str, says: str
) -> None:
    """A ``limit`` of 1 keeps the correction alone (it states the current value); its reason
    said nothing of a correction, the memory it corrects being no result."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        if question.isascii():
            fixed = _yoga(mem, "My yoga class is on Monday at 6pm", "Sorry, I meant Tuesday",
                          gap=timedelta(minutes=1))  # fmt: skip
        else:
            fixed = _yoga(mem, "ヨガは月曜の夜7時からなんだ", "いや、火曜だった",
                          gap=timedelta(minutes=1))  # fmt: skip
        r = mem.retrieve(question, agent="u", now=now, limit=1)
        assert [x.episode.id for x in r.results] == [fixed]
        assert says in mem.pack(r, principles=False).text


@pytest.mark.parametrize(
    ("fact", "correction", "question", "says"),
    [
        (
            "My yoga class is on Monday at 6pm",
            "actually it's Tuesday, not Monday",
            "When is my yoga class?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "ヨガは月曜の夜7時からなんだ",
            "いや、火曜だった",
            "ヨガって何曜日だっけ？",
            "同じ日の 20:05 の記憶の訂正",
        ),
    ],
)
def test_a_tight_budget_never_packs_a_correction_that_says_nothing_of_what_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder, fact: str, correction: str, question: str, says: str
) -> None:
    """At each budget the correction is packed with its reason line (without the memory it
    corrects where that does not fit: it states the current value), or bare beside that
    memory, or not at all; the memory never alone. A budget that fitted it bare alone
    packed a lone "actually it's Tuesday, not Monday", a correction of nothing shown."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        fixed = _yoga(mem, fact, correction, gap=timedelta(minutes=1))
        r = mem.retrieve(question, agent="u", now=now)
        old = next(int(x.components["changes"]) for x in r.results if x.episode.id == fixed)
        seen: set[tuple[bool, bool]] = set()
        for budget in range(20, 160, 2):
            pack = mem.pack(r, principles=False, budget_tokens=budget)
            both = fixed in pack.episode_ids, old in pack.episode_ids
            seen.add(both)
            assert both != (False, True), budget  # the old fact alone
            if both == (True, False):
                assert says in pack.text, budget
        assert seen == {(False, False), (True, False), (True, True)}


@pytest.mark.parametrize(
    ("question", "fact", "correction"),
    [
        ("What did I tell you yesterday?", "My yoga class is on Monday at 6pm",
         "Actually it's Tuesday, not Monday"),
        ("昨日なんて言ってたっけ？", "ヨガは月曜の夜7時からなんだ", "いや、火曜だった"),
    ],
)  # fmt: skip
def test_a_time_asked_about_gets_only_its_own_corrections(
    tmp_path: Path, usem3: USEM3Embedder, question: str, fact: str, correction: str
) -> None:
    """It asks about that time's state: a correction said after it (five past midnight,
    "yesterday" asked) is not brought in (it was, and packed first); one said within it
    still is."""
    now = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
    told = datetime(2026, 12, 1, 23, 50, tzinfo=timezone.utc)
    for name, gap in (("after.db", timedelta(minutes=15)), ("within.db", timedelta(minutes=5))):
        with Memory.open(tmp_path / name, embedder=usem3, clock=FixedClock(now)) as mem:
            for d in range(10):
                said, reply = FILLER[d % 4]
                mem.add_exchange(said, reply, agent="u", occurred_at=told - timedelta(days=d + 1))
            old = mem.add_exchange(fact, "OK!", agent="u", occurred_at=told)
            fixed = mem.add_exchange(correction, "了解！", agent="u", occurred_at=told + gap)
            r = mem.retrieve(question, agent="u", now=now)
            pack = mem.pack(r, principles=False)
            item = next((x for x in r.results if x.episode.id == fixed), None)
            if name == "after.db":
                assert item is None or "correction" not in item.components
                assert fixed not in pack.episode_ids and pack.episode_ids[0] == old
            else:
                assert item is not None and item.components["correction"] == 1.0
                assert pack.episode_ids[:2] == (fixed, old)
