"""The life cycle through the facade: turns, feedback, perspectives, principles, recall, ranking."""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memengine import (
    Config,
    FeedbackExists,
    FixedClock,
    InvalidInput,
    Memory,
    NotFound,
    Retrieval,
)
from memengine.config import LifecycleConfig
from memengine.embed.usem3 import USEM3Embedder
from memengine.errors import ConfigError
from memengine.lifecycle.answer_match import (
    _without_change_words,
    match_answer,
    named_days,
    uncommon,
)
from memengine.lifecycle.answer_words import japanese_words, stems
from memengine.lifecycle.features import FEATURES
from memengine.text import fold, query_terms

from .helpers import HashEmbedder
from .test_changes import FILLER, FILLER_JA, _told


@pytest.fixture
def shop(mem: Memory) -> dict[str, int]:
    mem.create_agent("default", perspectives=["コスト", "納期"])
    return {
        "price": mem.add("Acme sells steel at 20% off for bulk orders", kind="fact", tags=["acme"]),
        "delivery": mem.add("Steel deliveries from Acme take three weeks", kind="fact"),
        "brochure": mem.add("A brochure about aluminium pricing and steel", kind="education"),
        "rule": mem.add("Always double check steel invoices before paying", kind="principle"),
    }


def test_retrieval_records_a_turn_and_counts_candidates(mem: Memory, shop: dict[str, int]) -> None:
    r = mem.retrieve("acme steel price")
    assert r.turn_id is not None
    returned = {x.episode.id for x in r.results}
    assert returned
    for episode_id in shop.values():
        assert mem.get(episode_id).candidate_count == (1 if episode_id in returned else 0)
        assert mem.get(episode_id).access_count == 0  # retrieval is not use
    r2 = mem.retrieve("acme steel price")
    assert r2.turn_id == r.turn_id + 1
    assert mem.get(shop["price"]).strength == 1.0
    assert mem.get(shop["brochure"]).strength == 0.5  # read-only material starts weaker


def test_turns_can_be_switched_off(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(record_turns=False))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        ep = m.add("steel prices", kind="fact")
        r = m.retrieve("steel prices")
        assert r.turn_id is None and m.get(ep).candidate_count == 0


def test_explicit_feedback_reinforces_use_impact_and_perspective(
    mem: Memory, shop: dict[str, int], clock: FixedClock
) -> None:
    r = mem.retrieve("acme steel price", perspective="コスト")
    clock.advance(minutes=5)
    fb = mem.feedback(
        r.turn_id, [shop["price"]], helpful=True, task_success=True, learning="bulk pays off"
    )
    assert fb.used == (shop["price"],) and fb.method == "explicit"
    assert fb.impact == 3.5 and fb.outcome == "success" and fb.perspective == "コスト"
    life = mem.life_of(shop["price"])
    ep = life.episode
    assert ep.access_count == 1 and ep.last_access == clock.now
    assert ep.impact_score == 3.5
    assert ep.strength == pytest.approx(1.0 + 0.1 + 3.5 * 0.2)
    assert life.strength_by_perspective == {"コスト": pytest.approx(0.15)}
    assert life.learnings == {"コスト": ["bulk pays off"]}
    untouched = mem.get(shop["delivery"])
    assert untouched.access_count == 0 and untouched.strength == 1.0
    with pytest.raises(FeedbackExists, match="already has feedback"):  # an InvalidInput
        mem.feedback(r.turn_id, [shop["price"]])
    assert mem.get(shop["price"]).access_count == 1  # a retried call changes nothing


def test_feedback_on_a_memory_deleted_after_the_turn(mem: Memory, shop: dict[str, int]) -> None:
    r = mem.retrieve("acme steel price", perspective="コスト")
    returned = [x.episode.id for x in r.results]
    gone, kept = returned[0], returned[1]
    mem.delete([gone])
    newer = mem.add("I never want to hear about my landlord", kind="fact")
    assert newer not in shop.values() and newer != gone  # its id is not handed out again
    fb = mem.feedback(r.turn_id, [gone, kept], helpful=True, learning="noted")
    assert fb.used == (kept,) and gone not in fb.reasons
    assert any(f"[{gone}]" in d and "deleted" in d for d in fb.degraded)
    assert mem.get(kept).access_count == 1
    life = mem.life_of(newer)
    assert life.episode.access_count == 0 and life.strength_by_perspective == {}


def test_feedback_errors(mem: Memory, shop: dict[str, int]) -> None:
    with pytest.raises(NotFound):
        mem.feedback(999, [1])
    r = mem.retrieve("aluminium brochure", limit=1)
    other = next(i for i in shop.values() if i != r.results[0].episode.id)
    with pytest.raises(InvalidInput, match="did not return"):
        mem.feedback(r.turn_id, [other])
    with pytest.raises(InvalidInput, match="no perspective '品質'"):
        mem.feedback(r.turn_id, [], perspective="品質")
    with pytest.raises(InvalidInput, match="per perspective"):
        mem.feedback(r.turn_id, [], learning="x")
    with pytest.raises(InvalidInput, match="--perspective 品質"):
        mem.retrieve("steel", perspective="品質")
    with pytest.raises(ConfigError, match="needs an LLM"):
        mem.feedback(r.turn_id, answer="x", judge="llm")
    assert mem.feedback(r.turn_id, []).used == ()


def test_used_memories_are_found_in_the_answer(mem: Memory, shop: dict[str, int]) -> None:
    r = mem.retrieve("acme steel", limit=4)
    assert {shop["price"], shop["delivery"]} <= {e.id for e in r.episodes}
    fb = mem.feedback(r.turn_id, answer="Ask ACME for the bulk discount on the next order.")
    assert fb.method == "match"
    assert shop["price"] in fb.used and "tag 'acme'" in fb.reasons[shop["price"]]
    r = mem.retrieve("acme steel", limit=4)
    fb = mem.feedback(r.turn_id, answer="Steel deliveries from Acme take about three weeks.")
    assert shop["delivery"] in fb.used
    assert "key terms" in fb.reasons[shop["delivery"]] or "similar" in fb.reasons[shop["delivery"]]
    r = mem.retrieve("acme steel", limit=4)
    fb = mem.feedback(r.turn_id, answer="I do not know.")
    assert fb.used == ()


def test_principles_are_always_packed(mem: Memory, shop: dict[str, int]) -> None:
    mem.add("Never promise a delivery date without checking stock", kind="fact",
            tags=["principle"])  # fmt: skip
    r = mem.retrieve("what is the weather like on mars", limit=3)
    pack = mem.pack(r)
    assert pack.text.startswith("[PRINCIPLES]")
    assert "double check steel invoices" in pack.text
    assert "Never promise a delivery date" in pack.text
    assert pack.text.count("double check steel invoices") == 1
    assert mem.principles()[0].id == shop["rule"]
    assert "[PRINCIPLES]" not in mem.pack(r, principles=False).text
    other = mem.retrieve("acme", agent="someone-else")
    assert "[PRINCIPLES]" not in mem.pack(other, agent="someone-else").text


def test_deep_recall_restores_archived_memories(mem: Memory, shop: dict[str, int]) -> None:
    mem.store.set_status([shop["delivery"]], "archived")
    with mem.store.connections.write() as cur:
        cur.execute(
            "UPDATE episodes SET strength = 0.05, consolidation_level = 3 WHERE id = ?",
            (shop["delivery"],),
        )
    normal = mem.retrieve("steel deliveries three weeks")
    assert shop["delivery"] not in [e.id for e in normal.episodes]
    deep = mem.retrieve("steel deliveries three weeks", deep=True)
    recalled = next(e for e in deep.episodes if e.id == shop["delivery"])
    assert recalled.status == "active" and recalled.strength == 0.5
    assert recalled.consolidation_level == 1
    stored = mem.get(shop["delivery"])
    assert (stored.status, stored.strength, stored.consolidation_level) == ("active", 0.5, 1)
    assert shop["delivery"] in [e.id for e in mem.retrieve("steel deliveries three weeks").episodes]


def test_life_ranking_is_opt_in(mem: Memory, shop: dict[str, int]) -> None:
    fast = mem.retrieve("acme steel bulk price")
    assert "life_score" not in fast.results[0].components
    life = mem.retrieve("acme steel bulk price", rank="life")
    assert life.results
    for item in life.results:
        assert set(FEATURES) <= set(item.components)
        assert item.components["similarity"] >= mem.config.lifecycle.similarity_threshold
        assert item.score == item.components["life_score"]
        assert item.components["learned"] == 0.0
    scores = [x.score for x in life.results]
    assert scores == sorted(scores, reverse=True)
    assert [x.rank for x in life.results] == list(range(1, len(scores) + 1))
    with pytest.raises(InvalidInput):
        mem.retrieve("acme", rank="other")  # type: ignore[arg-type]


def test_life_ranking_prefers_strong_memories(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(life_ranking=True, similarity_threshold=0.0))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        weak = m.add("budget report for the harbour project", kind="fact")
        strong = m.add("budget report for the harbour project", kind="fact")
        with m.store.connections.write() as cur:
            cur.execute("UPDATE episodes SET strength = 0.1 WHERE id = ?", (weak,))
            cur.execute("UPDATE episodes SET strength = 4.0 WHERE id = ?", (strong,))
        r = m.retrieve("harbour budget report")
        assert [e.id for e in r.episodes][:2] == [strong, weak]


