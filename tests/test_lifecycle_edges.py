"""The life cycle at its edges: forgetting an agent while indexes are open, turn ids that
are never given out twice, feedback that is checked and scoped, and sleeps whose clock
goes back, runs again at once, or counts nothing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import Config, FixedClock, InvalidInput, Memory, NewEpisode, NotFound
from memengine.config import LifecycleConfig

from .helpers import HashEmbedder

DAYS = Config(lifecycle=LifecycleConfig(decay_clock="days", expected_tasks_per_day=1))
"""The days clock at one task a day: a level-0 memory keeps ``daily_retention[0]`` a day."""


def test_indexes_open_before_forget_agent_see_the_writes_after_it(
    db_path: Path, clock: FixedClock
) -> None:
    with (
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as a,
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as b,
    ):
        a.add("carol likes green tea", kind="fact", agent="carol")
        for i in range(6):  # the newest entries of the vector log are alice's
            a.add(f"alice note {i} about trains", kind="fact", agent="alice")
        for m in (a, b):  # both hold carol's vectors, up to the newest log entry
            m.warm("carol")
            m.retrieve("tea", agent="carol", record=False)
        a.forget_agent("alice")
        puppy = a.add("carol adopted a puppy called pochi", kind="fact", agent="carol")
        for m in (a, b):
            found = m.retrieve("puppy pochi", agent="carol", record=False)
            assert puppy in [e.id for e in found.episodes]
            assert m.check().ok and not m.check().stale_vector_index


def test_a_turn_id_is_never_given_out_twice(mem: Memory) -> None:
    mem.add("alice has a cat named kinako", kind="fact", agent="alice")
    mem.add("bob plays the piano", kind="fact", agent="bob")
    first = mem.retrieve("cat kinako", agent="alice").turn_id
    bobs = mem.retrieve("piano", agent="bob").turn_id
    assert first is not None and bobs is not None and bobs > first
    mem.forget_agent("bob")
    later = mem.retrieve("cat kinako", agent="alice").turn_id
    assert later is not None and later > bobs
    with pytest.raises(NotFound, match=f"no turn with id {bobs}"):
        mem.feedback(bobs, answer="Kinako the cat")


def test_feedback_scoped_to_an_agent_refuses_another_agents_turn(mem: Memory) -> None:
    mem.add("alice has a cat named kinako", kind="fact", agent="alice")
    turn = mem.retrieve("cat kinako", agent="alice").turn_id
    assert turn is not None
    with pytest.raises(NotFound, match="of agent 'bob'"):
        mem.feedback(turn, [], agent="bob")
    assert mem.feedback(turn, [1], agent="alice").used == (1,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task_success": "no"}, "task_success is True, False or None"),
        ({"helpful": "no"}, "helpful is True or False"),
        ({"prevented_error": 1}, "prevented_error is True or False"),
        ({"answer": 123}, "answer is a string"),
        ({"perspective": 5}, "a perspective is a non-empty string, not 5"),  # as retrieve says
        ({"learning": ["x"]}, "learning is a string"),
        ({"judge": "bogus"}, "judge is 'auto', 'match' or 'llm'"),
    ],
)
def test_feedback_arguments_of_the_wrong_kind_change_nothing(
    mem: Memory, kwargs: dict[str, object], message: str
) -> None:
    mem.add("alice has a cat named kinako", kind="fact")
    turn = mem.retrieve("cat kinako").turn_id
    assert turn is not None
    with pytest.raises(InvalidInput, match=message):
        mem.feedback(turn, [1], **kwargs)  # type: ignore[arg-type]
    assert mem.get(1).access_count == 0 and mem.get(1).strength == 1.0
    assert mem.feedback(turn, [1]).used == (1,)  # the turn is still open


def test_a_memory_archived_after_its_turn_comes_back_when_used(mem: Memory) -> None:
    kept = mem.add("the spare key is under the blue pot", kind="fact")
    turn = mem.retrieve("where is the spare key").turn_id
    assert turn is not None
    mem.sleep(tasks=1000, train=False)
    assert mem.get(kept).status == "archived"
    result = mem.feedback(turn, [kept])
    back = mem.get(kept)
    assert back.status == "active" and back.access_count == 1
    assert back.strength == pytest.approx(mem.config.lifecycle.recall_strength + 0.1)
    assert "active again" in result.reasons[kept]
    assert kept in [e.id for e in mem.retrieve("where is the spare key").episodes]


def test_tags_match_an_answer_as_whole_words(mem: Memory) -> None:
    mem.add("we talked about painting lessons", kind="fact", tags=["art"])
    mem.add("the vet said the kitten is healthy", kind="fact", tags=["cat"])
    mem.add("猫の名前はこむぎ", kind="fact", tags=["こむぎ"])
    turn = mem.retrieve("what about the lessons, the kitten and こむぎ?", limit=3).turn_id
    assert turn is not None
    answer = "Sure, I will look up the location of that new café. うちのこむぎは元気です"
    result = mem.feedback(turn, answer=answer, judge="match")
    assert result.used == (3,) and result.reasons[3] == "tag 'こむぎ' in the answer"


def test_a_clock_set_back_does_not_count_the_same_days_twice(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = DAYS
    start = clock.now
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.add("the boiler was serviced in march", kind="fact")
        clock.set(start + timedelta(days=10))
        mem.sleep(train=False)
        clock.set(start + timedelta(days=5))  # the clock goes back
        back = mem.sleep(train=False)
        assert back.tasks == 0 and back.slept_at == start + timedelta(days=10)
        assert "before the last sleep" in back.notes[0]
        clock.set(start + timedelta(days=11))
        mem.sleep(train=False)
        level0 = mem.config.lifecycle.daily_retention[0]
        assert mem.get(1).strength == pytest.approx(level0**11)


def test_a_sleep_run_again_at_once_moves_no_level(mem: Memory) -> None:
    fact = mem.add("the gate code is 4412", kind="fact")
    for _ in range(16):
        turn = mem.retrieve("gate code").turn_id
        assert turn is not None
        mem.feedback(turn, [fact])
    levels = []
    for _ in range(4):
        mem.sleep(train=False)
        levels.append(mem.get(fact).consolidation_level)
    assert levels == [1, 1, 1, 1]


def _one_ahead_one_here(mem: Memory) -> tuple[int, int]:
    """A fact created in 2100 (from a clock ahead) and one written now: their ids."""
    future = datetime(2100, 1, 1, tzinfo=timezone.utc)
    [ahead] = mem.add_many(
        [
            NewEpisode(
                kind="fact",
                content="imported from a clock ahead",
                occurred_at=mem.clock(),
                created_at=future,
            )
        ]
    )
    return ahead, mem.add("written here today", kind="fact")


def test_a_creation_time_ahead_of_the_clock_still_decays(mem: Memory) -> None:
    ahead, plain = _one_ahead_one_here(mem)
    mem.sleep(train=False)  # the first sleep: the count starts
    for _ in range(50):
        mem.retrieve("something else entirely", record=True)
    mem.sleep(train=False)
    assert mem.get(plain).strength < 1.0
    assert mem.get(ahead).strength == pytest.approx(mem.get(plain).strength)


def test_a_tasks_clock_without_recorded_turns_says_it_counts_nothing(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(record_turns=False))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.add("the boiler was serviced in march", kind="fact")
        for _ in range(20):
            mem.retrieve("boiler")
        report = mem.sleep(train=False)
        assert report.tasks == 0 and "counts no new turn and nothing decays" in report.notes[0]


def test_turns_recorded_before_record_turns_was_switched_off_are_said_to_count(
    db_path: Path, clock: FixedClock
) -> None:
    """The note must not say nothing decays while the turns recorded before still count."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("the boiler was serviced in march", kind="fact")
        for _ in range(3):
            mem.retrieve("boiler")
    cfg = Config(lifecycle=LifecycleConfig(record_turns=False))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        report = mem.sleep(train=False)
        assert report.tasks == 3
        assert "only the 3 turns recorded before it was switched off" in report.notes[0]
        assert "nothing decays" not in report.notes[0]


