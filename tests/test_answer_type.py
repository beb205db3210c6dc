"""The kind of answer a question asks (a time, a quantity) and the bonus for texts that hold one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import EpisodeKind, FixedClock, Memory, NewEpisode
from memengine.config import load_config
from memengine.embed.usem3 import USEM3Embedder
from memengine.models import Episode
from memengine.retrieve.answer_type import AnswerType, asked_types, carries, carries_any
from memengine.retrieve.evidence import answer_type_bonus, asks_back, lift_next_turns
from memengine.retrieve.fastpath import Candidate

TIME, QUANTITY, COUNT = AnswerType.time, AnswerType.quantity, AnswerType.how_many


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("When is Maja's wedding?", {TIME}),
        ("when am I going out to see him? I keep thinking June.", {TIME}),
        ("What year is the car again?", {TIME}),
        ("How much am I paying her per walk?", {QUANTITY}),
        ("How many HX-40s did the lab order?", {QUANTITY, COUNT}),
        ("what date is the wedding, and how much was the couch?", {TIME, QUANTITY}),
        ("Back when I was burned out, who helped me?", set()),  # "when" without an auxiliary
        ("What did the dentist say?", set()),
        ("陽菜の入学式っていつだったかしら", {TIME}),
        ("美羽の誕生日はいつかしら", {TIME}),
        ("料理教室は何曜日でしたかしら", {TIME}),
        ("新しい部屋の家賃っていくらにしたんだっけ?", {QUANTITY}),
        ("何泊だったかも曖昧で", {QUANTITY, COUNT}),
        ("ちくわの体重って何グラムくらいだった?", {QUANTITY, COUNT}),
        ("入院は何日からでしたか", {TIME, QUANTITY}),  # a date (a number, as before)
        ("いつもの先生のところではなかったですよね?", set()),  # いつも is not いつ
        ("いつか行ってみたい", set()),  # "someday"
        ("てかあいつ、前のライブでなんかやらかしてたよな", set()),  # あいつ "that guy"
        ("そいつ、いつ来るって?", {TIME}),
        ("When's Maja's wedding?", {TIME}),  # "when's" was no time question
        ("When’s the dentist again?", {TIME}),
        ("いつから猫を飼ってるんだっけ？", {TIME}),  # nor いつから
        ("", set()),
        # a number or an amount asked by name, what something cost
        ("what did the plumber cost?", {QUANTITY}),
        ("what was the price of the boiler repair?", {QUANTITY}),
        ("what's my flight number?", {QUANTITY}),
        ("whats my room number", {QUANTITY}),
        ("what did you pay for the tickets?", {QUANTITY}),
        ("What a great price!", set()),  # an exclamation
        ("what's my dog's name?", set()),
        ("what did I say about the weather?", set()),
        ("What time does it leave?", {TIME}),
        ("沖縄の飛行機何便だっけ", {QUANTITY, COUNT}),
        ("何号室だっけ", {QUANTITY, COUNT}),
        ("部屋番号なんだっけ", {QUANTITY}),
        ("フライト番号は？", {QUANTITY}),
        ("修理代何万円だった？", {QUANTITY}),
        ("あれ何ドルだった？", {QUANTITY}),
        ("何割引きだっけ", {QUANTITY, COUNT}),
        ("電話番号変えた", set()),  # a number named, not asked
        # an amount's word that starts another noun, a verb of paying that asks no amount
        ("what's the number one thing to do in Kyoto?", set()),
        ("what's my weight loss plan again?", set()),
        ("what's the rate limit error about?", set()),
        ("what's the fee for?", set()),
        ("what did you pay attention to?", set()),
        ("what did the doctor charge me with?", set()),
        ("what did you charge your phone with", set()),
        ("what did it cost you emotionally?", set()),
        ("what did she pay for?", set()),  # what she bought, not how much
        ("what was the score last night?", {QUANTITY}),
        ("what's the number you gave me?", {QUANTITY}),
        ("what was the temperature like in Kyoto?", {QUANTITY}),
        ("what did the plumber charge?", {QUANTITY}),
        ("what did we pay the plumber?", {QUANTITY}),
        ("what would it cost to fix?", {QUANTITY}),
        ("what was I charged for the room?", {QUANTITY}),
        # a number asked for, not told
        ("番号教えて", {QUANTITY}),
        ("番号覚えてる？", {QUANTITY}),
        ("番号教えてくれる？", {QUANTITY}),
        ("番号教えるね", set()),
        ("番号覚えた", set()),
        ("番号を教えてもらった", set()),
        ("暗証番号は絶対教えないでね", set()),
        ("番号なんて忘れた", set()),
        ("番号教えてなかった", set()),  # (a number not told)
        # a word of chat after the amount or the verb of paying
        ("what's my room number btw?", {QUANTITY}),
        ("what was my room number lol", {QUANTITY}),
        ("what was my weight back in May?", {QUANTITY}),
        ("what did the tires cost in the end?", {QUANTITY}),
        ("what did the tires cost back then?", {QUANTITY}),
        ("what do they charge now?", {QUANTITY}),
        ("what do they charge these days?", {QUANTITY}),
        ("what does the gym charge monthly?", {QUANTITY}),
        ("what did we pay in rent last year?", {QUANTITY}),
        ("what did we pay the babysitter on Friday?", {QUANTITY}),
        ("電話番号教えてほしいな", {QUANTITY}),
        ("what did you pay attention to back then?", set()),
        ("what did they charge me with in the end?", set()),
        ("what's the number one thing to do now?", set()),
        ("what's my weight loss plan these days?", set()),
        # a count or a length, which a lone one may answer; not a price
        ("引っ越しの見積もりっていくらだった？", {QUANTITY}),
        ("何人で荷造りした？", {QUANTITY, COUNT}),
        ("荷造りにどのくらいかかった？", {QUANTITY, COUNT}),
        ("How long did the packing take?", {QUANTITY, COUNT}),
        ("How much was the moving quote?", {QUANTITY}),
        # a length asked with "how much": a lone one may answer it ("one week")
        ("How much time did the roof repair take?", {QUANTITY, COUNT}),
        ("how much longer is the drive?", {QUANTITY, COUNT}),
        ("How much more time do we need?", {QUANTITY, COUNT}),
        ("How much of the day did the packing eat up?", {QUANTITY, COUNT}),
        ("How much did the parking cost?", {QUANTITY}),
        # 何日 a date (に, から, まで, は, 頃), not a number of days
        ("旅行は何日に出発するんだっけ？", {TIME, QUANTITY}),
        ("締め切り何日までだっけ", {TIME, QUANTITY}),
        ("何日頃に届く？", {TIME, QUANTITY}),
        ("修理に何日かかった？", {TIME, QUANTITY, COUNT}),
        ("入院は何日間だった？", {TIME, QUANTITY, COUNT}),
        ("何日くらい休んだ？", {TIME, QUANTITY, COUNT}),
        ("屋根の修理、どれくらいかかった？", {QUANTITY, COUNT}),
    ],
)
def test_asked_types(text: str, kinds: set[AnswerType]) -> None:
    assert asked_types(text) == frozenset(kinds)


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("November 21st, at a winery in the valley.", TIME, True),
        ("Flights are booked, 9/17 to 9/24.", TIME, True),
        ("We moved it to next week.", TIME, True),
        ("The party is at 7pm.", TIME, True),
        ("You may be right about that.", TIME, False),  # "may" the verb is not the month
        ("Every day after school, $10 a walk.", QUANTITY, True),
        ("He wants a hundred more.", QUANTITY, True),
        ("She looked so proud of herself.", QUANTITY, False),
        ("十月に二泊三日で回る予定です", TIME, True),
        ("来週の金曜に行きます", TIME, True),
        ("家賃は8万2千円にした", QUANTITY, True),
        ("ちくわ病院連れてった", QUANTITY, False),
        ("ちくわ病院連れてった", TIME, False),
        ("１２月５日", TIME, True),  # full-width digits are read as digits
    ],
)
def test_carries(text: str, kind: AnswerType, expected: bool) -> None:
    assert carries(text, kind) is expected


def _candidate(i: int, score: float, text: str) -> Candidate:
    ep = Episode(
        id=i,
        agent="default",
        kind=EpisodeKind.message,
        content=text,
        occurred_at=datetime(2026, 3, 1, tzinfo=timezone.utc),
        created_at=datetime(2026, 3, 1, tzinfo=timezone.utc),
    )
    return Candidate(ep, score, {})


def test_the_bonus_lifts_the_texts_that_hold_the_asked_kind() -> None:
    cands = [
        _candidate(1, 1.0, "Maja is getting married and wants me to MC."),
        _candidate(2, 0.9, "Maja's fiancé Tom makes wine."),
        _candidate(3, 0.8, "November 21st, at a winery."),
    ]
    out = answer_type_bonus(cands, frozenset({TIME}), 0.3)
    assert [c.episode.id for c in out] == [3, 1, 2]
    assert out[0].score == pytest.approx(0.8 + 0.3 * 1.0)
    assert out[0].components == {"answer_type": 1.0}
    assert "answer_type" not in out[1].components
    assert [c.score for c in cands] == [1.0, 0.9, 0.8]  # the input is left as it was
    assert [c.episode.id for c in answer_type_bonus(cands, frozenset(), 0.3)] == [1, 2, 3]
    assert [c.episode.id for c in answer_type_bonus(cands, frozenset({TIME}), 0.0)] == [1, 2, 3]
    assert answer_type_bonus([], frozenset({TIME}), 0.3) == []


def _store(
    path: Path,
    clock: FixedClock,
    usem3: USEM3Embedder,
    turns: list[str],
    ago: list[timedelta],
    replies: dict[int, str] | None = None,
) -> list[int]:
    """Store each turn as an exchange, ``ago[i]`` before the clock, with the reply
    ``replies[i]`` ("Oh, nice." when not given); return the ids."""
    with Memory.open(path, embedder=usem3, clock=clock) as mem:
        return mem.add_many(
            [
                NewEpisode(
                    kind=EpisodeKind.exchange,
                    user_text=text,
                    reply_text=(replies or {}).get(i, "Oh, nice."),
                    occurred_at=clock() - back,
                )
                for i, (text, back) in enumerate(zip(turns, ago, strict=True))
            ]
        )


def _ranks(
    path: Path, clock: FixedClock, usem3: USEM3Embedder, weight: float, text: str
) -> list[int]:
    config = load_config(environ={}, overrides={"retrieval": {"answer_type_weight": weight}})
    with Memory.open(path, config=config, embedder=usem3, clock=clock) as mem:
        r = mem.retrieve(text, limit=10, day_range=None)
        assert r.results[0].components.get("answer_type") == (1.0 if weight else None)
        return [x.episode.id for x in r.results]


def test_a_when_question_finds_the_turn_that_names_the_date(
    db_path: Path, clock: FixedClock, usem3: USEM3Embedder
) -> None:
    """The answer turn does not repeat the question's words; the date in it lifts it."""
    turns = [
        "My sister Maja is getting married and she wants me to MC the wedding reception!",
        "Maja's wedding dress is gorgeous, she sent me photos of the fitting.",
        "Maja asked me to help with the wedding playlist, so much pressure.",
        "Tom, Maja's fiancé, makes wine. The wedding will have great wine at least.",
        "November 21st, at a winery in the valley. It fits, he is a winemaker.",
        "I bought a green velvet couch from a guy across town.",
    ]
    ago = [timedelta(days=30, minutes=10 * (len(turns) - i)) for i in range(len(turns))]
    ids = _store(db_path, clock, usem3, turns, ago)
    question = "When is Maja's wedding?"
    without = _ranks(db_path, clock, usem3, 0.0, question)
    with_bonus = _ranks(db_path, clock, usem3, 0.3, question)
    answer = ids[4]
    assert with_bonus[0] == answer
    assert without.index(answer) > 0  # its words alone leave it behind the turns naming Maja