def test_threshold_selection_cuts_at_the_cliff(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(
        lifecycle=LifecycleConfig(
            life_ranking=True, selection="threshold", selection_threshold=0.99,
            similarity_threshold=0.0,
        )
    )  # fmt: skip
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        m.add("harbour budget report", kind="fact")
        r = m.retrieve("harbour budget report")
        assert r.results == () and not r.should_inject and r.turn_id is not None


def _used(mem: Memory, question: str, episode_id: int, times: int = 3) -> None:
    """``question`` asked ``times`` times, ``episode_id`` used in each answer: a strong memory."""
    for _ in range(times):
        mem.feedback(mem.retrieve(question).turn_id, [episode_id])


@pytest.mark.parametrize(
    ("old_text", "new_text", "question", "filler"),
    [
        (
            "My gym membership is $50 a month",
            "The gym raised my membership to $65 a month",
            "How much is my gym membership?",
            FILLER,
        ),
        ("家賃は7万円だよ", "家賃が7万5千円に上がった", "家賃いくらだっけ？", FILLER_JA),
    ],
)
def test_life_ranking_puts_a_later_change_before_the_strong_fact_it_changes(
    real_mem: Memory,
    clock: FixedClock,
    old_text: str,
    new_text: str,
    question: str,
    filler: list[tuple[str, str]],
) -> None:
    """An old fact used in three answers outscores the newer memory that changes it, yet
    the change comes first, scored as the best of the two (its own life score kept); with
    ``limit=1`` the change is brought in in the old fact's place, not the old fact alone."""
    old, new = _told(real_mem, clock, old_text, new_text, filler)
    _used(real_mem, question, old)
    assert real_mem.get(old).strength > real_mem.get(new).strength
    r = real_mem.retrieve(question, rank="life", record=False)
    assert [x.episode.id for x in r.results[:2]] == [new, old]
    change, fact = r.results[0], r.results[1]
    assert change.components["changes"] == old and "brought_back" not in change.components
    assert change.components["life_score"] < fact.components["life_score"] == fact.score
    assert change.score == fact.score and [x.rank for x in r.results[:2]] == [1, 2]
    text = real_mem.pack(r).text
    assert text.index(new_text) < text.index(old_text)
    alone = real_mem.retrieve(question, rank="life", record=False, limit=1).results
    assert [x.episode.id for x in alone] == [new] and alone[0].components["brought_back"] == 1.0


@pytest.mark.parametrize(
    ("old_text", "new_text", "other", "question", "filler"),
    [
        (
            "My gym membership is $50 a month",
            "The gym was packed today, waited 20 minutes for a rack",
            "I switched my phone plan to a cheaper one",
            "How much is my gym membership?",
            FILLER,
        ),
        (
            "家賃は7万円だよ",
            "家賃を払いに銀行へ行ってきた",
            "スマホのプランを安いのに変えた",
            "家賃の話を覚えてる？",
            FILLER_JA,
        ),
    ],
)
def test_life_ranking_keeps_its_order_for_a_newer_memory_that_changes_nothing(
    real_mem: Memory,
    clock: FixedClock,
    old_text: str,
    new_text: str,
    other: str,
    question: str,
    filler: list[tuple[str, str]],
) -> None:
    """A newer memory of the same subject that says no change, beside one with a change word
    about something else, stays where its life score puts it: below the stronger old fact,
    nothing brought in."""
    old, new = _told(real_mem, clock, old_text, new_text, filler)
    real_mem.add_exchange(other, "Nice", occurred_at=clock.now)
    _used(real_mem, question, old)
    r = real_mem.retrieve(question, rank="life", record=False)
    ids = [x.episode.id for x in r.results]
    assert ids.index(old) < ids.index(new)
    for item in r.results:
        assert item.score == item.components["life_score"]
        assert "changes" not in item.components and "brought_back" not in item.components
    scores = [x.score for x in r.results]
    assert scores == sorted(scores, reverse=True)
    alone = real_mem.retrieve(question, rank="life", record=False, limit=1).results
    assert [x.episode.id for x in alone] == [old]


def test_never_used_lists_often_retrieved_unused_memories(
    mem: Memory, shop: dict[str, int]
) -> None:
    for _ in range(6):
        r = mem.retrieve("acme steel", limit=4)
        mem.feedback(r.turn_id, [shop["price"]])
    listed = [e.id for e in mem.never_used(min_candidates=5)]
    assert shop["delivery"] in listed
    assert shop["price"] not in listed and shop["rule"] not in listed
    assert mem.never_used() == []  # the default needs more than 50


def test_agents_and_perspectives(mem: Memory) -> None:
    a = mem.create_agent("buyer", perspectives=["コスト", "納期"])
    assert a.perspectives == ("コスト", "納期")
    b = mem.create_agent("buyer", perspectives=["品質", "コスト"])
    assert b.perspectives == ("コスト", "納期", "品質")
    assert [x.name for x in mem.agents()] == ["buyer"]
    with pytest.raises(InvalidInput):
        mem.create_agent(" ")


def test_deep_recall_leaves_a_low_result_archived(mem: Memory) -> None:
    ids = [
        mem.add_exchange(t, "ok", agent="u")
        for t in (
            "My sister Hana lives in Sapporo",
            "I hate cilantro",
            "My car is a blue Corolla",
            "The wifi password is tulip42",
        )
    ]
    mem.store.set_status(ids, "archived")
    deep = mem.retrieve("Where does my sister Hana live?", agent="u", deep=True)
    offered = {r.episode.id for r in deep.offered}
    low = {r.episode.id for r in deep.results} - offered
    assert ids[0] in offered and low
    for i in ids:
        assert mem.get(i).status == ("active" if i in offered else "archived"), i


def test_a_short_answer_drawn_from_a_long_memory_is_credited(real_mem: Memory) -> None:
    """A reply of two or three words from a memory shares few of the memory's terms; the
    answer's uncommon terms coming from it count ("Patellar tendinopathy.")."""
    for i in range(60):  # a file where "day", "great" and "sounds" are common
        real_mem.add_exchange(f"Slow day number {i}, reading.", "Sounds great, enjoy the day!")
    physio = real_mem.add_exchange(
        "Physio was good. Daniel says it's patellar tendinopathy, no running for three weeks.",
        "Sensible. Did he give you exercises?",
    )
    squats = real_mem.add_exchange(
        "Yes, squats on a slope board, three sets of fifteen every day.", "Good luck with them."
    )
    r = real_mem.retrieve("What did my physio diagnose again?")
    assert physio in {x.episode.id for x in r.results if x.relevance != "low"}
    fb = real_mem.feedback(r.turn_id, answer="Patellar tendinopathy.")
    assert fb.used == (physio,)
    assert "of the answer's words from it" in fb.reasons[physio]
    r = real_mem.retrieve("How many sets of my knee exercises am I supposed to do?")
    assert squats in {x.episode.id for x in r.results if x.relevance != "low"}
    assert squats in real_mem.feedback(r.turn_id, answer="Three sets of fifteen a day.").used


def test_a_short_answer_told_in_two_memories_credits_both(real_mem: Memory) -> None:
    """ "Patellar tendinopathy." told in two memories is drawn from both: the answer's
    uncommon terms count for each memory they come from, however many hold them."""
    diagnosed = real_mem.add_exchange(
        "My physio says my knee pain is patellar tendinopathy, so I need to rest for six "
        "weeks and do eccentric squats every morning",
        "That sounds like a plan.",
    )
    again = real_mem.add_exchange(
        "Knee still hurts after the run today, the patellar tendinopathy is not getting any "
        "better at all honestly",
        "Sorry to hear that.",
    )
    real_mem.add_exchange("Had pasta for dinner", "Yum!")
    r = real_mem.retrieve("What did my physio say my knee problem was?")
    assert {diagnosed, again} <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="Patellar tendinopathy.")
    assert set(fb.used) == {diagnosed, again}
    assert fb.reasons[again] == "2/2 of the answer's words from it"
    r = real_mem.retrieve("What did my physio say my knee problem was?")
    assert real_mem.feedback(r.turn_id, answer="I'm not sure, sorry!").used == ()


def test_a_stock_reply_of_common_words_is_not_credited_for_its_words(real_mem: Memory) -> None:
    for i in range(60):
        real_mem.add_exchange(f"Slow day number {i}, reading.", "Sounds great, enjoy the day!")
    r = real_mem.retrieve("What did I do on my slow day?")
    offered = {x.episode.id for x in r.results if x.relevance != "low"}
    assert offered
    fb = real_mem.feedback(r.turn_id, answer="Great, sounds like a lovely day!")
    assert not any("answer's words" in why for why in fb.reasons.values())