def test_a_time_without_a_zone_is_read_in_the_configured_zone(db_path: Path) -> None:
    cfg = Config(time_zone="Europe/London")
    with Memory.open(db_path, embedder=HashEmbedder(), config=cfg) as mem:
        mem.add("tea at noon", kind="fact", occurred_at=datetime(2026, 7, 1, 12, 0))
        r = mem.retrieve("tea", now=datetime(2026, 7, 1, 12, 30), record=False)
        assert r.now.utcoffset() == timedelta(hours=1)
        assert mem.get(1).occurred_at.utcoffset() == timedelta(hours=1)


def test_with_the_days_clock_a_quick_second_sleep_moves_no_level(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(decay_clock="days"))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        fact = mem.add("the gate code is 4412", kind="fact")
        for _ in range(40):
            turn = mem.retrieve("gate code").turn_id
            assert turn is not None
            mem.feedback(turn, [fact])
        clock.advance(days=1)
        levels = []
        for _ in range(4):
            mem.sleep(train=False)
            levels.append(mem.get(fact).consolidation_level)
            clock.advance(seconds=1)
        assert levels == [1, 1, 1, 1]
        mem.sleep(tasks=0, train=False)  # the caller says a sleep passed: it consolidates
        assert mem.get(fact).consolidation_level == 2