def test_the_turn_after_a_best_candidate_is_lifted_when_it_holds_the_asked_kind() -> None:
    cands = [
        _candidate(1, 1.0, "Maja is getting married and wants me to MC. Guess when?"),
        _candidate(2, 0.9, "Maja's fiancé Tom makes wine. Are you coming to the tasting？"),
        _candidate(3, 0.2, "We are going at 6pm."),  # the turn after 2, a weak candidate
    ]
    following = {
        1: _candidate(10, 0.0, "November 21st, at a winery.").episode,  # not a candidate yet
        2: cands[2].episode,
    }
    out = lift_next_turns(cands, following, frozenset({TIME}), weight=0.3, factor=0.8)
    assert [c.episode.id for c in out] == [10, 3, 1, 2]
    assert out[0].score == pytest.approx(0.8 * 1.0 + 0.3 * 1.0)
    assert out[0].components == {"answer_type": 1.0, "next_turn": 1.0}
    assert out[1].score == pytest.approx(0.8 * 0.9 + 0.3 * 1.0)
    # a next turn without the asked kind stays where it was
    wordy = {1: _candidate(10, 0.0, "At a winery in the valley.").episode}
    same = lift_next_turns(cands, wordy, frozenset({TIME, QUANTITY}), weight=0.3, factor=0.8)
    assert [c.episode.id for c in same] == [1, 2, 3]
    # a turn already above what the lift would give keeps its score
    high = [*cands[:2], _candidate(3, 2.0, "We are going at 6pm.")]
    kept = lift_next_turns(high, following, frozenset({TIME}), weight=0.3, factor=0.8)
    assert next(c for c in kept if c.episode.id == 3).score == 2.0
    assert lift_next_turns(cands, {}, frozenset({TIME}), weight=0.3, factor=0.8) == cands
    # the turn after one that asked nothing is not an answer to it
    plain = [_candidate(1, 1.0, "Maja is getting married."), *cands[1:]]
    out = lift_next_turns(plain, following, frozenset({TIME}), weight=0.3, factor=0.8)
    assert [c.episode.id for c in out] == [3, 1, 2]  # only 3, after 2's question, is lifted