def test_a_stock_reply_stored_as_a_reply_is_no_use_of_it_in_a_young_file(
    real_mem: Memory,
) -> None:
    """In a file of ten exchanges every word is uncommon: the answer "Sounds great, have a
    lovely day!" was credited to the memory whose stored reply said just that (and a
    Japanese one through its hiragana pairs). The user's side is what an answer draws on."""
    market = real_mem.add_exchange(
        "I'm off to the farmers market this morning to buy apples and leeks.",
        "Sounds great, have a lovely day!",
    )
    for user, reply in [
        ("The dentist appointment is at 14 Oak Road on Monday.", "Noted."),
        ("I started reading Dune.", "A classic!"),
        ("仕事が大変だった", "お疲れ様でした！ゆっくり休んでくださいね"),
    ]:
        real_mem.add_exchange(user, reply)
    r = real_mem.retrieve("Remind me, when did I go to the farmers market?")
    assert market in {x.episode.id for x in r.results if x.relevance != "low"}
    assert real_mem.feedback(r.turn_id, answer="Sounds great, have a lovely day!").used == ()
    r = real_mem.retrieve("仕事大変だったっけ？")
    fb = real_mem.feedback(r.turn_id, answer="お疲れ様でした！ゆっくり休んでくださいね")
    assert not any("answer's words" in why for why in fb.reasons.values())


def _companion_weeks(mem: Memory, clock: FixedClock, days: list[tuple[str, str]]) -> list[int]:
    """One exchange a day from the clock's day on, each dated when it was said (the pack's
    date line), with small talk between; the ids of ``days``' exchanges."""
    start, ids = clock.now, []
    filler = [("Had pasta for dinner", "Yum!"), ("Traffic was awful", "Ugh.")]
    for n, (user, reply) in enumerate(days):
        clock.set(start + timedelta(days=3 * n))
        ids.append(mem.add_exchange(user, reply, occurred_at=clock.now))
        clock.advance(days=1)
        mem.add_exchange(*filler[n % 2], occurred_at=clock.now)
    clock.set(start + timedelta(days=3 * len(days) + 1))
    return ids


def _offered(r: Retrieval) -> set[int]:
    return {x.episode.id for x in r.offered}


def _judged(
    mem: Memory, answer: str, ids: list[int], similar: dict[int, float] | None = None
) -> dict[int, str]:
    """What the judge finds of ``answer`` in the memories ``ids`` offered together (its
    uncommon terms read from the file; the ``similar`` cosines given, else none)."""
    terms = query_terms(answer)
    rows, counts = mem.store.document_counts(terms)
    episodes = [mem.get(i) for i in ids]
    rare = uncommon(terms, rows, counts)
    return match_answer(answer, episodes, similar or {}, mem.config.lifecycle, rare)


def _cosines(mem: Memory, answer: str, ids: list[int]) -> dict[int, float]:
    """The cosines of ``answer`` to the memories ``ids``, as feedback reads them."""
    return mem.store.similarities(mem.embedder.embed([answer])[0], ids)


def test_a_japanese_word_of_the_answer_counts_once(real_mem: Memory, clock: FixedClock) -> None:
    """「田中さんはトヨタで働いてるよ。」 credited 佐藤さんがトヨタ辞めたらしい too: トヨタ was five
    of the answer's terms (ト, ヨ, タ, トヨ, ヨタ), five of nine. A word counts once, and a
    memory that holds the answer's words only as another offered memory holds them and more
    (佐藤さんもトヨタで働いてる) is not what it drew on; an answer of one word (高尾山) is drawn
    from the memory that holds it, when no other memory offered does."""
    tanaka, sato, also, yui, misaki, hike = _companion_weeks(
        real_mem,
        clock,
        [
            ("田中さんはトヨタで働いてるんだって", "大企業だね"),
            ("佐藤さんがトヨタ辞めたらしい", "え、そうなんだ"),
            ("佐藤さんもトヨタで働いてる", "同じ会社なんだ"),
            ("結衣ちゃんはピアノ習ってるよ", "素敵！"),
            ("美咲ちゃんがピアノやめたって", "もったいないね"),
            ("週末は高尾山に登ってきた", "紅葉きれいだった？"),
        ],
    )
    judged = _judged(real_mem, "田中さんはトヨタで働いてるよ。", [tanaka, sato])
    assert set(judged) == {tanaka}
    assert set(_judged(real_mem, "田中さんはトヨタで働いてるよ。", [tanaka, also])) == {tanaka}
    assert set(_judged(real_mem, "うん、結衣ちゃんはピアノ続けてるよ！", [yui, misaki])) == {yui}
    # (offered alone, the memory that holds two of the answer's three words is credited)
    assert set(_judged(real_mem, "佐藤さん、トヨタ辞めたんだね", [sato])) == {sato}
    judged = _judged(real_mem, "高尾山！", [hike, yui])
    assert judged == {hike: "1/1 of the answer's words from it"}
    assert set(_judged(real_mem, "トヨタかあ、いいね", [sato, hike])) == {sato}
    # (no word; one word that two memories offered say; one of two words)
    for answer in ["そうだね！", "トヨタかあ、いいね", "高尾山とトヨタ"]:
        assert _judged(real_mem, answer, [tanaka, sato, hike]) == {}, answer