@pytest.mark.parametrize(
    ("tag", "answer", "found"),
    [
        ("cat", "the location of the café", False),
        ("cat", "my cat, Kinako", True),
        ("c++", "I write C++ at work", True),
        ("แมว", "ฉันชอบแมวมาก", True),
        ("고양이", "고양이를 좋아해요", True),
        ("new york", "we flew to New York!", True),
        ("قهوة", "أحب القهوة", True),  # Arabic: words take an article in front
        ("קפה", "שתיתי הקפה", True),  # Hebrew too: found anywhere
        ("ቡና", "የምወደው ቡና።", True),  # Ethiopic: before its full stop
        ("ቡና", "ቡናው", False),
        ("कम", "कमल", False),  # Devanagari: a word's start
        ("कम", "कमी", False),  # … before a vowel sign (a mark, no word character to re)
        ("कम", "बहुत कम।", True),
        ("mè", "con mèo", False),  # Vietnamese
    ],
)
def test_a_tag_is_a_whole_word_only_in_spaced_scripts(tag: str, answer: str, found: bool) -> None:
    from memengine.lifecycle.answer_match import _norm, _tag_in

    assert _tag_in(_norm(tag), _norm(answer)) is found


def test_a_days_clock_sleep_after_an_import_decays_from_the_import(
    tmp_path: Path, clock: FixedClock
) -> None:
    """An exported memory carries the strength its decay has left it and when that held;
    the file it is imported into decays it from then on, not again from its creation."""
    cfg = DAYS
    start = clock.now
    level0 = cfg.lifecycle.daily_retention[0]
    dump = tmp_path / "dump.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock, config=cfg) as a:
        a.add("the boiler was serviced in march", kind="fact")
        clock.set(start + timedelta(days=10))
        a.sleep(train=False)
        assert a.get(1).strength == pytest.approx(level0**10)
        a.export(dump)
    clock.set(start + timedelta(days=12))
    with Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock, config=cfg) as b:
        b.add("a memory of the new file", kind="fact")
        (moved,) = b.import_(dump, keep_ids=False)
        assert b.get(moved).strength == pytest.approx(level0**10)
        clock.set(start + timedelta(days=13))
        b.sleep(train=False)
        # the days since its last sleep at home (day 10), as if it had stayed: not again
        # from its creation (which made it 23 days), nor only from its import
        assert b.get(moved).strength == pytest.approx(level0**13)
        clock.set(start + timedelta(days=14))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(level0**14)


