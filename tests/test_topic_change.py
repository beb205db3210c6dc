"""A question asked at the end of a message that first tells of another matter is searched
as it would be asked alone (:func:`memengine.retrieve.topic_change.asked_after`): on real
SQLite with the offline default embedder."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memengine import Memory
from memengine.retrieve.topic_change import asked_after

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)

VENT_JA = (
    "今日ほんとに最悪だった…朝から電車は遅れるし、会社着いたら上司に怒られるし、"
    "昼ごはん食べる時間もなかったし、午後の会議は長引くし、帰りは雨に降られてびしょ濡れ、"
    "もう散々な一日だったよ〜(´;ω;｀)"
)
VENT_EN = (
    "Ugh, what a day. The train was late, my boss yelled at me in front of everyone, "
    "I skipped lunch because the meeting ran over, and then it poured on the way home. "
    "I'm soaked and exhausted."
)
MEMORIES = [
    ("家のwifiのパスワードはmochi2024だよ", "覚えておくね！"),
    ("通ってる病院は佐藤クリニックっていうの", "佐藤クリニックね、覚えた！"),
    ("上司がまた残業させてきて最悪", "それは大変だったね…"),
    ("今日は仕事で疲れたー", "お疲れさま！ゆっくり休んでね"),
    ("電車が遅れて会議に遅刻した", "それはついてなかったね"),
    ("雨で洗濯物が乾かない", "梅雨だもんね"),
    ("My doctor is Dr. Patel at Riverside Clinic", "Noted!"),
    ("My boss made me stay late again", "That sounds exhausting."),
    ("Work was so tiring today", "Rest up!"),
    ("The train was late and I missed my meeting", "Bad luck!"),
    ("Had lunch with coworkers", "Nice, what did you eat?"),
    ("Ken and I had a fight about the dishes", "I hope you make up."),
    ("Ken said I never listen to him", "That must have hurt."),
]


def test_the_question_after_words_that_open_another_matter_is_its_own() -> None:
    asked = "ところでさ、wifiのパスワードなんだっけ"
    assert asked_after(VENT_JA + asked) == asked  # (no full stop before ところで)
    assert asked_after(f"{VENT_JA}\n{asked}") == asked
    assert asked_after("疲れた。上司に怒られたし。そういえば病院の名前なんだっけ") == (
        "そういえば病院の名前なんだっけ"
    )
    anyway = "Anyway, what's the wifi password again?"
    assert asked_after(f"{VENT_EN} {anyway}") == anyway
    # the words at a sentence's end: the sentence that holds them
    assert asked_after("What a day. What's my doctor's name, by the way?") == (
        "What's my doctor's name, by the way?"
    )
    assert asked_after(f"{VENT_EN} btw what is my doctor called") == "btw what is my doctor called"


@pytest.mark.parametrize(
    "text",
    [
        "I had a fight with Ken. He was so mad. Anyway, what did he say last time?",  # leans back
        "Ken and I had a fight. Anyway, what did Ken say last time?",  # its word said before
        "I had a fight with Ken. He was so mad. What did he say last time?",
        "Work was awful. My boss yelled at me. I quit it anyway.",  # "all the same"; no question
        "My sister moved to Osaka, by the way. I miss her.",  # another matter, told, not asked
        "By the way, what's my wifi password?",  # nothing told before it
        # a last question without such words: as often about what was told
        "My sister teased me again. I fretted over what to wear. What did I go with in the end?",
        "今日は最悪だった。上司に怒られた。ところで、それっていつだっけ？",  # それ: leans back
        "今日は最悪だった。上司に怒られた。もう疲れた。",
        "疲れた。そういえば駅前のカフェが閉店するらしくて。冷蔵庫が空っぽなんだよね。",  # (tells)
    ],
)
def test_a_question_that_leans_on_what_was_told_is_not_split(text: str) -> None:
    assert asked_after(text) is None


@pytest.mark.parametrize(
    ("question", "memory"),
    [
        ("ところでさ、wifiのパスワードなんだっけ", 0),
        ("ところでさ、病院の名前なんだっけ", 1),
        ("Anyway, what's my doctor's name?", 6),
    ],
)
def test_a_question_after_a_vent_finds_its_memory_as_asked_alone(
    real_mem: Memory, question: str, memory: int
) -> None:
    """The review's run-on messages: the vent's words drowned the question (its memory out
    of the top five, the day's memories packed as high); now it ranks first and is packed,
    as when the vent is the message before, and the vent's memories are listed, not packed
    as asked for."""
    ids = [
        real_mem.add_exchange(u, r, occurred_at=T0 + timedelta(hours=i))
        for i, (u, r) in enumerate(MEMORIES)
    ]
    vent = f"{VENT_EN} " if question.isascii() else VENT_JA  # (no full stop before ところで)
    alone = real_mem.retrieve(question, recent=[{"role": "user", "text": vent}])
    r = real_mem.retrieve(vent + question)
    assert r.results[0].episode.id == ids[memory] == alone.results[0].episode.id
    assert r.results[0].relevance == alone.results[0].relevance == "high"
    assert r.should_inject and real_mem.pack(r).episode_ids[0] == ids[memory]
    told = {ids[i] for i in (2, 3, 4, 5, 7, 8, 9, 10)}  # the day's: the boss, the train…
    assert all(x.relevance == "low" for x in r.results if x.episode.id in told)
    assert r.queries[0] == question and len(r.queries) == 2  # the whole message beside it


def test_a_question_that_leans_on_the_message_keeps_its_context(real_mem: Memory) -> None:
    """A message that asks about what it told ("I had a fight with Ken. … What did he say
    last time?") is its one query, and Ken's words are found."""
    ids = [
        real_mem.add_exchange(u, r, occurred_at=T0 + timedelta(hours=i))
        for i, (u, r) in enumerate(MEMORIES)
    ]
    text = "I had a fight with Ken again. He was so mad. Anyway, what did he say last time?"
    r = real_mem.retrieve(text)
    assert r.queries == (text,)
    assert {x.episode.id for x in r.results[:2]} == {ids[11], ids[12]}