def test_a_memory_only_similar_to_the_answer_gives_way_to_the_one_it_draws_on(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「辛いの無理って言ってたよね」 credited 辛いのは大丈夫 (cosine 0.66) as well as 辛いの無理
    (0.80): the memory the answer draws on holds every term of the answer that the other
    does, and is clearly closer, so the other is only the topic's other side. A memory that
    holds a word of the answer of its own (東京マラソン) is still credited by its similarity."""
    fine, cannot, marathon, knee = _companion_weeks(
        real_mem,
        clock,
        [
            ("辛いのは大丈夫", "頼もしい！"),
            ("辛いの無理", "了解、辛いのは避けようね"),
            ("来月東京マラソンに出る", "頑張って"),
            ("長く走ると膝が痛い", "無理しないでね"),
        ],
    )
    answer = "辛いの無理って言ってたよね、マイルドなのにしよう"
    both = [fine, cannot]
    assert set(_judged(real_mem, answer, both, _cosines(real_mem, answer, both))) == {cannot}
    # (the cosines given: one as close as the other, by less than 0.1, is credited too)
    assert set(_judged(real_mem, answer, both, {fine: 0.66, cannot: 0.8})) == {cannot}
    assert set(_judged(real_mem, answer, both, {fine: 0.66, cannot: 0.72})) == set(both)
    assert set(_judged(real_mem, answer, both, {fine: 0.66})) == set(both)
    answer = "東京マラソン前だし、膝が痛いなら長く走るのは控えめにね"
    pair = [marathon, knee]
    judged = _judged(real_mem, answer, pair, _cosines(real_mem, answer, pair))
    assert set(judged) == {marathon, knee}
    assert judged[marathon].startswith("similar to the answer")


def test_a_memory_the_answer_states_another_value_than_gives_way(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Your yoga class is on Tuesday evenings." credited "My yoga class is on Monday
    evenings" by "yoga", "class", "evenings" (3/6), so each correct answer strengthened the
    corrected Monday. A memory whose weekday, time, month or amount the answer does not name,
    while it names another that a memory credited beside it holds, is not what it used;
    one naming both values, one naming a value no other memory holds, and a memory with no
    such value are credited as before."""
    monday, tuesday, loves, old_rent, new_rent, dentist, walk = _companion_weeks(
        real_mem,
        clock,
        [
            ("My yoga class is on Monday evenings", "Good routine"),
            ("no wait, it's Tuesday, not Monday. Yoga is on Tuesday evenings", "Got it"),
            ("I love my yoga class", "Great!"),
            ("My rent is $1,800 a month", "That's a lot"),
            ("My rent went up to $1,950 a month", "Oof"),
            ("Dentist appointment on Monday", "Good luck"),
            ("Took a long walk by the river", "Lovely"),
        ],
    )
    yoga = [monday, tuesday]
    answer = "Your yoga class is on Tuesday evenings."
    assert _judged(real_mem, answer, yoga) == {tuesday: "3/6 key terms in the answer"}
    # (credited by its similarity, the Monday gives way as well)
    assert set(_judged(real_mem, answer, yoga, {monday: 0.8, tuesday: 0.7})) == {tuesday}
    assert set(_judged(real_mem, answer, [monday, tuesday, loves])) == {tuesday, loves}
    rent = [old_rent, new_rent]
    assert set(_judged(real_mem, "Your rent is $1,950 a month now.", rent)) == {new_rent}
    # (must not: an answer naming both values; a value that no memory credited holds; a
    # memory with no such value, "I love my yoga class", above)
    moved = "Your yoga class moved from Monday to Tuesday evenings."
    assert set(_judged(real_mem, moved, yoga)) == set(yoga)
    assert set(_judged(real_mem, "Your rent went from $1,800 to $1,950 a month.", rent)) == set(
        rent
    )
    friday = "Your yoga class is on Friday evenings."
    assert set(_judged(real_mem, friday, [monday, loves])) == {monday, loves}
    see_you = "Good luck with the dentist appointment. See you Tuesday!"
    assert set(_judged(real_mem, see_you, [dentist, walk], {walk: 0.7})) == {dentist, walk}
    # (nor one that a memory of another subject holds: the yoga's Tuesday)
    assert dentist in _judged(real_mem, see_you, [dentist, tuesday])


def test_a_japanese_memory_the_answer_states_another_value_than_gives_way(
    real_mem: Memory, clock: FixedClock
) -> None:
    """月曜 and 火曜, 3時 and 4時 are values of a closed kind as Monday and Tuesday are: the
    appointment moved to 火曜の4時 is what 「歯医者は火曜の4時だね」 used, not the first one;
    「月曜の3時から火曜の4時になったんだね」 names both."""
    first, moved, lunch = _companion_weeks(
        real_mem,
        clock,
        [
            ("歯医者の予約は月曜の3時", "了解"),
            ("歯医者、火曜の4時に変更になった", "わかった"),
            ("ランチはパスタにした", "いいね"),
        ],
    )
    pair = [first, moved]
    close = {first: 0.7, moved: 0.72}
    assert set(_judged(real_mem, "歯医者は火曜の4時だね", pair, close)) == {moved}
    assert set(_judged(real_mem, "歯医者は4時からだね", pair, close)) == {moved}
    both = "月曜の3時から火曜の4時になったんだね"
    assert set(_judged(real_mem, both, pair, close)) == set(pair)
    # (must not: a memory with no such value beside it keeps its credit)
    assert set(_judged(real_mem, "火曜の4時ね", [first, lunch], {first: 0.7, lunch: 0.7})) == {
        first,
        lunch,
    }


def test_a_number_with_nothing_to_tell_what_it_counts_takes_no_credit_back(
    real_mem: Memory, clock: FixedClock
) -> None:
    """An age, a year or a count in the answer is no value an amount or a date gives way
    to: "Emma is turning 7" said beside her $300 venue, "engaged in 2025" beside the June 6
    wedding, 7歳 beside 3万円 (each of these lost its credit when every bare number was one
    kind). A value sets aside only one of its kind: "$1,950" takes back "$1,800", not
    "1,800円"."""
    venue, age, wedding, engaged, yen, seven, usd = _companion_weeks(
        real_mem,
        clock,
        [
            ("Emma's birthday party venue costs $300", "Nice"),
            ("Emma's birthday is coming, she is turning 7", "Aww"),
            ("My sister's wedding is on Saturday, June 6 in Kyoto", "Lovely"),
            ("My sister got engaged in 2025", "Congrats"),
            ("娘の誕生日パーティーの会場代は3万円", "いいね"),
            ("娘の誕生日で7歳になる", "おめでとう"),
            ("The party venue deposit is $30,000", "Wow"),
        ],
    )
    for answer, ids in [
        ("Emma is turning 7 - her birthday party venue sounds great!", [venue, age]),
        (
            "Your sister's wedding in Kyoto is coming up, and she got engaged in 2025!",
            [wedding, engaged],
        ),
        ("娘さん7歳の誕生日パーティー、会場も素敵だね！", [yen, seven]),
    ]:
        close = {i: 0.7 for i in ids}
        assert set(_judged(real_mem, answer, ids, close)) == set(ids), answer
    # (30,000 dollars is not 3万円: another currency sets nothing aside)
    pair = {yen: 0.7, usd: 0.7}
    assert set(_judged(real_mem, "会場代は$30,000だね", [yen, usd], pair)) == {yen, usd}


def test_a_written_meridiem_a_date_and_a_compound_amount_are_values_of_their_own(
    real_mem: Memory, clock: FixedClock
) -> None:
    """7am is not 7pm (a bare 7時 may be either), a date's day is a day of the month ("June
    19" sets aside "the 12th"), and 3万5000円 is 35,000円: the answer judge takes back the
    superseded memory, and keeps both when the answer states the same value."""
    am, pm, dentist, moved, rent, rent_again = _companion_weeks(
        real_mem,
        clock,
        [
            ("My flight is at 7am", "Ok"),
            ("My flight got moved to 7pm", "Got it"),
            ("Dentist appointment on the 12th", "Noted"),
            ("Dentist moved my appointment to June 19", "Noted"),
            ("家賃は3万5000円", "了解"),
            ("家賃は35,000円だよ", "わかった"),
        ],
    )
    close = {am: 0.7, pm: 0.7}
    assert set(_judged(real_mem, "Your flight is at 7pm.", [am, pm], close)) == {pm}
    close = {dentist: 0.7, moved: 0.7}
    assert set(_judged(real_mem, "Your dentist is on June 19.", [dentist, moved], close)) == {moved}
    close = {rent: 0.7, rent_again: 0.7}
    assert set(_judged(real_mem, "家賃は35,000円だね", [rent, rent_again], close)) == {
        rent,
        rent_again,
    }


def test_an_answer_of_two_items_takes_nothing_back_from_the_other(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "The gym day pass is $15 now, and your membership still covers classes." names the
    membership in a clause of its own: the $15 of the day pass does not take back its $50,
    though both memories say "gym"; an answer of one clause still does."""
    membership, day_pass = _companion_weeks(
        real_mem,
        clock,
        [
            ("My gym membership is $50 a month and covers classes", "Nice"),
            ("The gym raised its day pass to $15", "Hm"),
        ],
    )
    pair, close = [membership, day_pass], {membership: 0.7, day_pass: 0.7}
    two = "The gym day pass is $15 now, and your membership still covers classes."
    assert set(_judged(real_mem, two, pair, close)) == {membership, day_pass}
    assert set(_judged(real_mem, "Your gym membership is $15 a month now.", pair, close)) == {
        day_pass
    }


def test_one_item_told_over_two_clauses_is_still_taken_back(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Your membership is $60 now, but it still covers classes." names the membership in
    the clause of its value: the stale $50 membership is set aside though its other words
    ("covers classes") are in a clause with no value (the gym day pass, another item, is
    told apart: :func:`test_an_answer_of_two_items_takes_nothing_back_from_the_other`)."""
    old, new = _companion_weeks(
        real_mem,
        clock,
        [
            ("My gym membership is $50 a month and covers classes", "Nice"),
            ("My gym membership went up to $60", "Oh no"),
        ],
    )
    pair, close = [old, new], {old: 0.7, new: 0.7}
    for answer in [
        "Your membership is $60 now, but it still covers classes.",
        "Your membership is $60 now and it covers classes.",
        "Your membership is $60 now; it still covers classes.",
        "Your membership fee is $60 now, but it still covers classes.",
        "Your membership costs $60 now, but it still covers classes.",
        "It's $60 now for your membership, and it still covers classes.",
    ]:
        assert set(_judged(real_mem, answer, pair, close)) == {new}, answer


def test_a_value_about_another_item_keeps_both_in_either_language(
    real_mem: Memory, clock: FixedClock
) -> None:
    """The clause stating the new value names a word of its holder the older memory lacks
    ("day", "pass"; 日券): it is about another item, and the untouched membership keeps its
    credit; a clause naming only what both share (会費) takes the old value back."""
    fee, day_pass, fee_ja, pass_ja, raised_ja = _companion_weeks(
        real_mem,
        clock,
        [
            ("My gym membership is $50 a month and covers classes", "Nice"),
            ("The gym raised its day pass to $15", "Hm"),
            ("ジムの会費は月5000円でレッスン込み", "いいね"),
            ("ジムの1日券が1500円に値上がりした", "えー"),
            ("ジムの会費が6000円に上がった", "えー"),
        ],
    )
    pair, close = [fee, day_pass], {fee: 0.7, day_pass: 0.7}
    for answer in [
        "Day passes at the gym are $15 now, and your membership still covers classes.",
        "A day pass is $15 now, and your gym membership still covers classes.",
    ]:
        assert set(_judged(real_mem, answer, pair, close)) == {fee, day_pass}, answer
    pair, close = [fee_ja, pass_ja], {fee_ja: 0.7, pass_ja: 0.7}
    for answer in [
        "ジムの1日券は1500円になったけど、会費のほうはレッスン込みのままだよ。",
        "1日券は1500円、会費はレッスン込みのままだね。",
    ]:
        assert set(_judged(real_mem, answer, pair, close)) == {fee_ja, pass_ja}, answer
    pair, close = [fee_ja, raised_ja], {fee_ja: 0.7, raised_ja: 0.7}
    answer = "会費は今6000円だけど、レッスンは込みのままだよ。"
    assert set(_judged(real_mem, answer, pair, close)) == {raised_ja}


def test_an_answer_repeating_the_change_word_still_takes_the_old_value_back(
    real_mem: Memory, clock: FixedClock
) -> None:
    """The words that say a value changed ("went up", 上がった, "moved", "raised … to",
    "switched") name no item: an answer repeating them sets the older value aside, while
    "day pass", the object of "raised its day pass to $15", still names another item."""
    cases = [
        ("My gym membership is $50 a month and covers classes", "My gym membership went up to $60"),
        ("ジムの会費は月5000円でレッスン込み", "ジムの会費が6000円に上がった"),
        ("Dentist appointment on Monday at 3pm", "The dentist moved my appointment to Tuesday"),
        ("Rent is $1,800 a month", "Landlord raised the rent to $1,950"),
        ("Yoga class is on Monday evenings", "Yoga got switched to Tuesday evenings"),
        (
            "My gym membership is $50 a month and covers classes",
            "The gym raised its day pass to $15",
        ),
    ]
    ids = _companion_weeks(real_mem, clock, [(u, "I see") for pair in cases for u in pair])
    answers = [
        ["Your membership went up to $60.", "Your gym membership went up to $60 a month."],
        ["会費が6000円に上がったんだね。", "ジムの会費が6000円に上がったね！"],
        ["Your appointment moved to Tuesday!", "Your dentist moved your appointment to Tuesday."],
        ["Your landlord raised the rent to $1,950."],
        ["Yoga got switched to Tuesday evenings!"],
    ]
    for n, said in enumerate(answers):
        old, new = ids[2 * n], ids[2 * n + 1]
        for answer in said:
            assert set(_judged(real_mem, answer, [old, new], {old: 0.7, new: 0.7})) == {new}, answer
    fee, day_pass = ids[-2:]  # (not taken back: the day pass is another item)
    for answer in [
        "The day pass went up to $15, but your membership is unchanged.",
        "The gym raised the day pass to $15, and your membership still covers classes.",
    ]:
        judged = _judged(real_mem, answer, [fee, day_pass], {fee: 0.7, day_pass: 0.7})
        assert set(judged) == {fee, day_pass}, answer


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("会費が6000円に上がった", ["会費"], ["6000円", "上が"]),
        ("電気代また上がった", ["電気代"], ["また", "上が"]),
        ("給料が出たから気分上がった", ["給料", "出たから", "気分"], ["上が"]),
        ("会費も払ったし気分上がった", ["会費も払ったし", "気分"], ["上が"]),
    ],
)
def test_the_words_of_a_value_changed_leave_the_items_words(
    text: str, kept: list[str], gone: list[str]
) -> None:
    """A cost's value and its verb name no item (6000円に上がった of 会費, 上がった), while a
    clause between a cost and another verb is no change of it: 気分 of
    給料が出たから気分上がった stays."""
    left = _without_change_words(text)
    assert all(word in left for word in kept), left
    assert not any(word in left for word in gone), left