def test_a_memory_exported_before_any_sleep_decays_as_if_it_had_stayed(
    tmp_path: Path, clock: FixedClock
) -> None:
    """The export says when each strength held (``decayed_at``): a memory whose file never
    slept decays, in the file it moves to, from its creation, as it would have at home."""
    cfg = DAYS
    start = clock.now
    level0 = cfg.lifecycle.daily_retention[0]
    dump = tmp_path / "dump.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock, config=cfg) as a:
        a.add("the boiler was serviced in march", kind="fact")
        clock.set(start + timedelta(days=30))
        a.export(dump)
    line = json.loads(dump.read_text().splitlines()[0])
    assert line["decayed_at"] == line["created_at"]  # it never slept there
    with Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock, config=cfg) as b:
        (moved,) = b.import_(dump, keep_ids=False)
        clock.set(start + timedelta(days=31))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(level0**31)
        b.export(tmp_path / "again.jsonl")  # and the next move carries the sleep's moment
    again = json.loads((tmp_path / "again.jsonl").read_text().splitlines()[0])
    assert again["decayed_at"].startswith((start + timedelta(days=31)).date().isoformat())


def test_an_older_export_without_decayed_at_decays_from_its_import(
    tmp_path: Path, clock: FixedClock
) -> None:
    cfg = DAYS
    start = clock.now
    level0 = cfg.lifecycle.daily_retention[0]
    line = {
        "kind": "fact",
        "content": "the boiler was serviced in march",
        "occurred_at": start.isoformat(),
        "created_at": start.isoformat(),
        "strength": 0.5,
    }
    dump = tmp_path / "old.jsonl"
    dump.write_text(json.dumps(line) + "\n")
    clock.set(start + timedelta(days=12))
    with Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock, config=cfg) as b:
        (moved,) = b.import_(dump)
        clock.set(start + timedelta(days=13))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(0.5 * level0)  # one day: since import