def _exchange(i: int, reply: str | None) -> Episode:
    at = datetime(2026, 3, 1, tzinfo=timezone.utc)
    return Episode(
        id=i,
        agent="default",
        kind=EpisodeKind.exchange,
        user_text="Bethany walks Tallulah for me?",  # the user's question is not the reply's
        reply_text=reply,
        occurred_at=at,
        created_at=at,
    )


def test_asks_back_reads_the_reply_of_an_exchange_and_the_text_of_a_message() -> None:
    assert asks_back(_exchange(1, "How lovely! What does she charge?"))
    assert asks_back(_exchange(1, "いいね!日にち決まった？"))
    assert not asks_back(_exchange(1, "How lovely."))
    assert not asks_back(_exchange(1, None))
    assert asks_back(_candidate(1, 1.0, "Caroline: did you go to the parade?").episode)
    assert not asks_back(_candidate(1, 1.0, "Caroline: I went to the parade.").episode)


def test_a_how_much_question_finds_the_reply_after_the_turn_that_names_the_topic(
    db_path: Path, clock: FixedClock, usem3: USEM3Embedder
) -> None:
    """The answer ("$10 a walk") follows the turn about the dog walker; the lift finds it."""
    turns = [
        "Bethany from next door has been a godsend. She walks Tallulah for me.",
        "Every day after school, $10 a walk. A bargain for my peace of mind.",
        "Tallulah rolled in something awful in the park, Bethany gave her a bath.",
        "Bethany brought Tallulah back wearing a little bandana today.",
        "Tallulah refused to go out in the snow, she just stood at the back door.",
        "Bethany's mum says she wants to be a vet one day.",
    ]
    # pairs of turns three minutes apart, five days between the pairs
    ago = [timedelta(days=40 - 5 * (i // 2), minutes=-3 * (i % 2)) for i in range(len(turns))]
    ids = _store(db_path, clock, usem3, turns, ago, {0: "How kind of her. What does she charge?"})
    question = "How much am I paying Bethany again?"
    ranks = {}
    for n in (0, 3):
        overrides = {"retrieval": {"next_turn_candidates": n, "answer_type_weight": 0.3}}
        config = load_config(environ={}, overrides=overrides)
        with Memory.open(db_path, config=config, embedder=usem3, clock=clock) as mem:
            r = mem.retrieve(question, limit=10, day_range=None)
            why = mem.pack(r, query=question).text
        ranks[n] = [x.episode.id for x in r.results].index(ids[1])
        if n:
            assert r.results[ranks[n]].components.get("next_turn") == 1.0
            assert "answers a matching turn's question and holds a date or number" in why
    assert ranks[3] < ranks[0]
    assert ranks[3] <= 1
    # the same turns after a reply that asked nothing: the number in the next turn is
    # not taken for an answer
    plain = db_path.with_name("plain.db")
    ids = _store(plain, clock, usem3, turns, ago)
    with Memory.open(plain, embedder=usem3, clock=clock) as mem:
        r = mem.retrieve(question, limit=10, day_range=None)
    assert not any("next_turn" in x.components for x in r.results)


@pytest.mark.parametrize(
    "text",
    [
        "今日は引っ越しの荷造りで一日つぶれた",  # "lost a day"
        "一日中バタバタしてた",  # "all day"
        "一人で荷造りした",  # "alone"
        "一時的に止まってた",  # "for a while"
        "It was one of the hardest days.",
        "I'll take the red one.",
    ],
)
def test_a_lone_one_answers_a_count_not_a_price(text: str) -> None:
    """A lone one is as often "a", "all", "alone" as a count: 一日つぶれた was said to hold the
    number a いくら question asks, and got its bonus; it answers 何人, 何日, "how many"."""
    price = asked_types("引っ越しの見積もりっていくらだった？")
    assert not carries_any(text, price)
    assert not carries_any(text, asked_types("How much was the moving quote?"))
    counted = carries_any(text, asked_types("何人で荷造りした？"))
    assert counted is (not text.startswith("一時的"))  # (never a number)
    assert carries_any(text, asked_types("How many boxes did you pack?")) is counted
    assert carries_any("荷造りでつぶれた", asked_types("何人で荷造りした？")) is False
    # a one within a number, a lone one before a price's unit: a number whatever is asked
    for number in (
        "見積もりは五万八千円",
        "十一人で運んだ",
        "一万円",
        "一円も払ってない",
        "twenty-one",
    ):
        assert carries_any(number, price), number


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("How much time did the roof repair take?", "The roof repair took one week, finally done"),
        ("How much longer is the trip?", "Just one more day."),
        ("How much did the parking cost?", "Parking was one dollar an hour downtown"),
        ("How much was the ticket?", "The ticket was one euro."),
        ("How much does the cat weigh now?", "She lost one kilo!"),
        ("屋根の修理、どれくらいかかった？", "一週間かかった"),
        ("屋根の修理、何時間かかった？", "一時間で終わった"),
        ("How much time did it take?", "一週間かかった"),
        ("駐車場いくらだった？", "一ドルだった"),
        ("体重いくつ減った？何キロ？", "一キロ減った"),
        ("チケットいくらだった？", "一ユーロだった"),
    ],
)
def test_a_one_answers_a_length_or_a_price_by_its_unit(query: str, text: str) -> None:
    """ "How much time…?" asks a length, which "one week" answers, and "one dollar" is a price
    as 一円 is: both lost the bonus when a lone one stopped counting for "how much"; "one
    day" or 一日 still holds no number a price's question asks."""
    assert carries_any(text, asked_types(query))
    for lone in ("One day I'll fix the roof myself.", "旅行の準備で一日つぶれた"):
        assert not carries_any(lone, asked_types("How much did the parking cost?"))
        assert not carries_any(lone, asked_types("駐車場いくらだった？"))


@pytest.mark.parametrize(
    ("query", "counted"),
    [
        ("旅行は何日に出発するんだっけ？", False),
        ("入院は何日からでしたか", False),
        ("締め切り何日までだっけ", False),
        ("旅行は何日間だった？", True),
        ("修理に何日かかった？", True),
        ("何日くらい休んだ？", True),
    ],
)
def test_a_lone_first_answers_how_many_days_not_what_date(query: str, counted: bool) -> None:
    """旅行は何日に出発する？ asks a date: 一日つぶれた "lost a day" answered it (日時・数を含む),
    for 何日 was read as a count of days too; 何日間, 何日かかった, 何日くらい are one."""
    assert carries_any("旅行の準備で一日つぶれた", asked_types(query)) is counted
    assert carries_any("旅行は六月三日に出発", asked_types(query))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今日は引っ越しの荷造りで一日つぶれた", False),
        ("一時的に止まってた", False),
        ("12月一日に引っ越す", True),
        ("十二月一日に引っ越す", True),
        ("来月一日に引っ越す", True),
        ("一時に集合", True),
        ("二日につぶれた", True),
    ],
)
def test_a_lone_first_is_a_date_only_after_a_month(text: str, expected: bool) -> None:
    assert carries(text, TIME) is expected