def test_a_long_run_of_numerals_in_an_answer_is_no_value(
    real_mem: Memory, clock: FixedClock
) -> None:
    """A paste of thousands of kanji numerals is no number (it raised a ValueError through
    feedback, and took seconds to read): the answer is judged as any other, at once."""
    real_mem.add_exchange("家賃は3万5000円", "了解")
    clock.advance(days=1)
    for answer in ["家賃は" + "一" * 4400 + "円だね", "家賃は" + "一" * 8000]:
        r = real_mem.retrieve("家賃いくらだっけ？")
        start = time.perf_counter()
        real_mem.feedback(r.turn_id, answer=answer, judge="match")
        assert time.perf_counter() - start < 2.0
        clock.advance(hours=1)


def test_a_long_answer_is_judged_by_its_beginning_and_its_end(
    real_mem: Memory, clock: FixedClock
) -> None:
    """An answer was read whole: a megabyte of one word took the match seconds (a pattern as
    long as the word), ten megabytes 44 s. It is taken at any length and judged by its
    first and last 10,000 characters or so: the memory a long reply names at its end is
    credited, one it names only in its middle is not, nor is any by filler or one long
    word, and each is judged at once."""
    cat = real_mem.add_exchange("My cat Kinako likes the window seat", "cute!")
    real_mem.add_exchange("I booked the dentist for Tuesday", "Good luck!")
    clock.advance(days=1)
    filler = "The build finished and every test passed again. " * 24_000  # (1.2 MB)
    named = "So, as you said, Kinako likes the window seat."
    half = len(filler) // 2
    for answer, used in [
        (filler + named, (cat,)),
        (filler[:half] + named + " " + filler[half:], ()),
        (filler, ()),
        ("x" * 10_000_000, ()),
    ]:
        r = real_mem.retrieve("Where does my cat like to sleep?")
        started = time.perf_counter()
        result = real_mem.feedback(r.turn_id, answer=answer, judge="match")
        assert time.perf_counter() - started < 3.0, answer[-40:]
        assert result.used == used, answer[-40:]
        clock.advance(hours=1)


def test_an_english_word_counts_in_another_form(real_mem: Memory, clock: FixedClock) -> None:
    """ "Remember your peanut allergy!" holds "allergic to peanuts" in other forms; one word
    of the memory in another form is still one ("Remember your allergy!"), and a longer
    word is not another form of a shorter one ("classic", "county", "hated")."""
    peanuts, yoga, votes = _companion_weeks(
        real_mem,
        clock,
        [
            ("I'm allergic to peanuts", "Good to know, I'll remember."),
            ("Yoga class on Monday", "Enjoy!"),
            ("Every vote counts", "True!"),
        ],
    )
    everyone = [peanuts, yoga, votes]
    judged = _judged(real_mem, "Remember your peanut allergy!", everyone)
    assert judged == {peanuts: "2/3 key terms in the answer"}
    assert set(_judged(real_mem, "Count on it.", everyone)) == {votes}  # (its one word)
    for answer in [
        "Remember your allergy! Maybe a shortbread instead?",
        "A classic Monday, then.",
        "Which county?",
    ]:
        assert _judged(real_mem, answer, everyone) == {}, answer


@pytest.mark.parametrize(
    ("one", "other", "forms"),
    [
        ("peanut", "peanuts", True),
        ("allergy", "allergic", True),
        ("arrive", "arriving", True),
        ("parties", "party", True),
        ("terrified", "terrifying", True),
        ("train", "training", True),
        ("economic", "economy", True),
        ("terrific", "terrified", False),
        ("specific", "specify", False),
        ("classic", "classy", False),
        ("final", "finale", False),
        ("moral", "morale", False),
        ("simon", "simone", False),
        ("justin", "justine", False),
        ("class", "classic", False),
        ("count", "county", False),
        ("hated", "hates", False),
        ("custom", "customer", False),
        ("1490", "14900", False),
    ],
)
def test_the_forms_of_an_english_word(one: str, other: str, forms: bool) -> None:
    assert (not stems(one).isdisjoint(stems(other))) is forms