def test_an_import_into_a_file_that_slept_since_decays_from_its_own_moment(
    tmp_path: Path, clock: FixedClock
) -> None:
    """The file it moves to slept after the memory's strength held, but before it came: its
    first sleep there counts from the memory's own moment, the next ones from that sleep."""
    cfg = DAYS
    start = clock.now
    level0 = cfg.lifecycle.daily_retention[0]
    dump = tmp_path / "dump.jsonl"
    a = Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock, config=cfg)
    b = Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock, config=cfg)
    try:
        a.add("the boiler was serviced in march", kind="fact")
        b.add("a memory of the other file", kind="fact")
        clock.set(start + timedelta(days=20))
        b.sleep(train=False)
        clock.set(start + timedelta(days=21))
        a.export(dump)
        (moved,) = b.import_(dump, keep_ids=False)
        clock.set(start + timedelta(days=22))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(level0**22)
        clock.set(start + timedelta(days=23))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(level0**23)
        assert b.get(1).strength == pytest.approx(level0**23)  # the file's own, as before
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("hours", [1, 6, 24])
def test_with_the_days_clock_frequent_sleeps_consolidate_like_daily_ones(
    db_path: Path, clock: FixedClock, hours: int
) -> None:
    """Sleeps closer together than one task's worth of the calendar (2.4 h by default)
    each counted under one task, so a memory used every day never left level 0."""
    cfg = Config(lifecycle=LifecycleConfig(decay_clock="days"))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        fact = mem.add("the steel discount for acme is 4 %", kind="fact")
        for _ in range(12):
            turn = mem.retrieve("steel discount").turn_id
            assert turn is not None
            mem.feedback(turn, [fact])
            for _ in range(24 // hours):
                clock.advance(hours=hours)
                mem.sleep(train=False)
        got = mem.get(fact)
        assert got.access_count == 12 and got.consolidation_level == 1  # 5 uses earn level 1
        assert got.strength > 1.5


def test_the_tasks_clock_counts_turns_whose_caller_gave_an_earlier_now(mem: Memory) -> None:
    """A turn counts when it is recorded by the memory's clock: a caller's own message time
    an hour behind (a replay, a slow client clock) made every turn miss the memories."""
    fact = mem.add("the gate code is 4412", kind="fact")
    earlier = mem.clock.now - timedelta(hours=1)
    for _ in range(20):
        assert mem.retrieve("weather tomorrow", now=earlier).turn_id is not None
    report = mem.sleep(train=False)
    level0 = mem.config.lifecycle.daily_retention[0]
    per_task = level0 ** (1 / mem.config.lifecycle.expected_tasks_per_day)
    assert report.tasks == 20
    assert mem.get(fact).strength == pytest.approx(per_task**20)


def test_the_tasks_clock_counts_the_turns_after_a_memory_when_the_clock_steps_back(
    mem: Memory,
) -> None:
    """A clock stepped back (an NTP step) dated the turns after a memory before it, and
    the tasks clock counted none of them for it: the store's clock never runs backwards."""
    clock = mem.clock
    assert isinstance(clock, FixedClock)
    old = mem.add("the gate code is 4412", kind="fact")
    mem.sleep(train=False)
    clock.advance(minutes=1)
    new = mem.add("the bins go out on tuesday", kind="fact")
    clock.advance(hours=-1)  # the step back
    for _ in range(20):
        assert mem.retrieve("weather tomorrow").turn_id is not None
    clock.advance(hours=2)
    report = mem.sleep(train=False)
    per_task = mem.config.lifecycle.daily_retention[0] ** (
        1 / mem.config.lifecycle.expected_tasks_per_day
    )
    assert report.tasks == 20 and report.decayed == 2
    assert mem.get(old).strength == pytest.approx(per_task**20)
    assert mem.get(new).strength == pytest.approx(per_task**20)


def test_the_tasks_clock_counts_an_imported_memorys_turns_from_its_own_moment(
    tmp_path: Path, clock: FixedClock
) -> None:
    """With the tasks clock, the turns of the new file between the memory's moment and its
    previous sleep counted nothing: the moved memory decayed less than the file's own."""
    a = Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock)
    b = Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock)
    dump = tmp_path / "dump.jsonl"
    try:
        a.add("the boiler was serviced in march", kind="fact")
        own = b.add("a memory of the other file", kind="fact")
        clock.advance(minutes=1)
        for _ in range(20):
            b.retrieve("anything at all")
            clock.advance(minutes=1)
        b.sleep(train=False)
        a.export(dump)
        (moved,) = b.import_(dump, keep_ids=False)
        for _ in range(10):
            clock.advance(minutes=1)
            b.retrieve("anything at all")
        b.sleep(train=False)
        assert b.get(own).strength == pytest.approx(b.get(moved).strength)
        per_task = b.config.lifecycle.daily_retention[0] ** (
            1 / b.config.lifecycle.expected_tasks_per_day
        )
        assert b.get(moved).strength == pytest.approx(per_task**30)
    finally:
        a.close()
        b.close()


def test_principles_that_weigh_more_than_the_cap_prune_nothing(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(max_weighted_total=3))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        for i in range(4):
            mem.add(f"always answer politely, rule {i}", kind="principle")
        facts = [mem.add(f"fact number {i}", kind="fact") for i in range(3)]
        report = mem.sleep(train=False)
        assert report.pruned == 0 and [mem.get(f).id for f in facts] == facts
        assert any("principles alone weigh 4" in n for n in report.notes)