def test_carries_any_reads_every_asked_kind() -> None:
    assert carries_any("Every day after school, $10 a walk.", frozenset({TIME, QUANTITY}))
    assert carries_any("来週の金曜に行きます", frozenset({TIME}))
    assert not carries_any("She looked so proud of herself.", frozenset({TIME, QUANTITY}))
    assert not carries_any("November 21st", frozenset())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("二泊三日で回る", True),
        ("料理教室がもう八回目", True),
        ("家賃は8万2千円", True),
        ("二十人くらい", True),
        ("一緒に行こう", False),  # 一 in a word, not a count
        ("一応言っておくね", False),
        ("千葉に住んでる", False),
        ("両親と話した", False),
        ("二十分くらい歩いた", True),
        ("駅から十分で着く", True),  # 十分 "ten minutes"
        ("十分に休んでね", False),  # 十分 "enough"
        ("一番好きなのはこれ", False),  # 一番 "most"
        ("三番目に好き", True),
    ],
)
def test_a_japanese_quantity_is_a_numeral_that_counts(text: str, expected: bool) -> None:
    assert carries(text, QUANTITY) is expected


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("How muchだった？desk", {QUANTITY}),
        ("What dayだっけ、dentist", {TIME}),
        ("When wasそれ", {TIME}),
    ],
)
def test_an_english_question_against_japanese_is_read_as_when_spaced(
    text: str, kinds: set[AnswerType]
) -> None:
    assert asked_types(text) == frozenset(kinds)