def test_a_name_or_a_word_that_only_looks_like_another_form_is_no_form_of_it(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Terrific!" was credited for "I was terrified at the dentist" (both "terrify"), and
    "Simone!" for "Simon is coming" (Simon with an "e"): a word's forms are its inflections
    (and the "y" of "allergic"), and a name written with a capital has none but its plural
    ("France" is not "Frances"). "Terrifying" is a form of "terrified"."""
    dentist, simon, france, promo = _companion_weeks(
        real_mem,
        clock,
        [
            ("I was terrified at the dentist yesterday", "Oh no, that sounds awful."),
            ("Simon is coming to visit next week", "Nice!"),
            ("I went to France with my sister", "Lovely!"),
            ("I got the promotion at work!", "Congratulations!"),
        ],
    )
    for answer, ids in [
        ("Terrific!", [dentist, promo]),
        ("That's terrific!", [dentist, promo]),
        ("Simone!", [simon, promo]),
        ("Say hi to Simone!", [simon, promo]),
        ("Say hi to Frances!", [france, promo]),
    ]:
        assert _judged(real_mem, answer, ids) == {}, answer
    assert set(_judged(real_mem, "Terrifying!", [dentist, promo])) == {dentist}
    assert set(_judged(real_mem, "Simon!", [simon, promo])) == {simon}


def test_a_list_answer_credits_each_memory_it_names(real_mem: Memory, clock: FixedClock) -> None:
    """An answer drawn from several memories gave none of them a large share of its terms,
    so none was credited (and a sleep later archived them all). Each one whose own name or
    title is in the answer is, on either side of the exchange (the partner recommended the
    book; Noah is the partner's word); one offered but not drawn on (the trip) is not."""
    liam, emma, noah, trip, hail, remains, educated = _companion_weeks(
        real_mem,
        clock,
        [
            ("Liam started swimming lessons, the kids love the pool", "Busy kids!"),
            ("My daughter Emma lost her first tooth, the kids were thrilled", "Aww, a big moment!"),
            ("Our youngest kid turned two yesterday", "Happy birthday Noah!"),
            ("Back from a family trip to Barcelona", "Did the kids enjoy it?"),
            ("What should I read next?", "Try 'Project Hail Mary' by Andy Weir."),
            ("Any other book ideas?", "'The Remains of the Day' by Kazuo Ishiguro is a gem."),
            ("I need a good audiobook for the commute", "I suggested 'Educated' by Tara Westover."),
        ],
    )
    kids = {liam, emma, noah}
    r = real_mem.retrieve("What are my kids' names?")
    assert kids | {trip} <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="Your kids are Emma, Liam and Noah.")
    assert set(fb.used) == kids
    assert fb.reasons[liam] == "its own 'liam' in the answer"
    # the answer's first word is a name where the memory writes it as one ("My daughter
    # Emma"); a Latin name beside kana is one wherever it stands (Liam begins its memory)
    for answer in ["Emma, Liam and Noah.", "EmmaとLiamとNoahだよ"]:
        assert set(_judged(real_mem, answer, [liam, emma, noah, trip])) == kids, answer
    r = real_mem.retrieve("Which books did you suggest I read?")
    books = {hail, remains, educated}
    assert books <= _offered(r)
    answer = "I recommended Project Hail Mary, The Remains of the Day and Educated."
    fb = real_mem.feedback(r.turn_id, answer=answer)
    assert set(fb.used) == books
    assert all(fb.reasons[i].startswith("its own '") for i in books)
    # offered all at once, each is found by its own title, however many the answer names
    assert set(_judged(real_mem, answer, [hail, remains, educated, trip])) == {
        hail,
        remains,
        educated,
    }


def test_one_memory_named_alone_is_judged_by_the_older_rules(
    real_mem: Memory, clock: FixedClock
) -> None:
    """A memory's own name or number credits it only in an answer that carries two
    memories' own content (a list): a refusal or an echo that repeats the question's one
    name ("Barcelona", "Sarah", "Monday", a guessed "200 meters") is no use of a memory,
    whether it was offered alone or with others."""
    trip, monday, sarah, ran, liam = _companion_weeks(
        real_mem,
        clock,
        [
            ("Back from a family trip to Barcelona", "Did the kids enjoy it?"),
            ("Monday meetings are the worst", "Ugh, sorry."),
            ("My sister Sarah is visiting next month", "How fun!"),
            ("I ran 200 meters today without stopping", "Nice progress!"),
            ("She's 6. And Liam started swimming lessons", "Busy kids!"),
        ],
    )
    echoes = [
        (
            "Do you remember my trip to Barcelona?",
            "Sorry, I don't remember anything about Barcelona.",
        ),
        ("Ugh, Monday meetings tomorrow", "Hang in there! Have a great Monday."),
        ("Is my sister Sarah coming?", "I'm not sure, maybe ask Sarah directly?"),
        ("How far did I run?", "I don't have that info, sorry. Maybe 200 meters? Just guessing."),
    ]
    for asked, answer in echoes:
        r = real_mem.retrieve(asked)
        assert _offered(r)
        assert real_mem.feedback(r.turn_id, answer=answer).used == (), answer
        assert _judged(real_mem, answer, [trip, monday, sarah, ran, liam]) == {}, answer
    assert _judged(real_mem, "Liamくんは水泳を始めたんだよね", [trip, liam]) == {}
    # two memories' own content: a list, each credited
    answer = "Sarah visits next month, and Liam has his swimming lessons."
    assert set(_judged(real_mem, answer, [trip, monday, sarah, ran, liam])) == {sarah, liam}


def test_a_name_after_a_title_is_a_name(real_mem: Memory, clock: FixedClock) -> None:
    """The "Lee" of "Dr. Lee" is a name (a title's period ends no sentence), so a list
    answer credits the memory whose reply named the doctor; the "Great" that begins a
    sentence is none."""
    doctor, emma = _companion_weeks(
        real_mem,
        clock,
        [
            ("Who should I see about my knee?", "Dr. Lee is the best in town. Great reviews."),
            ("My daughter Emma lost her first tooth", "Aww, a big moment!"),
        ],
    )
    both = [doctor, emma]
    assert set(_judged(real_mem, "Dr. Lee, and Emma's tooth.", both)) == {doctor, emma}
    assert doctor not in _judged(real_mem, "Great. Emma's first tooth!", both)


def test_a_japanese_list_answer_credits_each_memory_it_names(
    real_mem: Memory, clock: FixedClock
) -> None:
    """『コンビニ人間』と『嫌われる勇気』: two titles from the partner's side, two memories;
    places told by the user, each with two words of its own (週末に京都, 出張で札幌). A
    word is counted once, not as its characters and bigram: 仕事 alone (仕, 事, 仕事) or
    今日 alone credits nothing, in a list either."""
    ids = _companion_weeks(
        real_mem,
        clock,
        [
            ("他におすすめの本ある？", "『コンビニ人間』も短くて読みやすいよ"),
            ("通勤中に聴けるオーディオブックない？", "『嫌われる勇気』がおすすめだよ"),
            ("週末に京都行ってきたよ、お寺がきれいだった", "いいなあ！"),
            ("出張で札幌に行ってた、寒かった", "まだ雪？"),
            ("連休は箱根で温泉", "最高だね"),
            ("今日は仕事で疲れた", "ゆっくり休んでね"),
        ],
    )
    books, places = set(ids[:2]), set(ids[2:5])
    r = real_mem.retrieve("おすすめしてくれた本って何だっけ？")
    assert books <= _offered(r)
    answer = "『コンビニ人間』と『嫌われる勇気』をおすすめしたよ"
    fb = real_mem.feedback(r.turn_id, answer=answer)
    assert set(fb.used) == books
    assert set(_judged(real_mem, answer, ids)) == books
    r = real_mem.retrieve("最近どこに旅行したっけ？全部教えて")
    assert places <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="週末に京都、出張で札幌、連休は箱根の温泉だったね")
    assert set(fb.used) == places
    assert "2 of its own words in the answer" in fb.reasons[ids[3]]
    for answer in [
        "週末に京都、出張で札幌だったね。仕事の話？",
        "週末に京都、出張で札幌。今日は雨だね",
    ]:
        judged = _judged(real_mem, answer, ids)
        assert set(judged) == set(ids[2:4]), answer  # (not the work's 仕事, 今日)