def test_a_principle_the_query_finds_stays_in_the_pack_past_the_principle_budget(
    mem: Memory, clock: FixedClock
) -> None:
    """Every principle was taken out of the results before the budget cut their block, so a
    principle the query ranked first, and that the budget cut, was in neither block."""
    for i in range(30):
        mem.add(
            f"Always be polite and answer in full sentences, rule {i}",
            kind="principle",
            occurred_at=clock.now - timedelta(days=100 - i),
        )
    key = mem.add("Never ship steel to Acme without a signed invoice", kind="principle")
    found = mem.retrieve("ship steel to Acme invoice")
    assert found.results[0].episode.id == key
    pack = mem.pack(found)
    assert pack.truncated and key in pack.episode_ids
    assert pack.text.count("signed invoice") == 1


def test_a_principle_stored_again_is_packed_once(mem: Memory, clock: FixedClock) -> None:
    """An app that adds its rule at each start-up filled the principles' block (and its
    budget) with the same line, and the found copies came back as evidence."""
    for day in range(5):
        mem.add(
            "Always answer kindly 🙏", kind="principle", occurred_at=clock.now - timedelta(days=day)
        )
    other = mem.add("Never share the user's address", kind="principle")
    mem.add_exchange("I like ramen", "noted")
    pack = mem.pack(mem.retrieve("answer kindly about ramen"))
    assert pack.text.count("Always answer kindly") == 1
    assert other in pack.episode_ids and "share the user's address" in pack.text


def test_a_learning_with_no_used_memory_is_refused_and_the_turn_stays_open(mem: Memory) -> None:
    mem.create_agent("default", perspectives=["cost"])
    bolts = mem.add("supplier X is cheapest for bolts", kind="fact")
    r = mem.retrieve("cheapest bolts", perspective="cost")
    with pytest.raises(InvalidInput, match="a learning is kept with the memories a turn used"):
        mem.feedback(r.turn_id, learning="always ask three suppliers")
    with pytest.raises(InvalidInput, match="none was found in the answer"):
        mem.feedback(r.turn_id, answer="no idea, sorry", learning="ask three suppliers")
    fb = mem.feedback(r.turn_id, [bolts], learning="always ask three suppliers")  # still open
    assert fb.used == (bolts,)
    assert mem.life_of(bolts).learnings == {"cost": ["always ask three suppliers"]}


def test_a_learning_is_refused_with_what_the_turn_lacked(mem: Memory) -> None:
    mem.create_agent("default", perspectives=["cost"])
    mem.add("supplier X is cheapest for bolts", kind="fact")
    r = mem.retrieve("cheapest bolts", perspective="cost")
    with pytest.raises(InvalidInput, match=r"used none \(none was named\): name them"):
        mem.feedback(r.turn_id, [], learning="ask three suppliers")
    with pytest.raises(
        InvalidInput, match=r"used=\[\] \(--none-used\) says that no memory was used"
    ):
        mem.feedback(r.turn_id, [], answer="supplier X", learning="ask three suppliers")
    with pytest.raises(InvalidInput, match="none was found in the answer"):
        mem.feedback(r.turn_id, answer="no idea", learning="ask three suppliers")
    empty = mem.retrieve("cheapest bolts", perspective="cost", kinds=["exchange"])
    assert empty.turn_id is not None and not empty.results
    with pytest.raises(InvalidInput, match=r"\(it returned none\): give the feedback without"):
        mem.feedback(empty.turn_id, answer="no idea", learning="ask three suppliers")


def test_a_string_is_no_list_of_used_ids(mem: Memory) -> None:
    mem.add("twelve is a number", kind="fact")
    r = mem.retrieve("twelve")
    with pytest.raises(InvalidInput, match="a list of ids, not '12'"):
        mem.feedback(r.turn_id, "12")  # type: ignore[arg-type]


def test_a_tag_of_one_character_is_not_looked_for_in_an_answer(mem: Memory) -> None:
    """One character is inside too many words: the car memory is not used by an answer
    about a train (電車), nor the tag ト by チケット."""
    car = mem.add("車の点検は来週", kind="fact", tags=["車"])
    trip = mem.add("駅までの行き方", kind="fact", tags=["ト", "チケット"])
    r = mem.retrieve("駅までどう行く？")
    assert {x.episode.id for x in r.results} >= {car, trip}
    fb = mem.feedback(
        r.turn_id, answer="駅までは電車で十分ほどです。チケットは駅で買えます。", judge="match"
    )
    assert car not in fb.used and fb.reasons[trip] == "tag 'チケット' in the answer"


