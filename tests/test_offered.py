"""What a turn offers its reply: the memories of the time asked about, and feedback that
judges an answer against what the reply was shown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, InvalidInput, Memory, NewEpisode
from memengine.config import Config
from memengine.embed.base import Embedder, Vectors
from memengine.embed.usem3 import USEM3Embedder
from memengine.errors import EmbeddingError
from memengine.text import shared_phrases

from .helpers import HashEmbedder
from .openai_server import ScriptedOpenAI

JST = timezone(timedelta(hours=9))


class _CanGoDown:
    """An embedder that fails with EmbeddingError while ``up`` is False (a remote one down)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.up = inner, True
        self.id, self.dimension = inner.id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.up:
            raise EmbeddingError("the embedder is down")
        return self.inner.embed(texts)


@pytest.mark.parametrize(
    ("days", "question"),
    [
        (("公園を散歩した", "本屋で漫画を買った", "カフェでケーキ食べた"), "昨日何したっけ？"),
        (
            ("went bowling with Sam", "read a novel about whales", "cooked pasta for dinner"),
            "What did I do yesterday?",
        ),
    ],
)
def test_what_happened_in_the_time_asked_about_is_packed(
    tmp_path: Path, usem3: USEM3Embedder, days: tuple[str, str, str], question: str
) -> None:
    now = datetime(2026, 3, 10, 21, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for day, text in zip((7, 8, 9), days, strict=True):
            at = datetime(2026, 3, day, 19, 0, tzinfo=JST)
            mem.add_exchange(text, "Nice!", agent="u", occurred_at=at)
        r = mem.retrieve(question, agent="u", now=now)
        yesterday = next(x for x in r.results if x.episode.text.startswith(days[2]))
        assert r.should_inject and yesterday.rank == 1 and yesterday.relevance != "low"
        pack = mem.pack(r)
        assert yesterday.episode.id in pack.episode_ids
        assert ("尋ねられた時期のこと" in pack.text) or ("from the time asked about" in pack.text)


def _stock_replies(mem: Memory, clock: FixedClock) -> None:
    for text in ("My dog is called Biscuit.", "Work was long", "lol", "Nice weather today"):
        clock.advance(minutes=90)
        mem.add_exchange(text, "I see!", agent="u")
    clock.advance(minutes=90)


def test_an_answer_is_judged_only_against_what_the_reply_was_shown(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        _stock_replies(mem, clock)
        r = mem.retrieve("hmm", agent="u")  # small talk: nothing is packed
        assert not mem.pack(r).episode_ids and r.turn_id is not None
        # the stock reply is in every stored exchange; none was shown, so none was used
        assert mem.feedback(r.turn_id, answer="I see!", agent="u").used == ()
        r = mem.retrieve("What is my dog called?", agent="u")
        shown = mem.pack(r).episode_ids
        assert r.turn_id is not None and shown
        fb = mem.feedback(r.turn_id, answer="Your dog is called Biscuit.", agent="u")
        assert fb.used and set(fb.used) <= set(shown)
        # ids named explicitly may be any the turn returned
        r = mem.retrieve("hmm", agent="u")
        assert r.turn_id is not None
        low = r.results[-1].episode.id
        assert mem.feedback(r.turn_id, [low], agent="u").used == (low,)


def test_a_turn_recorded_before_offers_judges_every_candidate(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        _stock_replies(mem, clock)
        r = mem.retrieve("hmm", agent="u")
        assert r.turn_id is not None and not r.should_inject
        with mem.store.connections.write() as cur:  # as an older version wrote it
            raw = cur.execute("SELECT candidates FROM turns WHERE id = ?", (r.turn_id,))
            records = [{"id": c["id"], "f": c["f"]} for c in json.loads(raw.fetchone()[0])]
            cur.execute(
                "UPDATE turns SET candidates = ? WHERE id = ?", (json.dumps(records), r.turn_id)
            )
        assert mem.feedback(r.turn_id, answer="I see!", agent="u").used  # every one judged


def test_why_lines_name_a_phrase_once() -> None:
    query = "先月からフランス語の勉強を始めたよ！ いつからフランス語の勉強を始めたんだっけ？"
    assert shared_phrases(query, "先月からフランス語の勉強を始めたよ！") == [
        "先月からフランス語の勉強を始めた"  # (a CJK piece: at most MAX_PHRASE_CHARS, the
        # particles at its end left off; the から…始めた of the question is inside it)
    ]
    # a word is part of a longer one only as a word: "car" is not inside "cart"
    assert set(shared_phrases("a red cart and a car", "the red cart by my car")) == {
        "cart",
        "car",
        "red",
    }


@pytest.mark.parametrize(
    "question",
    ["What's the capital of France? I forgot it yesterday", "昨日の天気予報って当たった？"],
)
def test_a_question_about_something_else_is_not_answered_by_the_time_alone(
    tmp_path: Path, usem3: USEM3Embedder, question: str
) -> None:
    """The time is only the subject when nothing else is asked: yesterday's memories are
    still ranked first by it, but neither labelled relevant nor injected for it."""
    now = datetime(2026, 3, 10, 21, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for day, text in ((7, "公園を散歩した"), (9, "cooked pasta for dinner")):
            at = datetime(2026, 3, day, 19, 0, tzinfo=JST)
            mem.add_exchange(text, "Nice!", agent="u", occurred_at=at)
        r = mem.retrieve(question, agent="u", now=now)
        yesterday = next(x for x in r.results if x.episode.text.startswith("cooked"))
        assert yesterday.components.get("window") == 1.0
        assert "asked_time" not in yesterday.components
        assert not r.should_inject and not mem.pack(r).episode_ids


def test_a_learning_on_a_turn_that_offered_nothing_says_so(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.create_agent("u", perspectives=["names"])
        _stock_replies(mem, clock)
        r = mem.retrieve("hmm", agent="u", perspective="names")
        assert r.turn_id is not None and not r.should_inject
        with pytest.raises(InvalidInput, match="offered the reply no memory"):
            mem.feedback(r.turn_id, answer="Biscuit!", learning="keep names", agent="u")
        first = r.results[0].episode.id
        assert mem.feedback(r.turn_id, [first], learning="keep names", agent="u").used == (first,)


WEEK = [
    (1, "I went bowling with Sam and scored 180"),
    (1, "My sister called about her new apartment in Osaka"),
    (1, "昨日は同僚と焼肉を食べに行った"),
    (3, "I finished reading a novel about whales"),
    (5, "My dentist appointment got moved to next month"),
    (9, "We hiked Mount Takao with the kids"),
    (20, "I started learning Spanish on Duolingo"),
]


@pytest.mark.parametrize(
    ("question", "days"),
    [
        ("Remind me what I did yesterday.", {1}),
        ("By the way, what did I do yesterday?", {1}),
        ("昨日の出来事を教えて", {1}),
        # Monday 2 to Sunday 8 March, and the 昨日 told on Monday 9 (names_time)
        ("Summarize last week.", {3, 5, "昨日は同僚と焼肉を食べに行った"}),
        ("先週何があった？", {3, 5, "昨日は同僚と焼肉を食べに行った"}),
    ],
)
def test_every_memory_of_the_time_asked_about_is_packed_first(
    tmp_path: Path, usem3: USEM3Embedder, question: str, days: set[int | str]
) -> None:
    """However the request is worded, what occurred in the time asked about comes first and
    is packed, above what other days share with the question's words."""
    now = datetime(2026, 3, 10, 21, 0, tzinfo=JST)  # a Tuesday
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for ago, text in WEEK:
            at = now - timedelta(days=ago, hours=2)
            mem.add_exchange(text, "Nice!", agent="u", occurred_at=at)
        r = mem.retrieve(question, agent="u", now=now)
        wanted = {t for ago, t in WEEK if ago in days or t in days}
        first = [x.episode.text.split("\n")[0] for x in r.results[: len(wanted)]]
        assert set(first) == wanted
        packed = {mem.get(i).text.split("\n")[0] for i in mem.pack(r).episode_ids}
        assert r.should_inject and wanted <= packed


def test_the_life_ranking_keeps_what_was_found_by_its_date_or_by_the_llm(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """Stage 1's similarity floor is for what only similarity found: a question about a
    time alone is far from the words of what happened then."""
    now = datetime(2026, 3, 10, 21, 0, tzinfo=JST)
    days = ("went bowling with Sam", "read a novel about whales", "cooked pasta for dinner")
    with ScriptedOpenAI(embedding_dim=8) as srv:
        llm = {"base_url": srv.base_url, "turn_deadline_s": 5.0, "cache_expansions": False}
        cfg = Config.model_validate({"llm": llm})
        with Memory.open(
            tmp_path / "m.db", config=cfg, embedder=usem3, clock=FixedClock(now)
        ) as mem:
            ids = [
                mem.add_exchange(text, "Nice!", agent="u", occurred_at=now - timedelta(days=3 - i))
                for i, text in enumerate(days)
            ]
            question = "What did I do yesterday?"
            fast = mem.retrieve(question, agent="u", now=now, rank="life", llm=False)
            assert fast.should_inject and fast.results[0].episode.id == ids[2]
            assert fast.results[0].components["similarity"] < 0.3  # kept though below the floor
            srv.push_chat(json_data={"expanded_queries": [question], "detected_references": []})
            pick = {"id": ids[2], "relevance": "high", "reason": "what they did yesterday"}
            srv.push_chat(json_data={"relevant_episodes": [pick]})
            r = mem.retrieve(question, agent="u", now=now, rank="life", llm=True)
            assert r.should_inject and [x.episode.id for x in r.results] == [ids[2]]
            assert not r.degraded


def test_a_scorer_learns_from_what_an_answer_could_have_used(
    db_path: Path, clock: FixedClock
) -> None:
    """A turn judged from its answer labels the candidates it offered; the rest were never
    shown and teach nothing. Named ids label every candidate."""
    from memengine.store import lifecycle as store_lc

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        _stock_replies(mem, clock)
        quiet = mem.retrieve("hmm", agent="u")  # offers nothing
        assert quiet.turn_id is not None and quiet.results and not quiet.offered
        mem.feedback(quiet.turn_id, answer="I see!", agent="u")
        asked = mem.retrieve("What is my dog called?", agent="u")
        assert asked.turn_id is not None and asked.offered
        assert len(asked.offered) < len(asked.results)
        mem.feedback(asked.turn_id, answer="Your dog is called Biscuit.", agent="u")
        outcome = mem.retrieve("What is my dog called again?", agent="u")
        assert outcome.turn_id is not None
        mem.feedback(outcome.turn_id, task_success=True, helpful=True, agent="u")
        named = mem.retrieve("hmm again", agent="u")
        assert named.turn_id is not None
        mem.feedback(named.turn_id, [named.results[0].episode.id], agent="u")
        with mem.store.connections.read() as cur:
            x, y, *_ = store_lc.training_samples(cur, "u", 1000)
        assert len(x) == len(asked.offered) + len(named.results)
        assert sum(y) == 2


def test_a_memory_added_twice_is_offered_once_and_credited_once(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        first = mem.add("The zebra at the zoo is called Marty.", kind="fact")
        clock.advance(minutes=2)
        again = mem.add("The zebra at the zoo is called Marty.", kind="fact")
        r = mem.retrieve("what is the zebra at the zoo called?")
        assert r.turn_id is not None and {first, again} <= {x.episode.id for x in r.results}
        offered = [x.episode.id for x in r.offered]
        assert len(offered) == 1 and offered == list(mem.pack(r).episode_ids)
        fb = mem.feedback(r.turn_id, answer="The zebra is called Marty.")
        assert fb.used == tuple(offered)


def test_a_turn_next_to_a_matching_one_is_not_what_both_searches_agree_on(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """In a small agent every turn is in the vector search's top 3, and the full-text
    search reads neighbours' words too: the nurse turn after the cat's matched "cat" only
    through its neighbour."""
    with Memory.open(tmp_path / "m.db", embedder=usem3) as mem:
        cat = mem.add_exchange("My cat is called Mochi", "Lovely name!")
        nurse = mem.add_exchange("I work night shifts as a nurse in Leeds", "That's demanding.")
        pin = mem.add_exchange("My PIN for the bank is 4821", "I'll keep that safe.")
        for question, answer in (("What's my cat's name?", cat), ("What's my PIN?", pin)):
            r = mem.retrieve(question, record=False)
            by_id = {x.episode.id: x for x in r.results}
            assert by_id[answer].relevance == "high"
            assert by_id[nurse].components.get("bm25_neighbours_only") == 1.0
            assert by_id[nurse].relevance == "low"
            assert mem.pack(r).episode_ids == (answer,)


def test_each_query_is_checked_for_its_own_words_as_its_search_kept_them(
    tmp_path: Path,
) -> None:
    """Pooled, the terms of several queries went over the posting budget and the most
    frequent, "guitar", was left out: the guitar note seemed found by neighbours only."""
    from .helpers import word_episodes

    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        mem.add_many(word_episodes(12000, "u"))
        g = mem.add("guitar guitar guitar guitar guitar", kind="fact", agent="u")
        for extra in ([], ["cat dog"]):
            r = mem.retrieve("guitar", agent="u", extra_queries=extra, record=False)
            found = next(x for x in r.results if x.episode.id == g)
            assert "bm25_neighbours_only" not in found.components, extra
            assert found.relevance == "high", extra


def test_the_full_text_search_alone_does_not_pack_a_neighbours_hit(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """With the embedder down the nurse turn after the cat's was still packed."""
    embedder = _CanGoDown(usem3)
    with Memory.open(tmp_path / "m.db", embedder=embedder) as mem:
        cat = mem.add_exchange("My cat is called Mochi", "Lovely name!")
        mem.add_exchange("I work night shifts as a nurse in Leeds", "That's demanding.")
        mem.add_exchange("My PIN for the bank is 4821", "I'll keep that safe.")
        embedder.up = False
        r = mem.retrieve("What's my cat's name?", record=False)
        assert any(d.startswith("vector search skipped") for d in r.degraded)
        assert mem.pack(r).episode_ids == (cat,)


def test_a_retrieval_written_as_json_reads_back_as_it_was(db_path: Path, clock: FixedClock) -> None:
    from memengine.models import Retrieval

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        _stock_replies(mem, clock)
        r = mem.retrieve("What is my dog called?", agent="u")
        r = r.model_copy(update={"degraded": ("vector search skipped, the full-text search …",)})
        text = r.model_dump_json()
        assert '"degraded_parts":["vector"]' in text
        again = Retrieval.model_validate_json(text)
        assert again == r and again.degraded_parts == {"vector"}
        assert Retrieval.model_validate(r.model_dump()) == r
        assert mem.pack(again).text == mem.pack(r).text


def test_every_full_text_hit_is_checked_when_that_search_answers_alone(
    tmp_path: Path, clock: FixedClock
) -> None:
    """With three queries, nine hits are in some list's top 3: the PIN turn, found by its
    guitar neighbour's words, ranked seventh and was packed unchecked."""
    embedder = _CanGoDown(HashEmbedder(64))
    with Memory.open(tmp_path / "m.db", embedder=embedder, clock=clock) as mem:
        for text in (
            "My cat Mochi sleeps all day",
            "The cat knocked over a vase",
            "Took the cat to the vet",
            "My dog Rex barks",
            "The dog chewed a shoe",
            "Walked the dog in the park",
            "I practise guitar every evening",
        ):
            mem.add_exchange(text, "Oh!")
            clock.advance(days=1)
        mem.add_exchange("Bought new guitar strings", "Cool!")
        clock.advance(minutes=5)
        pin = mem.add_exchange("My bank PIN is 4821", "I'll keep it safe.")
        clock.advance(days=1)
        for i in range(20):
            mem.add_exchange(f"filler note number {i} about weather", "ok")
            clock.advance(days=1)
        embedder.up = False
        r = mem.retrieve("tell me about my cat", extra_queries=["dog", "guitar"], limit=10)
        assert any(d.startswith("vector search skipped") for d in r.degraded)
        found = next(x for x in r.results if x.episode.id == pin)
        assert found.components.get("bm25_neighbours_only") == 1.0
        assert found.relevance == "low" and pin not in mem.pack(r).episode_ids


def test_a_hit_a_bonus_lifts_later_was_checked_too(tmp_path: Path, clock: FixedClock) -> None:
    """With the embedder down, the seventh full-text hit, found through its neighbours'
    words, was lifted to the top by the date it holds and decided the turn unchecked."""
    embedder = _CanGoDown(HashEmbedder(64))
    with Memory.open(tmp_path / "m.db", embedder=embedder, clock=clock) as mem:
        for i in range(8):
            text = f"Long day at work number {i}"
            if i == 7:
                text = "Long day at work, lots of meetings and calls, finally home on June 3rd"
            mem.add_exchange(text, "Rest well.")
            clock.advance(minutes=2)
            mem.add(f"aquarium aquarium note {i}", kind="message")
            clock.advance(minutes=2)
        embedder.up = False
        r = mem.retrieve("When did I go to the aquarium?", kinds=["exchange"], record=False)
        assert any(d.startswith("vector search skipped") for d in r.degraded)
        assert all("bm25_neighbours_only" in x.components for x in r.results)
        assert not r.should_inject and not mem.pack(r).episode_ids


@pytest.mark.parametrize(
    ("turns", "question"),
    [
        (
            (
                ("My sister Sakura is having her wedding soon!", "Congrats! When and where?"),
                ("June 14th, at a little chapel in Karuizawa", "Lovely place."),
            ),
            "When is Sakura's wedding?",
        ),
        (
            (
                ("妹のさくらが結婚式挙げるんだって", "おめでとう！いつどこで？"),
                ("6月14日に軽井沢のチャペルでやるの", "素敵な場所だね"),
            ),
            "さくらの結婚式っていつだっけ？",
        ),
    ],
)
def test_the_answer_to_the_companions_question_is_packed(
    tmp_path: Path, usem3: USEM3Embedder, turns: tuple[tuple[str, str], ...], question: str
) -> None:
    """The date said in reply to "When and where?" matches the question only through the
    turn before it; its own date bonus had already ranked it higher than the lift would,
    and it lost the next_turn mark that lets such a hit count."""
    t0 = datetime(2026, 5, 1, 11, tzinfo=timezone.utc)
    clock = FixedClock(t0)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=clock) as mem:
        for day, said in enumerate([("Had pizza for lunch", "Yum!"), ("Morning!", "Hi!")]):
            clock.set(t0 + timedelta(days=day))
            mem.add_exchange(*said, agent="u")
        clock.set(t0 + timedelta(days=4))
        ids = []
        for said in turns:
            ids.append(mem.add_exchange(*said, agent="u"))
            clock.advance(minutes=2)
        clock.set(t0 + timedelta(days=8))
        r = mem.retrieve(question, agent="u")
        answer = next(x for x in r.results if x.episode.id == ids[1])
        assert answer.components.get("next_turn") == 1.0
        assert ids[1] in mem.pack(r).episode_ids


def test_a_time_question_gets_the_memories_of_that_time_the_searches_did_not_find(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """Sixty earlier askings of the same question fill both searches' lists: yesterday's
    one memory, which shares no word with it, was not a candidate (a companion soak
    packed other days' memories for 10 of its 36 time questions)."""
    now = datetime(2026, 3, 10, 21, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for day in range(60):
            at = now - timedelta(days=70 - day)
            mem.add_exchange(
                "What did we talk about yesterday?",
                f"Your trip, day {day}.",
                agent="u",
                occurred_at=at,
            )
        aquarium = mem.add_exchange(
            "Went to the aquarium with Ken, the jellyfish were amazing",
            "That sounds lovely!",
            agent="u",
            occurred_at=datetime(2026, 3, 9, 15, 0, tzinfo=JST),
        )
        mem.add(
            "a rule",
            kind="principle",
            agent="u",
            occurred_at=datetime(2026, 3, 9, 16, 0, tzinfo=JST),
        )
        r = mem.retrieve("What did we talk about yesterday?", agent="u", now=now)
        first = r.results[0]
        assert first.episode.id == aquarium
        assert first.components["by_date"] == 1.0 and first.components["asked_time"] == 1.0
        rule = mem.principles(agent="u")[0].id
        assert r.should_inject and mem.pack(r).episode_ids == (rule, aquarium)  # no other day
        # a day with no memory: the other days' answers are no answer to it
        later = now + timedelta(days=5)
        r = mem.retrieve("What did we talk about yesterday?", agent="u", now=later)
        assert r.results and all(x.components["asked_time"] == 0.0 for x in r.results)
        assert all(x.relevance == "low" for x in r.results) and not r.should_inject
        # not for a question about something else, nor past the caller's day range
        r = mem.retrieve("What did Ken say about the trip yesterday?", agent="u", now=now)
        assert all("by_date" not in x.components for x in r.results)
        r = mem.retrieve("What did we talk about yesterday?", agent="u", now=now, kinds=["fact"])
        assert r.results == ()


UTC_NOW = datetime(2026, 4, 8, 12, 0, tzinfo=timezone.utc)  # a Wednesday


def test_what_was_told_in_the_lag_after_the_time_asked_is_judged_as_before(
    tmp_path: Path,
) -> None:
    """ "Last weekend" is often told on Monday: that memory is no other time's (it was
    marked `asked_time` 0, `low`, and nothing was injected)."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(UTC_NOW)) as mem:
        monday = mem.add_exchange(
            "This weekend we hiked Mt. Takao, what a weekend",
            "Sounds lovely!",
            occurred_at=UTC_NOW - timedelta(days=2, hours=2),
        )
        mem.add_exchange("I like green tea", "Noted", occurred_at=UTC_NOW - timedelta(days=30))
        r = mem.retrieve("What did we do last weekend?", now=UTC_NOW)
        first = r.results[0]
        assert first.episode.id == monday and first.components["asked_time"] == 0.5
        assert first.relevance != "low" and r.should_inject
        assert monday in mem.pack(r).episode_ids


def _yesterday_among_askings(mem: Memory) -> int:
    mem.add_many(
        [
            NewEpisode(
                kind="exchange",
                user_text=f"what did we talk about yesterday {i}",
                reply_text="we talk a lot",
                occurred_at=UTC_NOW - timedelta(days=10 + i),
            )
            for i in range(80)
        ]
    )
    return mem.add_exchange(
        "Visited the aquarium with Ken", "Fun!", occurred_at=UTC_NOW - timedelta(hours=21)
    )


def test_the_life_ranking_keeps_the_memories_of_the_time_asked(tmp_path: Path) -> None:
    """It chose five other days' askings (`low`) and still said to inject: the pack was
    empty."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(UTC_NOW)) as mem:
        aquarium = _yesterday_among_askings(mem)
        r = mem.retrieve("What did we talk about yesterday?", now=UTC_NOW, rank="life")
        assert [x.episode.id for x in r.results] == [aquarium]
        assert r.results[0].components["by_date"] == 1.0
        assert r.should_inject and aquarium in mem.pack(r).episode_ids


def _scripted(
    tmp_path: Path, srv: ScriptedOpenAI, llm: dict[str, object], retrieval: dict[str, object]
) -> Memory:
    """A memory whose LLM is the scripted server, at UTC_NOW, recording no turns."""
    base = {"base_url": srv.base_url, "turn_deadline_s": 5.0, "cache_expansions": False}
    cfg = Config.model_validate(
        {"llm": {**base, **llm}, "retrieval": retrieval, "lifecycle": {"record_turns": False}}
    )
    return Memory.open(
        tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(UTC_NOW), config=cfg
    )


def _chat(mem: Memory, n: int, *, first_day: int) -> None:
    """``n`` turns of idle chat, one a day, the newest ``first_day`` days before UTC_NOW."""
    for i in range(n):
        mem.add_exchange(
            f"filler chat {i}", "ok", occurred_at=UTC_NOW - timedelta(days=first_day + i)
        )


def test_the_time_asked_replaces_the_configured_day_range_on_both_paths(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAI() as srv:
        retrieval = {"occurred_day_range": 30}
        with _scripted(tmp_path, srv, {"rerank_enabled": False}, retrieval) as mem:
            _chat(mem, 20, first_day=1)
            feb = mem.add_exchange(
                "Visited the aquarium with Ken",
                "Fun!",
                occurred_at=datetime(2026, 2, 10, 15, 0, tzinfo=timezone.utc),
            )
            question = "What did we talk about last February?"
            fast = mem.retrieve(question, llm=False, now=UTC_NOW)
            srv.push_chat(json_data={"expanded_queries": []})
            turn = mem.retrieve(question, llm=True, now=UTC_NOW)
            for r in (fast, turn):
                assert r.should_inject and r.results[0].episode.id == feb


def test_the_llm_turn_judges_the_time_it_searched(tmp_path: Path) -> None:
    """The expansion's window, not the message parser's, is the time asked: what the
    narrowed search found in it was marked another time's and hidden from the rerank."""
    with ScriptedOpenAI() as srv, _scripted(tmp_path, srv, {}, {}) as mem:
        _chat(mem, 30, first_day=20)
        mem.add_exchange(
            "Visited the aquarium with Ken",
            "Fun!",
            occurred_at=datetime(2026, 4, 2, 15, 0, tzinfo=timezone.utc),
        )
        bike = mem.add_exchange(
            "Bought a new bike",
            "Cool!",
            occurred_at=datetime(2026, 3, 27, 15, 0, tzinfo=timezone.utc),
        )
        reference = {  # within the message's own window (March): it may narrow it
            "type": "temporal",
            "surface": "last month",
            "resolved": "2026-03-23/2026-03-29",
        }
        srv.push_chat(
            json_data={"expanded_queries": ["last month"], "detected_references": [reference]}
        )
        srv.push_chat(
            json_data={
                "relevant_episodes": [{"id": bike, "relevance": "high", "reason": "bike"}],
                "injection_strategy": "quote_key_parts",
            }
        )
        r = mem.retrieve("What did we do last month?", now=UTC_NOW)
        _, rerank = srv.chat_requests
        assert f"[id {bike}]" in str(rerank["messages"][-1]["content"])
        assert [(x.episode.id, x.components["asked_time"]) for x in r.results] == [(bike, 1.0)]


def test_a_memory_told_days_later_about_the_time_asked_is_of_that_time(
    tmp_path: Path,
) -> None:
    """ "On Saturday April 4 I went hiking", told on the 6th to the 9th: it names the date
    asked about (it was marked another time's, `low`, and idle chat of the 4th packed)."""
    clock = FixedClock(datetime(2026, 4, 1, 9, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        for i in range(40):
            clock.advance(hours=9)
            mem.add_exchange(f"chat about topic {i}", "ok")
        told = []
        for days in (2, 3, 5):
            clock.set(datetime(2026, 4, 4, 20, tzinfo=timezone.utc) + timedelta(days=days))
            told.append(
                mem.add_exchange("On Saturday April 4 I went hiking on Mount Takao", "Wow!")
            )
        clock.set(UTC_NOW + timedelta(days=12))
        r = mem.retrieve("What did I do on April 4?", limit=10)
        marked = {x.episode.id for x in r.results if x.components.get("names_time") == 1.0}
        assert marked == set(told)
        assert all(x.components["asked_time"] == 1.0 for x in r.results[:3])
        # told three times, it is shown once before the 4th's chat; its copies after that
        assert r.results[0].episode.id in told and r.results[0].relevance == "high"
        assert r.results[0].episode.id in mem.pack(r).episode_ids
        copies = [x.episode.id for x in r.results if x.components.get("copy")]
        assert sorted(copies) == sorted(set(told) - {r.results[0].episode.id})


def test_a_wider_time_a_memory_names_is_not_the_day_asked_about(tmp_path: Path) -> None:
    """ "In April my cat was sick", told in May, covers April 4 but does not tell of it: it
    was lifted first and packed, above the hike of that day."""
    clock = FixedClock(datetime(2026, 4, 1, 9, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        for i in range(30):
            clock.advance(hours=9)
            mem.add_exchange(f"chat about topic {i}", "ok")
        clock.set(datetime(2026, 4, 4, 15, tzinfo=timezone.utc))
        hike = mem.add_exchange("I went hiking on Mount Takao today", "Lovely!")
        clock.set(datetime(2026, 5, 2, 10, tzinfo=timezone.utc))
        wide = [
            mem.add_exchange("Last month I started a new job at a bank", "Congrats!"),
            mem.add_exchange("In April my cat was sick most of the time", "Poor thing."),
        ]
        clock.set(datetime(2026, 5, 15, 10, tzinfo=timezone.utc))
        r = mem.retrieve("What did I do on April 4?")
        timed = {x.episode.id: x.components.get("asked_time") for x in r.results}
        assert timed[hike] == 1.0 and all(timed.get(i, 0.0) == 0.0 for i in wide)
        assert hike in mem.pack(r).episode_ids and not set(wide) & set(mem.pack(r).episode_ids)


def test_a_turn_that_would_offer_nothing_does_not_say_it_injects(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """The evidence behind ``should_inject`` (a cosine in the top results) can sit on a
    candidate whose fused score labels it ``low``: then nothing is offered, and the turn
    must not promise a MemoryPack that comes out empty."""
    cfg = Config.model_validate({"retrieval": {"pack_score_ratio": 1.0}})
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=usem3) as mem:
        mem.add_exchange("Kinako fixed the office printer on Tuesday", "Handy!")
        mem.add_exchange("My cat loves tuna and chicken", "Cute!")
        mem.add_exchange("The dentist appointment is on Friday", "OK.")
        mem.add_exchange("My sister lives in Osaka", "Nice city.")
        questions = ["what was Kinako's favourite food?", "Osaka food?", "Tuesday dinner?"]
        for question in questions:
            r = mem.retrieve(question)
            offers = any(x.relevance != "low" for x in r.results)
            assert r.should_inject is offers, question
            assert bool(mem.pack(r, query=question).text) is offers
        assert not mem.retrieve(questions[0]).should_inject  # its evidence was labelled low


def test_a_rare_word_matched_first_by_the_full_text_is_offered(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """The full-text search's first hit by its own words is ``medium`` however far its
    vector: 〆切 is a word the vectors barely weigh (cosine 0.07), and a vague small-talk
    turn must not be packed in its place."""
    now = datetime(2026, 6, 17, 20, tzinfo=JST)
    filler = ["今日は残業だった、眠い😪", "さっきラーメン食べてきた", "朝からジム行ってきた"]
    filler += ["夜に映画見てきた、最高だった✨", "お昼にパスタ作った", "久しぶりに母と電話した"]
    filler += ["今日は在宅勤務だった", "眠い😪"]
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for i in range(40):
            when = now - timedelta(days=100 - 2 * i)
            mem.add_exchange(filler[i % 8], "お疲れさま！", occurred_at=when)
        text = "月末締切のレポート、まだ半分も終わってない…締切は6月30日"
        due = mem.add_exchange(text, "がんばって！", occurred_at=now - timedelta(days=16))
        r = mem.retrieve("〆切いつだっけ")
        first = r.results[0]
        assert first.episode.id == due and first.components["bm25_rank"] == 1
        assert first.components.get("cosine", 0.0) < 0.29  # not by its vector
        assert [x.episode.id for x in r.offered][:1] == [due]


def test_a_latin_word_against_japanese_or_with_a_possessive_is_named() -> None:
    assert "meeting" in shared_phrases("昨日のmeetingどうだった？", "今日のmeetingは最悪だった")
    assert shared_phrases("What's my TOEIC goal?", "ＴＯＥＩＣの試験で800点取りたい") == ["toeic"]
    assert "takashi" in shared_phrases("Takashiって何のリーダーだっけ", "Takashiと1on1した")
    assert shared_phrases("When is kinako's vaccination?", "kinako has a vaccination") == [
        "vaccination",
        "kinako",
    ]


def test_a_number_of_one_or_two_digits_is_no_shared_phrase() -> None:
    assert shared_phrases("評価って8/10だったっけ", "10時に起きた、評価は高い") == ["評価"]
    assert "2026" in shared_phrases("the 2026 trip", "our 2026 trip to Oslo")


def test_an_in_law_is_named_whole() -> None:
    """The why line of a brother-in-law's memory said it shares "law" with a question about
    the mother-in-law."""
    text = "My brother-in-law Dave, my sister's husband, is a firefighter."
    assert shared_phrases("What's my mother-in-law's name?", text) == []
    assert shared_phrases("What does my brother-in-law do?", text) == ["brother-in-law"]
    assert shared_phrases("Is the law up-to-date?", "the up-to-date tax law") == [
        "up-to-date",
        "law",
    ]


def test_a_name_s_honorific_is_no_shared_phrase() -> None:
    """A question about さくらちゃん's birthday packed 結衣ちゃん's with the why line
    「ちゃんの誕生日」が一致: the honorific after a name is no shared word."""
    text = "結衣ちゃんの誕生日は5月3日"
    assert shared_phrases("さくらちゃんの誕生日っていつだっけ", text) == ["誕生日"]
    assert shared_phrases("小林くんの誕生日っていつ？", text) == ["誕生日"]
    assert shared_phrases("おばあちゃんの家どこだっけ", "おばあちゃんの家に行った") == [
        "おばあちゃんの家"
    ]
    assert shared_phrases("さんまの塩焼き好き？", "夜さんまの塩焼き食べた") == ["さんまの塩焼き"]


@pytest.mark.parametrize(
    ("told", "asked", "question"),
    [
        (
            (
                "Went hiking on Mount Rokko with Ken",
                "Baked sourdough bread at home",
                "Is it normal that my knee still hurts after the hike?",  # tells: no recall
            ),
            (
                ("What did I do last week?", "Let me think..."),
                ("What's my favourite food?", "Yakiniku!"),
            ),
            "What did I do last month?",
        ),
        (
            ("健太と六甲山に登った", "家でパンを焼いた", "登山のあと膝がまだ痛いのって普通？"),
            (("先週何してたっけ？", "えーと…"), ("私の好きな食べ物って何だっけ？", "焼肉だよね。")),
            "先月何してたっけ？",
        ),
    ],
)
def test_an_earlier_request_to_be_reminded_follows_what_was_told_in_the_time_asked(
    tmp_path: Path,
    usem3: USEM3Embedder,
    told: tuple[str, ...],
    asked: tuple[tuple[str, str], ...],
    question: str,
) -> None:
    """The user's own "What did I do last week?" of the month asked about tells nothing that
    happened then: what they told comes first, and it is never ``high``."""
    now = datetime(2026, 5, 10, 14, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        for i, text in enumerate(told):
            at = datetime(2026, 4, 3 + 7 * i, 20, 0, tzinfo=JST)
            mem.add_exchange(text, "Nice!", agent="u", occurred_at=at)
        for i, (text, reply) in enumerate(asked):
            at = datetime(2026, 4, 6 + 7 * i, 20, 0, tzinfo=JST)
            mem.add_exchange(text, reply, agent="u", occurred_at=at)
        r = mem.retrieve(question, agent="u", now=now)
        first = [x.episode.user_text for x in r.results[: len(told)]]
        assert set(first) == set(told) and r.should_inject
        recalls = [x for x in r.results if x.episode.user_text in dict(asked)]
        assert len(recalls) == len(asked)
        assert all(x.components.get("recall_only") == 1.0 for x in recalls)
        assert all(x.relevance == "medium" for x in recalls)
        assert not any(x.components.get("recall_only") for x in r.results[: len(told)])


def test_a_request_to_be_reminded_is_still_found_when_nothing_else_was_told_then(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """Alone in the time asked about, the earlier question is its memory: packed, not lost."""
    now = datetime(2026, 5, 10, 14, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        mem.add_exchange(
            "Went hiking on Mount Rokko with Ken",
            "Nice!",
            agent="u",
            occurred_at=datetime(2026, 2, 3, 20, 0, tzinfo=JST),
        )
        alone = mem.add_exchange(
            "What did I do last week?",
            "You baked bread.",
            agent="u",
            occurred_at=datetime(2026, 4, 6, 20, 0, tzinfo=JST),
        )
        r = mem.retrieve("What did I do last month?", agent="u", now=now)
        top = r.results[0]
        assert top.episode.id == alone and top.relevance == "medium"
        assert top.components["asked_time"] == 1.0 and r.should_inject
        assert alone in mem.pack(r).episode_ids


def test_a_request_to_be_reminded_comes_before_memories_of_other_times(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """Asked on the day asked about, the user's "Where did I park my bike again?" follows
    what they told that day but comes before every memory of another day; a later recall
    question that names the day ("What did I do on Sunday?" on Monday) is no telling
    either; a question that tells ("…after running the half marathon this morning?") is
    told, and may be ``high``."""
    now = datetime(2026, 6, 3, 12, 0, tzinfo=JST)  # Wednesday
    sunday = datetime(2026, 5, 31, 9, 0, tzinfo=JST)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        before = mem.add_exchange(
            "Work was busy, lots of meetings",
            "Hang in there",
            agent="u",
            occurred_at=sunday - timedelta(days=2),
        )
        parked = mem.add_exchange(
            "Where did I park my bike again?", "At the station.", agent="u", occurred_at=sunday
        )
        tv = mem.add_exchange(
            "Watched some TV in the evening",
            "Relaxing",
            agent="u",
            occurred_at=sunday + timedelta(hours=10),
        )
        later = mem.add_exchange(
            "What did I do on Sunday?",
            "You watched TV.",
            agent="u",
            occurred_at=sunday + timedelta(days=1, hours=10),
        )
        r = mem.retrieve("What did I do on Sunday?", agent="u", now=now)
        ids = [x.episode.id for x in r.results]
        assert ids.index(tv) < ids.index(parked) < ids.index(before)
        assert ids.index(later) < ids.index(before)
        by_id = {x.episode.id: x for x in r.results}
        assert by_id[tv].components.get("recall_only") is None
        for asked in (parked, later):
            assert by_id[asked].components["recall_only"] == 1.0
            assert by_id[asked].relevance == "medium"
        assert by_id[before].relevance == "low"
        assert {tv, parked} <= set(mem.pack(r).episode_ids)

        raced = mem.add_exchange(
            "Any idea why my knee hurts after running the Osaka half marathon this morning?",
            "Probably overuse; rest and ice it.",
            agent="u",
            occurred_at=sunday,
        )
        r = mem.retrieve("Did I run a race on Sunday?", agent="u", now=now)
        top = r.results[0]
        assert top.episode.id == raced and "recall_only" not in top.components
        assert top.relevance == "high"


@pytest.mark.parametrize(
    "question", ["What did I do last week?", "先週何した？", "What happened last week?"]
)
def test_a_time_asked_about_shows_each_thing_said_then_once_before_any_twice(
    tmp_path: Path, usem3: USEM3Embedder, question: str
) -> None:
    """A week of daily greetings and small talk beside one event: the event is among the
    results a pack shows, and no saying is shown twice before every one is shown once."""
    chat = [
        ("I'm so tired today", "Hang in there."),
        ("おはよう！", "そっか〜"),
        ("雨だね", "そっか〜"),
        ("Morning!", "Take care!"),
    ]
    event = "Got my wisdom tooth pulled at the dentist today"
    clock = FixedClock(datetime(2026, 6, 22, 9, tzinfo=JST))  # a Monday
    config = Config(time_zone="Asia/Tokyo")
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=clock, config=config) as mem:
        for day in range(7):
            for i in range(3):
                said = (event, "Ouch, rest well!") if (day, i) == (4, 1) else chat[(day + i) % 4]
                mem.add_exchange(*said)
                clock.advance(hours=4)
            clock.set(datetime(2026, 6, 23 + day, 9, tzinfo=JST))
        clock.set(datetime(2026, 7, 1, 9, tzinfo=JST))  # the next week's Wednesday
        r = mem.retrieve(question, record=False, limit=10)
        said = [x.episode.user_text for x in r.results]
        shown = said[: Config().retrieval.max_results]
        assert event in shown and len(set(shown)) == len(shown)
        assert event in mem.pack(r).text
        for x in r.results:  # (a later copy is marked, and comes after its first)
            assert bool(x.components.get("copy")) == (said.index(x.episode.user_text) < x.rank - 1)


def test_a_short_turn_said_again_with_a_new_fact_in_its_reply_is_no_copy(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """A week of うん, each reply with an event of its own, asked 先週何した？: every event is
    packed (keyed on the user's turn alone, the others were copies of the first, and one
    was packed), and the same words at another time, after them, are packed when there is
    room."""
    clock = FixedClock(datetime(2026, 11, 11, 9, tzinfo=JST))  # a Wednesday
    events = (
        "歯医者お疲れさま！親知らず抜いたの大変だったね",
        "楽天の面接うまくいってよかったね！",
        "映画『ゴジラ』ユキちゃんと観に行けてよかったね",
    )
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=clock) as mem:
        told = [
            mem.add_exchange("うん", reply, occurred_at=datetime(2026, 11, 3 + i, 20, tzinfo=JST))
            for i, reply in enumerate(events)
        ]
        pills = [
            mem.add_exchange(
                "薬飲んだ", "えらい！", occurred_at=datetime(2026, 11, d, 8, tzinfo=JST)
            )
            for d in (3, 4)
        ]
        r = mem.retrieve("先週何した？", record=False, limit=10)
        packed = mem.pack(r).episode_ids
        assert set(told) | set(pills) <= set(packed)
        again = [x.episode.id for x in r.results if x.components.get("copy")]
        assert len(again) == 1 and again[0] in pills
        rank = {x.episode.id: x.rank for x in r.results}
        assert all(rank[again[0]] > rank[i] for i in [*told, *pills] if i != again[0])


@pytest.mark.parametrize(
    ("said", "question"),
    [
        (
            [
                ("The meeting is on Monday at 3", "Noted", timedelta(hours=3)),
                ("Made pasta tonight", "Yum", timedelta(hours=2)),
                ("Scratch that, the meeting is at 4", "Got it, 4 it is.", timedelta(hours=1)),
            ],
            "When is the meeting?",
        ),
        (
            [
                ("今週の飲み会は金曜の19時からだよ", "楽しみだね！金曜の飲み会", timedelta(days=2)),
                ("夕飯にカルボナーラ作った", "おいしそう", timedelta(days=1)),
                ("飲み会が土曜にずれた", "そうなんだ", timedelta(hours=1)),
            ],
            "飲み会っていつだっけ？",
        ),
    ],
)
def test_a_newer_memory_both_searches_rank_in_their_top_3_is_high(
    tmp_path: Path, usem3: USEM3Embedder, said: list[tuple[str, str, timedelta]], question: str
) -> None:
    """The update of a fact ranks just below it by both searches, its fused score under
    ``pack_score_ratio`` of the first's (.72, .73): found by both in their top 3 and newer
    than the first, it is ``high`` as README says, not left unpacked."""
    now = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        ids = [mem.add_exchange(text, reply, occurred_at=now - ago) for text, reply, ago in said]
        r = mem.retrieve(question)
        update = next(x for x in r.results if x.episode.id == ids[2])
        assert update.components["knn_rank"] <= 3 and update.components["bm25_rank"] <= 3
        assert update.relevance == "high"
        assert ids[2] in mem.pack(r, query=question).episode_ids
        second = next(x for x in r.results if x.episode.id == ids[1])
        assert second.relevance == "low"  # (newer too, but matched by its neighbours' words)


@pytest.mark.parametrize(
    ("said", "question"),
    [
        (
            [
                ("My dentist appointment is on March 12th at 10am", "Noted", timedelta(days=9)),
                ("My sister hates going to the dentist", "Many do!", timedelta(days=5)),
                (
                    "The dentist's waiting room had the cutest fish tank lol",
                    "Aww",
                    timedelta(days=2),
                ),
            ],
            "When is my dentist appointment?",
        ),
        (
            [
                ("Anna's birthday is on July 14th", "Noted!", timedelta(days=9)),
                (
                    "Anna loved the birthday cake I baked for my nephew",
                    "Sweet!",
                    timedelta(days=5),
                ),
                ("Bought Anna a scarf, she's always cold", "Thoughtful", timedelta(days=2)),
            ],
            "When is Anna's birthday?",
        ),
    ],
)
def test_newer_chatter_both_searches_rank_in_their_top_3_is_not_lifted(
    tmp_path: Path, usem3: USEM3Embedder, said: list[tuple[str, str, timedelta]], question: str
) -> None:
    """In a small store every memory is in the vector top 3: a newer one that tells no
    change nor corrects anything ("My sister hates going to the dentist") is not lifted
    past ``pack_score_ratio`` for being newer than the answer."""
    now = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        ids = [mem.add_exchange(text, reply, occurred_at=now - ago) for text, reply, ago in said]
        r = mem.retrieve(question)
        assert r.results[0].episode.id == ids[0]
        for x in r.results:
            if x.episode.id in ids[1:]:
                assert x.relevance != "high", x.episode.user_text
