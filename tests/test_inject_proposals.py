"""A proposal or an offer that asks nothing still injects the memory it touches
(:func:`memengine.retrieve.proposal.proposes`, :func:`memengine.retrieve.inject.plan_evidence`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory
from memengine.config import RetrievalConfig
from memengine.embed.usem3 import USEM3Embedder
from memengine.models import Episode
from memengine.retrieve.fastpath import Candidate
from memengine.retrieve.inject import plan_evidence, should_inject
from memengine.retrieve.proposal import proposes

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)
EN = [
    ("I love sushi, it's my favorite food", "Sushi is the best."),
    ("I'm allergic to peanuts", "Good to know, I'll remember."),
    ("My wife can't handle spicy food anymore", "Noted, mild dishes for her."),
    ("Work was so busy today, back to back meetings", "That sounds draining."),
    ("The bus was late again", "Annoying!"),
    ("I started reading a mystery novel", "Fun, who's the author?"),
    ("Can't decide what to watch tonight", "Maybe a comedy?"),
    ("My knee hurts a bit after the hike", "Take it easy and ice it."),
]
JA = [
    ("パクチー苦手なんだよね", "そうなんだ、覚えとくね"),
    ("辛いの無理", "了解、辛いのは避けようね"),
    ("もうビールは飲んでない", "健康的だね"),
    ("仕事めっちゃ忙しかった", "お疲れさま！"),
    ("今夜何見るか迷う", "コメディとかどう？"),
    ("明日雨らしいね", "傘忘れないでね"),
    ("電車また遅れてた", "大変だったね"),
    ("新しいランニングシューズ買った", "どこのやつ？"),
]


@pytest.mark.parametrize(
    "text",
    [
        # suggestions
        "Let's get sushi tonight!",
        "ok let's just order pizza",
        "lets go camping this weekend",
        "Shall we go out for ramen",
        "We should get sushi tonight",
        "I think we should order Thai tonight",
        "Let's stop by the bakery on the way",  # a visit, not a topic dropped
        "I watched a movie, let's get sushi after",  # no title, no one's words
        # words of telling in an earlier clause are the speaker's news
        "Emma said it's amazing, let's try the new sushi place Friday!",
        "Mom called, let's get shrimp tacos Friday",  # "called" names only without a comma
        "I told you, let's get sushi",
        "I texted Emma, let's meet at 7",
        # an apostrophe that opens no quotation
        "I loved the 90's vibe, let's hit that shrimp shack Friday",
        "'90s night, let's dance",
        "I miss you :'( let's get sushi",
        "'cause I'm hungry, let's eat",  # an elision: no closing mark
        # one capitalised verb is no title
        "Let's Skype tonight",
        "Let's Uber there",
        "OK. Let's Go!",
        "Let's Dance by the river",  # "by" and no name
        # a topic dropped, then a plan
        "Let's stop and get coffee",
        "Let's forget about work and go out",
        "We should try that new ramen place",
        # offers and what was made for someone
        "I'm baking you peanut butter cookies!",
        "Gonna grab you a latte on the way",
        "I'll make broccoli soup for my son",
        "Thinking of ordering a cheese pizza for everyone",
        "I'm cooking dinner for Emma tonight",
        "I made a spicy curry for my wife tonight",
        "Let me make you a sandwich",
        "Honey, I'm making you pancakes",
        "I'm planning to make you dinner",
        "Tonight I'm making you lasagna",
        "I'm making you fried rice",
        "I made Emma a bracelet",  # a name right after the verb, then the thing
        "I made my sister Emma a cake",
        "I'm getting him a coffee",
        "I baked a cake for her",
        # taking the partner somewhere
        "I'm taking you out for shrimp tacos tonight!",
        "I'll take you to that ramen place",
        "Let me treat you to lunch",
        "I'll pick you up at 7",
        # Japanese: volitional, getting ready, offering
        "今夜パクチー鍋にしよう",
        "激辛ラーメン行こうよ！",
        "息子ににんじんケーキ焼こうかな",
        "週末は温泉行こ〜",
        "一緒に飲もうよ",
        "夕飯はカレーにしよっか",
        "明日はお寿司にしましょう",
        "カラオケ行きましょ",
        "ラーメン食べよ",
        "あとで話そう",  # the volitional of a す verb
        "一緒に探そう",
        "引っ越そう",
        "よし、やろう",  # やろう after a comma, a particle or a katakana word
        "一緒にやろう",
        "ゲームやろうぜ",
        "BBQやろう",  # after a Latin word too
        "今度パクチー料理の店で飲み会やろう！",  # after an activity or an event
        "週末パクチー料理の店で誕生日会やろうよ",
        "勉強やろう",
        "宿題やろう",
        "明日やろう",  # after a time
        "予約しとこう",
        "今夜はすき焼きにするね",  # a meal chosen
        "日曜日はお寿司にするね",
        "誕生日はケーキにするね",
        "飲み会でビール頼んどくね",
        "ケーキ買っとくね",
        "お店予約しときます",
        "激辛カレー作るね",
        "帰りにビール買ってくるよ",
        "明日お弁当作りますね",
        "妻は辛いの苦手だから甘口カレー作るね",  # the last clause is the speaker's
        "息子にケーキ焼いてあげた",
        "妻のために激辛カレーを作った",
    ],
)
def test_a_proposal_or_an_offer_is_read(text: str) -> None:
    assert proposes(text)


@pytest.mark.parametrize(
    "text",
    [
        # news and chat about oneself
        "I'm making dinner",
        "I made dinner",
        "I bought new running shoes",
        "I've been cooking for hours",
        "I'm ordering new shoes for Friday",  # a time, not a person
        "She made you a cake",  # someone else's doing
        "I'm getting old",
        "We might go camping next month",
        # "let's" that plans nothing, and "lets" inside a sentence
        "Let's see",
        "let's see what happens",
        "Let's be honest, it was bad",
        "He lets me drive his car",
        "Let us know when you arrive",
        "I got you",  # agreement, nothing given
        # a topic dropped, a guess, a regret
        "Let's not talk about it",
        "Let's not",
        "let's change the subject",
        "Let's stop",
        "let's drop it",
        "let's move on",
        "Let's just forget it",
        "Let's wait and see",
        "Shall we say it went badly",
        "We should have left earlier",
        "We should be fine",
        # "we should" and no joint doing: advice or a verdict
        "I think we should break up",
        "We should talk",
        "We should probably talk",
        "Let's not and say we did",  # a topic dropped, then no plan
        # someone else's words, a title
        "She said let's get sushi tonight.",
        "My boss said, let's circle back on Monday",
        '"Let\'s go," he shouted.',
        "The song goes 'let's dance, put on your red shoes'",
        "We watched Let's Get It On last night",
        "Let's Dance by David Bowie is on the radio",
        "Let's Dance by David Bowie is playing",
        "We watched Let's Dance",  # "Let's" capitalised inside the sentence
        "Let's Stay Together is my favourite song",
        "She told me let's get sushi",  # who is told, with no comma
        "She said: let's go",
        "a song called let's go",
        "'Let's go!' he said.",  # the quotation closes in the next sentence
        "\u201cLet's go,\u201d he shouted.",
        # "for" a thing, a place or a brand; one's own news of him or her
        "I took my medicine for my headache",
        "I got a new job for my career",
        "I made a cake for my birthday yesterday",
        "I picked Python for my project",
        "I booked a flight for Tokyo",  # told in the past: a place as often as a name
        "I made it for ChatGPT",
        "I took him to the vet",
        "I took Max to the park",
        "I got them yesterday",
        "I got them for Christmas",
        "I got him a present but he hated it",
        "I made her laugh",
        "I made you cry",
        "I got you covered",
        "I'm taking you seriously",
        "I'm treating you like a friend",
        "I took you out for dinner",  # told in the past
        "I'll take you up on that",
        # Japanese news, greetings and guesses
        "今日カレー作った",
        "新しいランニングシューズ買った",
        "今日暑いね",
        "おはよう！",
        "ありがとう",
        "夢のようだった",
        "明日雨だろう",
        "たぶん晴れるでしょう",
        "信頼するよ",
        "来月キャンプ行くかも",
        "辛いの無理",
        "どうしよう",
        "どうしようかな",
        "美味しそう",  # そう of a look, not a す verb's volitional
        "そうそう",
        "涙出そう",
        "参考にするね",  # thanks: no meal nor time chosen
        "今日はここまでにするね",  # an end, a rest or a decision chosen, not a meal
        "今日はこれで終わりにするね",
        "今日はもう寝ることにするね",
        "誕生日は休みにするね",
        "健康のためよ",  # ためよ: "for its sake", not 溜めよう
        "ケーキ一こ",  # a counter, not 行こ
        "何こ",
        "今朝も寝ぼう",
        "もっとこう",
        "ちょっとこう",
        "明日もう",
        # the Kansai copula and insults, not the verb やる
        "それ嘘やろう",
        "そうやろう",
        "また雨やろう",
        "長引くやろう",
        "明日は雨やろう",  # a time as the topic, then another noun
        "問題やろう",
        "無理やろう",
        "ばかやろう",
        "このやろう",
        "バカやろう",
        # a topic dropped, a thing declined
        "この話はやめよう",
        "もう仕事の話はやめましょう",
        "その話やめよ",
        "やめとこう",
        "やめよっか",
        "やめとく",
        "遠慮しとく",
        "今日はやめときます",
        "お酒は控えときます",
        # someone else's offer
        "母が作るね",
        "妻がケーキ焼くよ",
        "彼は頭痛薬買ってくるよ",
        "お母さんがお弁当作りますよ",
        "子供がケーキ焼くよ",
        "彼氏が作るね",
        # a thing noted or seen to, no plan with anyone
        "考えておくね",
        "覚えておくね",
        "メモしとくね",
        "分かった、やっとく",
        "確認しとく",
        # no outing
        "I'm taking you to court",
        "I'll pick you up on that later",
        "Careful or I'll take you to task",
    ],
)
def test_news_and_small_talk_are_no_proposal(text: str) -> None:
    assert not proposes(text)


def test_a_long_text_is_read_in_time() -> None:
    """Each ending is looked for once per sentence, and who receives an offer a few words
    after its verb: a paste of repeated stems costs its length, not its square."""
    start = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    assert not proposes("作" * 20_000)
    assert not proposes("のために" * 5_000)
    assert not proposes("planning " * 2_200)
    assert not proposes("'a " * 10_000 + "let's go'")  # openings looked for once
    assert not proposes("let's " + "stop and " * 3_000 + "see")  # one "and" read after a drop
    assert not proposes("said, " * 5_000 + "let's go")  # the telling word read near "let's"
    assert proposes("x" * 30_000 + "\nLet's get sushi tonight!")  # the end is read
    assert time.thread_time() - start < 2.0


def test_a_long_run_of_trailing_marks_is_read_in_time() -> None:
    """What follows a Japanese sentence's last word is found from its end: a run of one laugh
    or emoji before a last letter cost its square when a ``…+$`` search tried it from every
    character (about a second for each of these; the bound is a guard, they take
    milliseconds)."""
    start = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    for run in ("😂", "w", "〜", "ー", "♪"):
        assert not proposes(run * 50_000 + "x")
        assert proposes("焼肉行こう" + run * 50_000)  # the run after the last word is left out
    assert time.thread_time() - start < 1.0


def _cand(i: int, **comps: float) -> Candidate:
    return Candidate(Episode.model_construct(id=i, text=f"episode {i}"), 1.0 / i, dict(comps))


def test_a_proposal_injects_a_high_memory_above_the_floor() -> None:
    cfg = RetrievalConfig()
    floor = cfg.proposal_min_cosine
    high = [_cand(1, knn_rank=1.0, bm25_rank=2.0, cosine=floor + 0.05)]
    faint = [_cand(1, knn_rank=1.0, bm25_rank=1.0, cosine=floor - 0.05)]
    vector_only = [_cand(1, knn_rank=1.0, cosine=0.6)]  # medium at best: no word shared
    neighbours = [_cand(1, knn_rank=1.0, bm25_rank=1.0, bm25_neighbours_only=1.0, cosine=0.6)]
    assert plan_evidence(high, cfg)
    assert not any(plan_evidence(c, cfg) for c in (faint, vector_only, neighbours))
    assert should_inject(high, cfg, asks=False, proposes=True)
    assert not should_inject(high, cfg, asks=False)  # small talk: below statement_min_cosine
    assert not should_inject(faint, cfg, asks=False, proposes=True)
    assert not should_inject(vector_only, cfg, asks=False, proposes=True)
    # without vectors nothing tells what a proposal touches
    assert not should_inject(high, cfg, asks=False, lexical_only=True, proposes=True)


@pytest.fixture
def companion(tmp_path: Path, usem3: USEM3Embedder) -> Iterator[Memory]:
    """Two small agents, one English and one Japanese, each with a few likes, dislikes and
    an allergy among everyday chat."""
    mem = Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(T0 + timedelta(days=30)))
    for agent, turns in (("en", EN), ("ja", JA)):
        for i, (user, reply) in enumerate(turns):
            mem.add_exchange(user, reply, agent=agent, occurred_at=T0 + timedelta(days=i))
    with mem:
        yield mem


@pytest.mark.parametrize(
    ("agent", "text", "memory"),
    [
        ("en", "Let's get sushi tonight!", "I love sushi, it's my favorite food"),
        ("en", "I'm baking you peanut butter cookies!", "I'm allergic to peanuts"),
        (
            "en",
            "I made a spicy curry for my wife tonight",
            "My wife can't handle spicy food anymore",
        ),
        ("ja", "今夜パクチー鍋にしよう", "パクチー苦手なんだよね"),
        ("ja", "激辛カレー作るね", "辛いの無理"),
        ("ja", "飲み会でビール頼んどくね", "もうビールは飲んでない"),
        ("en", "We should get sushi tonight", "I love sushi, it's my favorite food"),
        ("ja", "一緒にパクチー料理探そう", "パクチー苦手なんだよね"),
        ("en", "Mom called, let's get sushi Friday", "I love sushi, it's my favorite food"),
        ("en", "I'm taking you out for peanut noodles tonight!", "I'm allergic to peanuts"),
        ("ja", "今度パクチー料理の店で飲み会やろう！", "パクチー苦手なんだよね"),
    ],
)
def test_a_proposal_packs_the_preference_it_touches(
    companion: Memory, agent: str, text: str, memory: str
) -> None:
    r = companion.retrieve(text, agent=agent, record=False)
    assert r.signals["asks"] == 0.0 and r.signals["proposes"] == 1.0
    assert r.should_inject
    assert memory in [x.episode.user_text for x in r.offered]
    assert memory in companion.pack(r, query=text).text


@pytest.mark.parametrize(
    ("agent", "text"),
    [
        # news that touches a preference is still small talk: only a restatement injects
        ("en", "I had sushi for lunch"),
        ("en", "I'm making dinner"),
        ("ja", "ビール飲んだ"),
        ("ja", "今日カレー作った"),
        ("en", "I took my medicine for my knee"),  # for a thing, not a person
        # chat that is no plan: the memory is found (cosines 0.55-0.68), but the topic is
        # dropped or the offer someone else's
        ("en", "Let's see"),
        ("en", "Let's not talk about sushi"),
        ("ja", "ビールの話はやめよう"),
        ("ja", "母がビール買ってくるよ"),
        # a proposal that touches nothing stored, or shares only 新しい with a memory
        # (cosine 0.20, well under proposal_min_cosine)
        ("en", "let's go!!"),
        ("en", "Let's play a board game"),
        ("ja", "ボードゲームしよう"),
        ("ja", "新しい本を読もう"),
    ],
)
def test_news_and_unrelated_proposals_stay_empty(companion: Memory, agent: str, text: str) -> None:
    r = companion.retrieve(text, agent=agent, record=False)
    assert r.signals["asks"] == 0.0
    assert not r.should_inject and companion.pack(r, query=text).text == ""