@pytest.mark.parametrize(
    "text", ["6/14だって、軽井沢で", "歯医者は3/18", "Marchに行った", "yesterdayにね"]
)
def test_a_time_written_against_japanese_is_carried(text: str) -> None:
    assert carries(text, TIME)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # code and logs: no date
        ("df.to_csv('report.csv', sep=';')", False),  # a keyword argument
        ("value = dec(3) + oct_mode", False),  # a call, an identifier
        ("sort --sep , and cfg.oct.mask", False),  # an option, an attribute
        ("the value of cfg.monday.start", False),
        ("GET /api/v2/users/12/3 returned 404", False),  # a path's numbers
        ("the server listens on port 2048", False),
        ("error: 1903 at line 2012, pid=1999", False),
        ('File "app.py", line 2012, in main', False),
        ("see line 2012 of main.py", False),
        ("the job ended with exit code 2019 (status code 2001)", False),
        ("errno=1999 and exit status 2020", False),
        ("open localhost:2020 and issue #1987", False),
        ("the yesterday.log file and tonight_backup", False),
        # prose: a date
        ("Meeting moved to Sep 12", True),
        ("on 12/3 we met", True),
        ("Sept. 12 works for me", True),
        ("we went in mid-Sep", True),
        ("We met in Dec.", True),
        ("the party on 12/24/2025", True),
        ("on 3/4/26 at the lake", True),
        ("we support 2024 models", True),  # "support" is no "port"
        ("Advent of Code 2023 was when I learned Rust", True),  # a word that is prose too
        ("the dress code 2024 is out", True),
        ("My status 2020: single", True),
        ("the exit 2019 results", True),
        ("line 2012 of the report", True),  # of no file
        # a capital after a dot starts a sentence written without its space
        ("It rained yesterday.It was cold", True),
        ("The appointment is on Monday.It is at noon", True),
        ("ok.Tomorrow works", True),
        ("see you tomorrow", True),
    ],
)
def test_a_time_in_code_is_no_date(text: str, expected: bool) -> None:
    """ "sep=" read as September, 12/3 of a path as a day and "port 2048" as a year gave
    code the bonus of a date; then "Advent of Code 2023" lost its year and "Monday.It was
    fun" its weekday (a dot before a word was an attribute's in either case)."""
    assert carries(text, TIME) is expected


def test_a_when_question_gives_code_no_bonus_of_a_date(
    db_path: Path, clock: FixedClock, usem3: USEM3Embedder
) -> None:
    """A line of code with "sep=';'" was lifted as the answer to "when is…due?"."""
    turns = [
        "The report export writes df.to_csv('report.csv', sep=';') in export.py on port 2048",
        "The client moved the report export deadline to Sep 12",
    ]
    code, dated = _store(db_path, clock, usem3, turns, [timedelta(days=3), timedelta(days=2)])
    with Memory.open(db_path, embedder=usem3, clock=clock) as mem:
        r = mem.retrieve("when is the report export due?", limit=10, day_range=None)
    bonus = {x.episode.id: x.components.get("answer_type") for x in r.results}
    assert bonus[dated] == 1.0 and bonus[code] is None