def test_a_memory_dated_far_ahead_is_noted_and_one_seconds_ahead_is_not_archived(
    db_path: Path, clock: FixedClock
) -> None:
    """A memory dated after the sleep's clock counts from the previous sleep or, before the
    first, from this one: counted from the agent's start instead, an add committed while
    the sleep waited for the file (seconds ahead) was decayed as the oldest and archived."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=DAYS) as mem:
        old = mem.add("sixty days old", kind="fact")
        clock.advance(days=60)
        [racing, far] = mem.add_many(
            [
                NewEpisode(
                    kind="fact",
                    content=text,
                    occurred_at=clock.now,
                    created_at=clock.now + timedelta(seconds=seconds),
                )
                for text, seconds in (("added while the sleep waited", 30), ("from 2100", 10**9))
            ]
        )
        report = mem.sleep(train=False)  # the agent's first sleep
        assert mem.get(old).strength < 0.2
        assert mem.get(racing).strength == mem.get(far).strength == 1.0
        assert mem.get(racing).status == "active"
        [said] = [n for n in report.notes if "dated an hour or more after" in n]
        assert said.startswith("1 of the memories") and "this sleep (the agent's first)" in said
        clock.advance(days=60)
        later = mem.add_many(  # after a sleep too: new, not decayed for the days before
            [NewEpisode(kind="fact", content="another add while the sleep waited",
                        occurred_at=clock.now, created_at=clock.now + timedelta(seconds=30))]
        )  # fmt: skip
        report = mem.sleep(train=False)
        assert mem.get(later[0]).strength == 1.0 and mem.get(racing).strength < 1.0
        [said] = [n for n in report.notes if "dated an hour or more after" in n]
        assert said.startswith("1 of the memories")  # the one from 2100, not the new one


def test_with_the_tasks_clock_an_add_while_the_sleep_waited_is_new(mem: Memory) -> None:
    """Counted from the previous sleep, an add committed seconds after the sleep's clock
    was decayed for every turn since, as the oldest memory was."""
    old = mem.add("an old fact", kind="fact")
    mem.sleep(train=False)
    for _ in range(300):
        mem.retrieve("something else entirely", record=True)
    [racing] = mem.add_many(
        [NewEpisode(kind="fact", content="added while the sleep waited",
                    occurred_at=mem.clock(), created_at=mem.clock() + timedelta(seconds=30))]
    )  # fmt: skip
    mem.sleep(train=False)
    assert mem.get(old).strength < 0.5 and mem.get(racing).strength == 1.0


def _import_from_ahead(mem: Memory, tmp_path: Path, *, decayed_at: bool) -> int:
    """Import a fact whose export was written by a clock 30 days ahead: its id."""
    ahead = (mem.clock() + timedelta(days=30)).isoformat()
    line = {"kind": "fact", "content": f"from a clock ahead ({decayed_at})",
            "occurred_at": ahead, "created_at": ahead, "strength": 1.0}  # fmt: skip
    if decayed_at:  # what a current export writes
        line["decayed_at"] = ahead
    dump = tmp_path / f"ahead-{decayed_at}.jsonl"
    dump.write_text(json.dumps(line) + "\n")
    [moved] = mem.import_(dump, keep_ids=False)
    return moved


def test_with_the_tasks_clock_an_import_whose_decayed_at_is_ahead_decays_from_the_last_sleep(
    db_path: Path, tmp_path: Path, clock: FixedClock
) -> None:
    """The note says it decays from the previous sleep: its turns were read from its own
    moment, in the future, so it counted none and never decayed at the first sleep."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("Acme steel costs 900 dollars per tonne", kind="fact")
        mem.retrieve("acme")
        clock.advance(hours=1)
        mem.sleep(train=False)  # a previous sleep
        held = _import_from_ahead(mem, tmp_path, decayed_at=True)
        created = _import_from_ahead(mem, tmp_path, decayed_at=False)
        for _ in range(3):
            mem.retrieve("acme steel")
            clock.advance(minutes=20)
        report = mem.sleep(train=False)
        assert mem.get(held).strength == pytest.approx(0.98473, abs=1e-5)  # 0.95 ** 0.3
        assert mem.get(created).strength == mem.get(held).strength
        [said] = [n for n in report.notes if "dated an hour or more after" in n]
        assert said.startswith("2 of the memories") and "the previous sleep" in said
        for _ in range(2):  # from then on, from that sleep as the others
            mem.retrieve("acme steel")
        mem.sleep(train=False)
        assert mem.get(held).strength == pytest.approx(0.95**0.5)