def test_a_japanese_list_answer_credits_the_names_it_carries(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「お子さんは翔太くんと結衣ちゃんだね」 credited the son only (his name made most of the
    answer's terms): Japanese writes no capitals, so 結衣 was no name. A name is one an
    honorific marks, on either side (the partner's 「翔太くん、おめでとう！」; 翔太君, one kanji:
    蓮くん). A plain word is one of two words of a memory's own, as "Kyoto" would not be
    without its capital: 京都 alone, ピアノ alone, credit nothing."""
    son, daughter, kyoto, sapporo, youngest = _companion_weeks(
        real_mem,
        clock,
        [
            ("息子が7歳になった", "翔太くん、おめでとう！"),
            ("娘の結衣はピアノを習ってる", "素敵！"),
            ("週末に京都行ってきたよ", "いいなあ！"),
            ("出張で札幌に行ってた", "寒かった？"),
            ("末っ子の蓮はまだ2歳", "かわいい盛り！"),
        ],
    )
    # (the question names each child: 「子供たちの名前覚えてる？」 found the daughter by the
    # てる of 習ってる alone, which the full-text search no longer searches)
    r = real_mem.retrieve("息子と娘と末っ子の名前、覚えてる？")
    assert {son, daughter, youngest} <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="お子さんは翔太くんと結衣ちゃんだね")
    assert set(fb.used) == {son, daughter}  # (not the youngest, offered too)
    assert fb.reasons[son] == "its own '翔太' in the answer"
    assert fb.reasons[daughter] == "its own '結衣' in the answer"
    everyone = [son, daughter, kyoto, sapporo, youngest]
    kids = {son, daughter, youngest}
    assert set(_judged(real_mem, "翔太君と結衣ちゃんと蓮くんだよ", everyone)) == kids
    for answer in [
        "京都のお寺と札幌の雪、どっちも素敵な旅だったね",
        "ピアノの発表会と京都のお寺、楽しみが多いね",
    ]:
        assert _judged(real_mem, answer, everyone) == {}, answer
    # (two words of each memory's own: a list; not the daughter's, whose partner said 素敵)
    judged = _judged(real_mem, "週末の京都と出張の札幌、どっちも素敵な旅だったね", everyone)
    assert set(judged) == {kyoto, sapporo}
    assert judged[kyoto] == "2 of its own words in the answer (京都, 週末)"


def test_a_japanese_answer_that_lists_nothing_of_its_own_credits_nothing(
    real_mem: Memory, clock: FixedClock
) -> None:
    """No Japanese list is read in a question back, an answer that does not know, one name
    echoed from the user's message, names that another memory offered holds too, an
    everyday word (今日, 仕事) or a katakana word cut short (the ピア of ピアニスト)."""
    son, daughter, tired, outing = _companion_weeks(
        real_mem,
        clock,
        [
            ("息子の翔太は7歳", "かわいい盛りだね"),
            ("娘の結衣はピアノを習ってる", "素敵！"),
            ("今日は仕事で疲れた", "ゆっくり休んでね"),
            ("翔太と結衣を連れて動物園に行った", "楽しそう！"),
        ],
    )
    kids = [son, daughter, tired]
    for answer in [
        "翔太くんと結衣ちゃんって誰だっけ？",
        "翔太くんと結衣ちゃんのことは覚えてないなあ",
        "ピアニストの翔太くん、すごいね",
    ]:
        assert _judged(real_mem, answer, kids) == {}, answer
    both = "翔太くんと結衣ちゃん、二人とも大きくなったね"
    assert set(_judged(real_mem, both, kids)) == {son, daughter}
    # (told 「結衣のピアノの発表会、来週なんだ」: one memory's content is no list)
    assert _judged(real_mem, "来週、結衣ちゃんのピアノの発表会なんだね！楽しみだね", kids) == {}
    # offered with the zoo's memory, which holds both names, they are neither child's own
    assert set(_judged(real_mem, both, [*kids, outing])) == {outing}
    for answer in [
        "翔太くんと結衣ちゃんだね。今日はゆっくりしてね",
        "翔太くんと結衣ちゃん、仕事の合間に会えるといいね",
    ]:
        assert set(_judged(real_mem, answer, kids)) == {son, daughter}, answer


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("店員さんに息子さんと間違えられた", []),
        ("大家さんと部長さんと看護師さん、歯医者さんとパン屋さん", []),
        ("皆さん、神様、大先輩、王様", []),
        ("お母さんとばあちゃんとあかちゃん", []),
        ("今日さんと友達さん", []),
        ("翔太くんと結衣ちゃんと田中さん", ["翔太", "結衣", "田中"]),
        ("翔太君と山田先輩と蓮くん", ["翔太", "山田", "蓮"]),
        ("今日翔太くんが来た", ["翔太"]),
        ("明日翔太くんと結衣ちゃんによろしくね", ["翔太", "結衣"]),
        ("明日香ちゃんと今日子さん", ["明日香", "今日子"]),
        ("はるとくんとさくらちゃんによろしくね", ["はると", "さくら"]),
        ("息子のはるとくん、娘のゆいちゃん", ["はると", "ゆい"]),
        ("もっとちゃんとしてね。いつもちゃんと寝てる", []),
        ("ちゃんこ鍋とくんせい", []),
        ("会いたいさくらちゃん", []),
        ("薬ちゃんと飲んでね。歯ちゃんと磨いてから寝てね", []),
        ("宿題ちゃんとやった？朝さんぽと人さまざま、鮭くんせい", []),
        ("結衣ちゃんと蓮くん、ゆいちゃんとさくらちゃん", ["結衣", "蓮", "ゆい", "さくら"]),
        ("はるとくんとゆいちゃんだよ。翔太くんって言ってたよね", ["翔太", "はると", "ゆい"]),
    ],
)
def test_the_names_a_japanese_honorific_marks(text: str, named: list[str]) -> None:
    """An honorific marks a name (翔太くん, 山田先輩, はるとくん), not a word for someone
    (店員さん, 息子さん, 部長さん, 皆さん, 神様, the 大 of 大先輩) nor one of everyday talk;
    a time word joined before a name is a word of its own (今日翔太くん), not before one
    kanji (明日香); a hiragana name begins a sentence or follows の, と or や (not after the
    kana of a verb: 会いたいさくらちゃん); ちゃんと is an adverb (もっとちゃんと, 薬ちゃんと)
    unless a name follows (結衣ちゃんと蓮くん), and kana that go on make no honorific (さんぽ,
    さまざま, くんせい) but an ending does (ゆいちゃんだよ, 翔太くんって)."""
    assert [w for w, is_name in japanese_words(fold(text)) if is_name] == named


def test_a_japanese_word_for_someone_credits_no_memory(real_mem: Memory, clock: FixedClock) -> None:
    """「店員さんに息子さんと間違えられたんだね！」 credited the son's match and the bakery's
    clerk: 店員さん and 息子さん were read as names, the question's words echoed. A word for
    someone with an honorific is no name (the English "the clerk thought you were my son"
    credits nothing either), nor are 皆さん, 神様 and the 大 of 大先輩; one name echoed with
    a plain word (田中さん, 京都) is no list."""
    ids = _companion_weeks(
        real_mem,
        clock,
        [
            ("息子のサッカーの試合、来週の土曜なんだ", "がんばってほしいね！"),
            ("駅前のパン屋の店員さん、すごく親切だった", "いいお店だね"),
            ("田中部長にまた怒られた", "大変だったね"),
            ("京都で抹茶パフェ食べた", "おいしそう"),
            ("大家さんから更新の連絡が来た", "もうそんな時期か"),
            ("神様にお願いしてきた", "叶うといいね"),
            ("大先輩に飲みに誘われた", "楽しんで！"),
            ("看護師さんが優しかった", "よかったね"),
        ],
    )
    asked = (
        "今日カフェで店員さんに「息子さんですか？」って聞かれたんだけど、そんなに老けて見えるかな？"
    )
    answer = "店員さんに息子さんと間違えられたんだね！ぜんぜん老けて見えないよ"
    r = real_mem.retrieve(asked)
    assert set(ids[:2]) <= _offered(r)
    assert real_mem.feedback(r.turn_id, answer=answer).used == ()
    for answer in [
        "店員さんに息子さんと間違えられたんだね！ぜんぜん老けて見えないよ",
        "そうそう、テレビの田中さんは京都出身なんだって",
        "大家さんと看護師さん、どっちもいい人だね",
        "神様と大先輩に感謝だね",
    ]:
        assert _judged(real_mem, answer, ids) == {}, answer
    english = _companion_weeks(
        real_mem,
        clock,
        [
            ("My son's soccer match is next Saturday", "Go team!"),
            ("The clerk at the bakery by the station was so kind", "Nice shop"),
        ],
    )
    answer = "The clerk thought you were my son! You don't look old at all"
    assert _judged(real_mem, answer, english) == {}


def test_a_single_japanese_word_credits_no_memory_as_an_english_one(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「今日は天気がいいし、映画もいいね」 credited 天気が悪くて… and 昨日一人で映画見た by their
    one word each: no short list of everyday words holds every common one. A plain word
    counts as an English one does: one of two words of a memory's own (天気 and 洗濯)."""
    weather, movie, train, cooking = _companion_weeks(
        real_mem,
        clock,
        [
            ("天気が悪くて洗濯できなかった", "残念"),
            ("昨日一人で映画見た", "いいね"),
            ("電車が遅れて遅刻した", "大変"),
            ("夕飯は料理する気力がなくてコンビニ", "そんな日もあるよ"),
        ],
    )
    everyone = [weather, movie, train, cooking]
    for answer in [
        "今日は天気がいいし、映画もいいね",
        "電車で行くなら、料理は帰ってからでいいね",
        "The weather is nice today, a movie sounds good too",
    ]:
        assert _judged(real_mem, answer, everyone) == {}, answer
    answer = "天気で洗濯できなかった日と、電車の遅刻の日、大変だったね"
    assert set(_judged(real_mem, answer, everyone)) == {weather, train}


def test_a_japanese_name_joined_to_a_time_word_is_a_name(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「明日翔太くんと結衣ちゃんによろしくね」 credited nothing: 明日翔太 is one run of kanji.
    A time word that begins a run is a word of its own, in the answer and in the memory
    (昨日翔太と公園に行った); a name that begins with one stays whole (明日香)."""
    son, daughter, tired = _companion_weeks(
        real_mem,
        clock,
        [
            ("息子の翔太は7歳", "かわいい盛りだね"),
            ("娘の結衣はピアノを習ってる", "素敵！"),
            ("今日は仕事で疲れた", "ゆっくり休んでね"),
        ],
    )
    kids = [son, daughter, tired]
    for answer in ["明日翔太くんと結衣ちゃんによろしくね", "今日翔太くんと結衣ちゃんが来たんだね"]:
        assert set(_judged(real_mem, answer, kids)) == {son, daughter}, answer
    park, asuka = _companion_weeks(
        real_mem,
        clock,
        [("昨日翔太と公園に行った", "いいね！"), ("明日香ちゃんが遊びに来た", "にぎやかだね")],
    )
    judged = _judged(real_mem, "翔太くんと明日香ちゃん、元気いっぱいだね", [park, asuka, tired])
    assert judged == {park: "its own '翔太' in the answer", asuka: "its own '明日香' in the answer"}
    # (one kanji is no name of the run it ends: 香ちゃん is not 明日香)
    assert _judged(real_mem, "翔太くんと香ちゃん、元気いっぱいだね", [park, asuka, tired]) == {}


def test_a_hiragana_name_credits_where_both_sides_mark_it(
    real_mem: Memory, clock: FixedClock
) -> None:
    """A name written in hiragana is one when an honorific marks it, on each side (the
    partner's 「はるとくん、かわいいね」, the user's さくらちゃん), and whole: はるくん is not
    はると; さくら no honorific marks (公園のさくら) or ゆい (娘のゆいは) is no name of the memory,
    though the answer writes it as one."""
    haruto, sakura, blossom, daughter = _companion_weeks(
        real_mem,
        clock,
        [
            ("息子のはるとは5歳", "はるとくん、かわいいね"),
            ("さくらちゃんがダンスを始めた", "すごいね！"),
            ("公園のさくらがきれいだった", "春だね"),
            ("娘のゆいは3歳", "かわいい盛りだね"),
        ],
    )
    judged = _judged(real_mem, "はるとくんとさくらちゃんによろしくね", [haruto, sakura, daughter])
    assert judged == {
        haruto: "its own 'はると' in the answer",
        sakura: "its own 'さくら' in the answer",
    }
    for answer in [
        "はるくんとゆいちゃんによろしくね",
        "ゆいちゃんとさくらちゃん、元気？ よろしくね",
    ]:
        assert "ゆい" in {w for w, named in japanese_words(fold(answer)) if named}, answer
        judged = _judged(real_mem, answer, [haruto, blossom, daughter])
        assert judged == {}, answer


def test_an_answer_that_lists_days_credits_the_memories_of_those_days(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "You went on Jun 1, 4 and 7." names each gym session by the date its pack showed
    (a list's bare days are its month's); a session of a day not named is not credited,
    nor is any by "today", by the question's own word or by one day named alone."""
    sessions = _companion_weeks(
        real_mem,
        clock,
        [
            ("Went to the gym after work, did legs", "Nice work!"),
            ("Gym again tonight, new PR on deadlift", "Congrats on the PR!"),
            ("Gym session done, arms are dead", "Well earned!"),
        ],
    )
    asked = "When did I go to the gym?"
    r = real_mem.retrieve(asked)
    assert _offered(r) == set(sessions)
    fb = real_mem.feedback(r.turn_id, answer="You went on Jun 1 and 4.")
    assert fb.used == tuple(sessions[:2])
    assert fb.reasons[sessions[0]] == "its day (2026-06-01) named in the answer"
    for answer in [
        "So many gym days!",
        "Nice work, well earned!",
        "Rest up today!",
        "You last went on Jun 7.",
    ]:
        r = real_mem.retrieve(asked)
        assert real_mem.feedback(r.turn_id, answer=answer).used == (), answer


def test_a_day_a_memory_is_credited_for_is_not_another_memorys(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "You had knee surgery on May 3." is the knee's memory (said a week later), not the
    pasta of May 3: one day named credits no memory by its date, and in a list of days a
    day that a memory credited by its content names is that memory's."""
    utc = timezone.utc
    clock.set(datetime(2026, 5, 20, 12, tzinfo=utc))
    pasta = real_mem.add_exchange(
        "Had pasta for dinner", "Yum!", occurred_at=datetime(2026, 5, 3, 19, tzinfo=utc)
    )
    rain = real_mem.add_exchange(
        "Rained all day, stayed in", "Cozy!", occurred_at=datetime(2026, 5, 6, 19, tzinfo=utc)
    )
    knee = real_mem.add_exchange(
        "I had knee surgery on May 3, resting now",
        "Hope you heal fast!",
        occurred_at=datetime(2026, 5, 10, 12, tzinfo=utc),
    )
    r = real_mem.retrieve("What happened on May 3?")
    assert {pasta, knee} <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="You had knee surgery on May 3.")
    assert fb.used == (knee,)
    r = real_mem.retrieve("What happened on May 3 and May 6?")
    assert {pasta, rain, knee} <= _offered(r)
    fb = real_mem.feedback(r.turn_id, answer="Knee surgery on May 3, and it rained on May 6.")
    assert set(fb.used) == {knee, rain}
    assert fb.reasons[rain] == "its day (2026-05-06) named in the answer"


def test_the_days_an_answer_lists_are_those_the_pack_showed_across_summer_time(
    db_path: Path, usem3: USEM3Embedder
) -> None:
    """A memory's day is read in the memory's time zone, as its pack dates it: the 23:30
    of Mar 7 in New York (before summer time began on Mar 8) is Mar 7, though the turn,
    asked in summer time, keeps the offset -4, which made it Mar 8."""
    ny = ZoneInfo("America/New_York")
    clock = FixedClock(datetime(2026, 3, 20, 12, tzinfo=ny))
    cfg = Config(time_zone="America/New_York")
    with Memory.open(db_path, embedder=usem3, clock=clock, config=cfg) as mem:
        legs = mem.add_exchange(
            "Went to the gym, did legs",
            "Nice work!",
            occurred_at=datetime(2026, 3, 5, 18, tzinfo=ny),
        )
        late = mem.add_exchange(
            "Gym again tonight, new PR on deadlift",
            "Congrats!",
            occurred_at=datetime(2026, 3, 7, 23, 30, tzinfo=ny),
        )
        mem.add_exchange(
            "Had pasta for dinner", "Yum!", occurred_at=datetime(2026, 3, 10, 18, tzinfo=ny)
        )
        r = mem.retrieve("When did I go to the gym?")
        assert {legs, late} <= _offered(r)
        assert "## 2026-03-07" in mem.pack(r).text
        assert set(mem.feedback(r.turn_id, answer="You went on Mar 5 and Mar 7.").used) == {
            legs,
            late,
        }
        r = mem.retrieve("When did I go to the gym?")
        assert mem.feedback(r.turn_id, answer="You went on Mar 5 and Mar 8.").used == (legs,)


def test_days_named_in_an_answer() -> None:
    asked = datetime(2026, 4, 8, 12, tzinfo=timezone.utc)
    answer = "You went to the gym 6 times: Mar 3, 8, 13, 20, 29 and Apr 5."
    assert named_days(answer, asked) == {date(2026, 3, d) for d in (3, 8, 13, 20, 29)} | {
        date(2026, 4, 5)
    }
    assert named_days("It was Mar 3, 2026.", asked) == {date(2026, 3, 3)}  # (a year, not a day)
    assert named_days("Rest up today, it was 5 days", asked) == set()
    assert named_days("You scored 3.5 on May 2", asked) == set()  # (May 2 is still to come)
    jst = datetime(2026, 4, 2, 12, tzinfo=timezone(timedelta(hours=9)))
    assert named_days("3月3日と9日に行ったね", jst) == {date(2026, 3, 3), date(2026, 3, 9)}
    ran = named_days("今月は5回だよ。1日、9日、14日！", jst)  # (days to come are last month's)
    assert ran == {date(2026, 4, 1), date(2026, 3, 9), date(2026, 3, 14)}
    assert named_days("3日間休んだ", jst) == set()


def test_an_answer_that_does_not_know_what_it_names_credits_nothing(
    real_mem: Memory, clock: FixedClock
) -> None:
    """A list read only in names credited every memory an answer disowned ("I don't
    remember Liam or Emma") or asked about ("How was Barcelona?"), and every day it said it
    did not know (3日と10日は何してたか覚えてないな)."""
    liam, emma, trip = _companion_weeks(
        real_mem,
        clock,
        [
            ("My son Liam loves dinosaurs", "So cute!"),
            ("My daughter Emma started piano lessons", "Lovely!"),
            ("We went to Barcelona last summer", "Fun!"),
        ],
    )
    offered = [liam, emma, trip]
    for answer in [
        "I don't remember Liam or Emma, sorry.",
        "Who are Liam and Emma? I don't think you've told me about Barcelona either.",
    ]:
        assert _judged(real_mem, answer, offered) == {}, answer
    assert set(_judged(real_mem, "Have fun! Say hi to Liam. How was Barcelona?", offered)) <= {liam}
    assert set(_judged(real_mem, "Say hi to Liam and Emma!", offered)) == {liam, emma}


def test_a_japanese_answer_round_one_word_or_a_word_inside_another_is_no_use(
    real_mem: Memory, clock: FixedClock
) -> None:
    """「薬ちゃんと飲んでね。歯ちゃんと磨いてから寝てね」 credited the medicine and the tooth
    (薬ちゃん, 歯ちゃん as names); 「そっか、雨なんだね。むりしないでね」 was "an answer of one
    word" (雨, the user's echo), and お子さん's 子 was the 子 of 息子. An answer of one word is
    that word and a particle or an ending (雨だよ); one kanji counts where the memory writes
    it alone; a word that begins with two kanji the memory says counts both ways (結婚式 of
    結婚する, 結婚 of 結婚式)."""
    pills, tooth, tired, rain, sleepy, son, daughter, wedding, speech = _companion_weeks(
        real_mem,
        clock,
        [
            ("朝の薬を飲み忘れた", "気をつけてね"),
            ("歯が痛くて眠れない", "歯医者行った方がいいよ"),
            ("仕事で疲れた", "おつかれ"),
            ("先週も雨で洗濯できなかった", "残念だったね"),
            ("最近ずっと眠い", "寝不足？"),
            ("息子のはるとくんが7歳になった", "はるとくん、おめでとう！"),
            ("娘のゆいちゃんがピアノ始めた", "ゆいちゃん、がんばれ！"),
            ("妹の美咲が来月結婚する", "おめでとう！"),
            ("友達の結婚式でスピーチする", "緊張するね"),
        ],
    )
    answer = "薬ちゃんと飲んでね。歯ちゃんと磨いてから寝てね"
    assert _judged(real_mem, answer, [pills, tooth, tired]) == {}
    for answer in [
        "そっか、雨なんだね。むりしないでね",
        "そっか、雨だったんだね。ゆっくりやすんでね",
    ]:
        assert _judged(real_mem, answer, [rain, sleepy]) == {}, answer
    assert _judged(real_mem, "雨だよ", [rain, sleepy]) == {
        rain: "1/1 of the answer's words from it"
    }
    kids = [son, daughter, tired]
    assert _judged(real_mem, "お子さんだね", kids) == {}  # (a word of one: not 息子's 子)
    judged = _judged(real_mem, "はるとくんとゆいちゃんだよ", kids)
    assert judged == {
        son: "its own 'はると' in the answer",
        daughter: "its own 'ゆい' in the answer",
    }
    assert set(_judged(real_mem, "美咲、結婚式いつ？", [wedding, tired])) == {wedding}
    assert set(_judged(real_mem, "スピーチ、友達の結婚だもんね", [speech, tired])) == {speech}
    # (one kanji of the two, or a word that begins elsewhere, is not the word)
    assert _judged(real_mem, "美咲、婚約いつ？", [wedding, tired]) == {}


def test_a_long_japanese_answer_and_memory_are_judged_in_their_length(
    real_mem: Memory, clock: FixedClock
) -> None:
    """An answer that writes one name thousands of times, judged against a memory that
    does, compared each place with each: 16 KB took 20 seconds, this 50 KB 7. Each word is
    compared once (a tenth of a second)."""
    pasted = "翔くん" * 2700  # (8,100 characters, 24 KB, on each side)
    long, piano = _companion_weeks(
        real_mem, clock, [(pasted, "うん"), ("結衣ちゃんはピアノ", "いいね")]
    )
    started = time.monotonic()
    judged = _judged(real_mem, pasted + "結衣ちゃん", [long, piano])
    assert time.monotonic() - started < 2.0
    assert judged == {long: "its own '翔' in the answer", piano: "its own '結衣' in the answer"}