def test_a_long_run_of_digits_is_read_in_linear_time() -> None:
    """A match was tried from each numeral of a run to its end: a run of 50,000 digits took
    28 s (a pack reads every sentence of a memory, however long)."""
    import time

    started = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    for run in ("1" * 50_000, "一" * 50_000):
        assert not carries(run + "x", TIME)  # (a number with no 月, 日…: no time)
        assert carries(run + "日", TIME) and carries(run + "回", QUANTITY)
    assert not carries("十分な時間", QUANTITY) and carries("三十分で着く", QUANTITY)
    assert time.thread_time() - started < 5  # (0.1 s; quadratic, minutes)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a clock time with a colon, in prose of either language
        ("18:30 from pier 4", True),
        ("It departs Takamatsu at 10:40.", True),
        ("the meeting is 10:40-11:30", True),
        ("at 9:00.It was late", True),  # (a sentence written without its space)
        ("フェリーは10:40発", True),
        ("15:00に駅で", True),
        ("１８：３０に出る", True),  # full-width
        ("25:00に寝た", True),  # late at night
        ("深夜25:00まで起きてた", True),
        ("18:30から飲み会", True),
        ("朝7:30に集合", True),
        ("dinner @ 19:00", True),
        ("open until 22:00 tonight", True),
        ("tomorrow morning 7:30 works", True),
        ("7:30 in the morning", True),
        ("6:30 p.m. at the station", True),
        ("9:00 to 17:00 on weekdays", True),
        ("受付は10:00〜", True),
        ("18:30!", True),  # a reply that is only a time
        # a score, a verse, a pace, a place in a video: its words make it no time
        ("the final score was 21:15", False),
        ("we beat them 10:20", False),
        ("we lost 10:20 to the Bears", False),
        ("Lakers 21:15", False),
        ("Leo memorised John 3:16", False),
        ("Romans 8:28 and Gen 1:27", False),
        ("read Luke 2:10-11 aloud", False),
        ("Section 12:30 of the contract", False),
        ("my pace is 5:30 now", False),
        ("ran a 25:30 5k", False),
        ("see 1:20 in the video", False),
        ("キロ5:30で走った", False),
        # a score, a ratio, a race's time, an address, a path, code: no clock time
        ("we won 3:1", False),
        ("we won 21:15 in the final", False),
        ("the screen's ratio 16:10", False),
        ("finished the marathon in 3:41:07", False),
        ("open localhost:8080", False),
        ("GET /schedule/12:30 returned 404", False),
        ("the link had t=10:30 in it", False),
        ("cfg.12:30 is set", False),
    ],
)
def test_a_clock_time_with_a_colon_is_a_time(text: str, expected: bool) -> None:
    """ "18:30 from pier 4" held no time (a clock time needed am/pm or 時): the answer to
    "what time does it leave?" was not lifted, nor its sentence kept in a long memory's
    quote. Any colon between digits then was one: a score, a verse, a pace."""
    assert carries(text, TIME) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a colon time in ordinary chat, with no word of time beside it
        ("dinner is 19:00", True),
        ("meeting moved to 14:00", True),
        ("the flight is 9:15", True),
        ("reservation 19:30", True),
        ("check-in is 15:00", True),
        ("doors open 18:30", True),
        ("it starts 20:00", True),
        ("I woke up 6:30", True),
        ("lunch 12:30?", True),
        ("the store opens 10:00", True),
        ("Boarding's 9:15, gate 42.", True),
        ("Is 7:30 ok?", True),  # (a word that opens a sentence, not a book)
        ("Dinner 19:00", True),
        ("Sundays 10:00 works", True),
        ("待ち合わせは18:30ね", True),
        ("予約18:30だよ", True),
        ("18:30で予約した", True),
        ("会議は14:00", True),
        ("電車は7:45", True),
        ("7:45の新幹線", True),
        ("集合は9:00", True),
        ("終電23:45", True),
        ("開場18:00、開演19:00", True),
        # a word of a score, a race or a video that is no part of the time's clause
        ("I ran 5k then dinner 19:00", True),
        ("my run at 6:30", True),  # (a time's preposition comes first)
        ("the final at 19:00", True),
        ("I won't make 19:00", True),
        # a score, a reference, a pace, a race's time, a place in a video
        ("final score was 21:15", False),
        ("Final score: Lakers 21:15", False),
        ("Lakers vs. Celtics 21:15", False),
        ("John 3:16", False),
        ("Romans 8:28", False),
        ("Gen 1:27", False),
        ("Luke 2:10-11", False),
        ("Section 12:30", False),
        ("pace is 5:30", False),
        ("ran a 25:30 5k", False),
        ("see 1:20 in the video", False),
        ("skip to 1:20 in the video", False),
        ("at a 5:30 pace", False),
        ("we lost 10:20 to the Bears", False),
        ("キロ5:30", False),
        ("ペースは5:30だった", False),
        ("21:15で勝った", False),
    ],
)
def test_a_colon_time_is_a_time_unless_its_words_make_it_a_score_a_verse_or_a_pace(
    text: str, expected: bool
) -> None:
    """A colon time was a time only beside a word of time ("at 18:30", 15:00に): "dinner is
    19:00", "Boarding's 9:15", 会議は14:00 and 7:45の新幹線 held none, and their turns got
    no bonus for "what time is…?"."""
    assert carries(text, TIME) is expected


def test_a_long_text_is_read_for_asked_kinds_and_colon_times_in_linear_time() -> None:
    """番号 asked for looked ahead to the end for a question mark from each 番号教え: 50,000
    characters of 番号教え took 6.7 s to read (and a pack reads the whole query)."""
    import time

    started = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    assert asked_types("番号教え" * 12_500) == frozenset()
    assert asked_types("番号教え" * 12_500 + "てくれる？") == frozenset({QUANTITY})
    assert not carries("John 3:16 " * 5_000 + "a" * 10_000, TIME)
    assert carries("a" * 50_000 + " dinner is 19:00", TIME)
    assert time.thread_time() - started < 1  # (0.2 s; 6.7 s before)