def test_with_the_days_clock_an_import_whose_decayed_at_is_ahead_decays_from_the_last_sleep(
    db_path: Path, tmp_path: Path, clock: FixedClock
) -> None:
    level0 = DAYS.lifecycle.daily_retention[0]
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=DAYS) as mem:
        mem.add("Acme steel costs 900 dollars per tonne", kind="fact")
        mem.sleep(train=False)  # a previous sleep
        held = _import_from_ahead(mem, tmp_path, decayed_at=True)
        created = _import_from_ahead(mem, tmp_path, decayed_at=False)
        clock.advance(days=2)
        mem.sleep(train=False)
        assert mem.get(held).strength == pytest.approx(level0**2)
        assert mem.get(created).strength == pytest.approx(level0**2)


def test_a_pruned_memory_is_counted_as_pruned_alone(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(max_weighted_total=2))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        for i in range(6):
            mem.add(f"fact number {i}", kind="fact")
        report = mem.sleep(tasks=5, train=False)
        assert report.pruned == 4 and report.active == 2
        assert report.decayed == 2  # the two kept; the four pruned are not also "decayed"


def test_a_sleep_whose_training_fails_is_reported_with_a_note(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine import DatabaseLocked

    mem.add("a fact", kind="fact")

    def locked(*args: object, **kwargs: object) -> None:
        raise DatabaseLocked("another writer held it for the whole wait")

    monkeypatch.setattr(Memory, "train_scorer", locked)
    report = mem.sleep(tasks=1)
    assert report.sleep_id > 0 and report.decayed == 1
    assert any("the sleep is kept; its scorer was not retrained" in n for n in report.notes)


def test_a_perspective_is_named_without_its_outer_spaces(mem: Memory) -> None:
    mem.create_agent("a", perspectives=[" cost "])  # declared as "cost"
    kept = mem.add("the quote came to 40,000 yen", kind="fact", agent="a")
    r = mem.retrieve("how much was the quote?", agent="a", perspective=" cost ")
    assert r.turn_id is not None
    fb = mem.feedback(r.turn_id, [kept], agent="a", perspective=" cost ")
    assert fb.perspective == "cost" and fb.used == (kept,)


def test_none_used_and_an_answer_contradict_each_other(mem: Memory) -> None:
    zebra = mem.add("the zebra is striped", kind="fact", tags=["zebra"])
    r = mem.retrieve("zebra")
    with pytest.raises(InvalidInput, match="give one or the other"):
        mem.feedback(r.turn_id, [], answer="the zebra is striped")
    assert mem.get(zebra).access_count == 0
    assert mem.feedback(r.turn_id, []).used == ()


def test_a_blank_learning_is_no_learning(mem: Memory) -> None:
    mem.create_agent("default", perspectives=["cost"])
    bolts = mem.add("supplier X is cheapest for bolts", kind="fact")
    r = mem.retrieve("cheapest bolts", perspective="cost")
    mem.feedback(r.turn_id, [bolts], perspective="cost", learning="  \n")
    assert mem.life_of(bolts).learnings.get("cost", []) == []