def test_a_turn_that_names_a_colon_time_in_ordinary_chat_answers_what_time(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Boarding's 9:15, gate 42." and 会議は14:00 held no time: the turns that named the
    flight or the meeting more often came first for "what time is boarding?"."""
    real_mem.add_exchange("The airline app is terrible, it logged me out twice.", "Ugh.")
    real_mem.add_exchange("I always get stuck in a middle seat on flights.", "Oh no.")
    boarding = real_mem.add_exchange("Got my boarding pass. Boarding's 9:15, gate 42.", "Ok!")
    real_mem.add_exchange("会議の資料まだ終わってない", "がんばって")
    real_mem.add_exchange("部長が会議でまた長話してた", "大変だね")
    meeting = real_mem.add_exchange("決まったよ、会議は14:00", "了解")
    score = real_mem.add_exchange("The final score was 21:15, what a game", "Wow!")
    for text in ("Made pasta for dinner", "猫がずっと寝てる"):
        clock.advance(days=1)
        real_mem.add_exchange(text, "Nice.")
    r = real_mem.retrieve("What time is boarding for my flight?")
    assert r.results[0].episode.id == boarding and "answer_type" in r.results[0].components
    ja = real_mem.retrieve("会議って何時だっけ？")
    assert ja.results[0].episode.id == meeting and "answer_type" in ja.results[0].components
    game = real_mem.retrieve("when is the next game?")
    assert score in [x.episode.id for x in game.results]
    assert not any(x.episode.id == score and "answer_type" in x.components for x in game.results)


def test_the_turn_that_answers_with_a_clock_time_is_packed(
    real_mem: Memory, clock: FixedClock
) -> None:
    """The reply "18:30 from pier 4" came second, without the bonus of a time, and only the
    turn that asked was packed; the same in Japanese."""
    asked = real_mem.add_exchange("Got the ferry tickets for Saturday!", "What time does it leave?")
    clock.advance(minutes=2)
    answer = real_mem.add_exchange("18:30 from pier 4", "Got it, have fun.")
    clock.advance(days=1)
    real_mem.add_exchange("フェリーのチケット取れた！", "いいね！何時に出るの？")
    clock.advance(minutes=2)
    answer_ja = real_mem.add_exchange("18:30に4番桟橋から", "了解、楽しんで！")
    for i in range(4):
        clock.advance(days=1)
        real_mem.add_exchange(f"Made pasta for dinner, the {i}th time", "Yum.")
    r = real_mem.retrieve("what time does the ferry leave?")
    assert r.results[0].episode.id == answer and r.results[1].episode.id == asked
    assert "18:30 from pier 4" in real_mem.pack(r).text
    ja = real_mem.retrieve("フェリー何時発だっけ")
    assert ja.results[0].episode.id == answer_ja
    assert "18:30に4番桟橋から" in real_mem.pack(ja).text


def test_a_long_memory_is_quoted_with_its_sentence_that_names_a_clock_time(
    real_mem: Memory,
) -> None:
    """The quote of a long memory kept the sentences that share the question's words and
    dropped "It departs Takamatsu at 18:30.", the answer."""
    story = (
        "Booked the ferry to Shodoshima for Saturday. It departs Takamatsu at 18:30. The ferry "
        "company said the ferry can get crowded on weekends, so the ferry staff suggest "
        "arriving early, and the ferry terminal has a small cafe where the ferry crew sells "
        "udon and coffee, which is great for a ferry trip with kids who get hungry."
    )
    real_mem.add_exchange(story, "Sounds like a fun trip!")
    real_mem.add_exchange("Made pasta for dinner", "Yum.")
    r = real_mem.retrieve("what time does the ferry leave?")
    assert "It departs Takamatsu at 18:30." in real_mem.pack(r).text
    other = real_mem.retrieve("is the ferry crowded on weekends?")  # (asks for no time)
    assert "crowded on weekends" in real_mem.pack(other).text


def test_a_score_or_a_pace_is_no_answer_to_a_question_of_when(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "the final score was 21:15" held a time: it got the bonus of one and came first for
    "when is the next game?", above the turn that says when; so did a pace, "5:30"."""
    game = real_mem.add_exchange("The next game is after the holidays", "Can't wait!")
    score = real_mem.add_exchange("What a game, the final score was 21:15", "Wow!")
    best = real_mem.add_exchange("My best 5k was the Sakura run, after my knee healed", "Nice.")
    pace = real_mem.add_exchange("My 5k pace is about 5:30 now", "Fast!")
    for text in ("Made pasta for dinner", "The bus was late again", "Work was busy"):
        clock.advance(days=1)
        real_mem.add_exchange(text, "Ok.")
    r = real_mem.retrieve("when is the next game?")
    assert r.results[0].episode.id == game
    assert not any(
        x.episode.id in (score, pace) and "answer_type" in x.components for x in r.results
    )
    assert real_mem.retrieve("when did I run my best 5k?").results[0].episode.id == best
    ferry = real_mem.add_exchange("The ferry leaves at 18:30", "Got it.")  # (a time still is)
    asked = real_mem.retrieve("what time does the ferry leave?")
    assert asked.results[0].episode.id == ferry and "answer_type" in asked.results[0].components


def test_a_question_of_a_number_by_name_lifts_the_turn_that_holds_it(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "what did the plumber cost?" and 沖縄の飛行機何便だっけ asked for no quantity: the
    replies "$350, ouch" and "JAL 903" stayed below the turns that named the topic."""
    real_mem.add_exchange("The plumber finally fixed the boiler", "How much did he charge?")
    clock.advance(minutes=2)
    cost = real_mem.add_exchange("$350, ouch", "Yikes, but at least it's fixed.")
    clock.advance(days=1)
    real_mem.add_exchange("沖縄行きの飛行機取れた！", "いいね！何便？")
    clock.advance(minutes=2)
    flight = real_mem.add_exchange("JAL 903", "了解！")
    for text in ("Watched a movie with Ken", "今日は雨だった"):
        clock.advance(days=1)
        real_mem.add_exchange(text, "Nice.")
    assert real_mem.retrieve("what did the plumber cost?").results[0].episode.id == cost
    assert real_mem.retrieve("沖縄の飛行機何便だっけ").results[0].episode.id == flight
    chat = real_mem.retrieve("the plumber was nice")  # (asks for nothing: no bonus)
    assert not any("answer_type" in x.components for x in chat.results)


@pytest.mark.parametrize("question", ["What's my cat called?", "猫の名前なんだっけ？"])
def test_the_turn_after_a_reply_that_did_not_know_is_lifted_whatever_is_asked(
    real_mem: Memory, clock: FixedClock, question: str
) -> None:
    """ "What's my cat's name again?" — "Hmm, I'm not sure you told me." — "Mochi! The grey
    one.": asked again days later for a name (no kind of answer), the user's answer is lifted
    above the turn that did not know, and packed (it was `low` and left out)."""
    for text in ("I had pasta for lunch", "Work was long today", "Going to the gym later"):
        real_mem.add_exchange(text, "Nice!")
        clock.advance(hours=5)
    real_mem.add_exchange("What's my cat's name again?", "Hmm, I'm not sure you told me.")
    clock.advance(minutes=1)
    answer = real_mem.add_exchange("Mochi! The grey one.", "Got it, Mochi the grey cat!")
    clock.advance(days=9)
    r = real_mem.retrieve(question, record=False)
    first = r.results[0]
    assert first.episode.id == answer and first.components.get("next_turn") == 1.0
    assert first.relevance != "low" and answer in real_mem.pack(r).episode_ids
    # a reply that knew: the turn after it is left alone
    clock.advance(days=1)
    real_mem.add_exchange("Do you like sushi?", "I love it, salmon especially!")
    clock.advance(minutes=1)
    after = real_mem.add_exchange("Me too, tuna is my favourite", "Nice!")
    r = real_mem.retrieve("Do I like sushi?", record=False)
    lifted = [x.episode.id for x in r.results if x.components.get("next_turn")]
    assert after not in lifted
    # nor after surprise at a statement: it left no question open
    clock.advance(days=1)
    real_mem.add_exchange(
        "I play the guitar in a band on weekends", "Whoa, I didn't know you played guitar!"
    )
    clock.advance(minutes=1)
    pizza = real_mem.add_exchange("ugh I'm starving, pizza time", "Haha okay.")
    r = real_mem.retrieve("Do I play any instruments?", record=False)
    assert not any(x.components.get("next_turn") for x in r.results)
    assert pizza not in real_mem.pack(r).episode_ids
    # nor after advice unsure of itself: it did not forget what the user told
    pizzas: list[int] = []
    for asked, unsure in (
        ("Should I quit my job at Sony?", "Hmm, I'm not sure — what does your gut say?"),
        ("猫の名前、何がいいかな？", "うーん、わからないけど、きなこはどう？"),
    ):
        clock.advance(days=1)
        real_mem.add_exchange(asked, unsure)
        clock.advance(minutes=1)
        pizzas.append(real_mem.add_exchange("lol idk, pizza time", "Enjoy!"))
    for question in ("What's my plan with my job at Sony?", "猫の名前なんだっけ？"):
        r = real_mem.retrieve(question, record=False)
        lifted = {x.episode.id for x in r.results if x.components.get("next_turn")}
        assert not lifted & set(pizzas), question


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("土曜日", True),
        ("土曜", True),
        ("飲み会は土曜", True),
        ("ヨガは火曜", True),
        ("飲み会が土曜にずれた", True),
        ("月曜から出社、金曜まで在宅", True),
        ("日曜、ひま？", True),
        ("日曜大工で棚を作った", False),  # a word of its own, not the day
        ("火曜サスペンスを見た", False),
        ("黒曜石のペンダント", False),
        ("on Tue", True),
        ("Thurs works for me", True),
        ("pilates moved to tues", True),
        ("see you on Sat", True),
        ("dinner next Sun?", True),
        ("I sat down and cried", False),  # the verb, not Saturday
        ("we wed in a small chapel", False),
        ("the sun came out", False),
        ("we sat on Sun Valley's deck", False),  # a capitalised name after it
    ],
)
def test_a_weekday_written_short_is_a_time(text: str, expected: bool) -> None:
    """土曜 without 日, as chat writes it (README's own 金曜に延期), and "Tue" or "Thurs" are
    weekdays; "sat", "wed", "sun" and "mon" only where nothing else can be meant."""
    assert carries(text, TIME) is expected
