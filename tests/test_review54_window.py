"""Review 54 of the LLM turn's time window. A message that names a time was searched only
inside it once the LLM was on, so the part of a compound question that names none lost
its answer ("the ramen place last week, and when is Juno's cleaning?": the cleaning was
told earlier), with the LLM answering and with it down, where the fast path found it. And
an expanded query with no word to search ("a") had its skipped full-text search noted in
``degraded`` as a fault; dropping such a query lost the vector search of "The Who" with it:
it is searched by its meaning, noted nowhere. Real SQLite, the real HTTP client, the
scripted server."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memengine import FixedClock, Memory
from memengine.embed.base import Vectors, normalize

from .helpers import HashEmbedder
from .openai_server import ScriptedOpenAI, ScriptedReply
from .test_phases import NOW, Store, config, expansion, rerank, user_prompt


@dataclass(frozen=True)
class Compound:
    """A message asking about a time and about something else, and what the LLM says of it."""

    text: str
    recent: list[dict[str, str]]
    queries: tuple[str, ...]
    refs: list[dict[str, str]]
    timed: str
    untimed: str


CAFE = "先週、吉祥寺のカフェ「モリノ」でチーズケーキを食べた"
JA_DENTIST = "ジュノの歯医者は6月2日"

COMPOUNDS = {
    "ja": Compound(
        text="先週のあれ、なんて店だっけ？あとジュノの歯医者いつ？",
        recent=[
            {"role": "user", "text": "チーズケーキ美味しかったなあ"},
            {"role": "partner", "text": "どこのお店？"},
        ],
        queries=("吉祥寺 カフェ モリノ", "ジュノ 歯医者 日付"),
        refs=[
            {"type": "anaphora", "surface": "あれ", "resolved": "カフェ モリノ"},
            {"type": "temporal", "surface": "先週", "resolved": "2026-05-25/2026-05-31"},
        ],
        timed="cafe",
        untimed="ja_dentist",
    ),
    "en": Compound(
        text="What was the ramen place we tried last week, and when is Juno's dental cleaning?",
        recent=[],
        queries=("ramen shop downtown", "Juno dental appointment date"),
        refs=[{"type": "temporal", "surface": "last week", "resolved": "2026-05-25/2026-05-31"}],
        timed="ramen",  # 26 May
        untimed="dental",  # told on 10 May
    ),
}


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


def _store(tmp_path: Path, srv: ScriptedOpenAI, **llm: object) -> Store:
    """test_phases' six English memories and two Japanese ones: the café (27 May, last
    week) and Juno's dentist (20 May, before it)."""
    s = Store(tmp_path / "m.db", config(srv.base_url, **llm))
    for name, user, reply, day in [
        ("cafe", CAFE, "いいね！", "2026-05-27"),
        ("ja_dentist", JA_DENTIST, "覚えておくね", "2026-05-20"),
    ]:
        when = datetime.fromisoformat(day + "T10:00:00+00:00")
        s.ids[name] = s.mem.add_exchange(user, reply, occurred_at=when)
    return s


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_untimed_question_keeps_its_answer_with_the_llm(
    tmp_path: Path, srv: ScriptedOpenAI, lang: str
) -> None:
    """The rerank is shown the memory the time does not cover and keeps it: before, it was
    no candidate, and the model's pick of it was an unknown id, dropped."""
    c = COMPOUNDS[lang]
    s = _store(tmp_path, srv)
    try:
        timed, untimed = s.ids[c.timed], s.ids[c.untimed]
        srv.push_chat(json_data=expansion(*c.queries, refs=c.refs))
        srv.push_chat(json_data=rerank((timed, "high", "the place"), (untimed, "high", "the date")))
        r, _ = s.ask(c.text, recent=c.recent)
        assert r.degraded == ()
        assert [x.episode.id for x in r.results] == [timed, untimed]
        assert r.time_window is not None and r.time_window[0].day == 25  # the window was read
        shown = user_prompt(srv.chat_requests[-1])
        assert f"[id {untimed}]" in shown and f"[id {timed}]" in shown
    finally:
        s.mem.close()


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_untimed_question_keeps_its_answer_with_the_llm_down(
    tmp_path: Path, srv: ScriptedOpenAI, lang: str
) -> None:
    """Both phases fail (HTTP 500 on every try): the turn finds what the fast path finds,
    the memory before the window among them; before, it searched the window alone."""
    c = COMPOUNDS[lang]
    s = _store(tmp_path, srv)
    try:
        fast, _ = s.ask(c.text, recent=c.recent, llm=False)
        assert s.ids[c.untimed] in {x.episode.id for x in fast.results}
        srv.default_chat = ScriptedReply(status=500, error_message="down")
        r, _ = s.ask(c.text, recent=c.recent)
        assert [d.split(":")[0] for d in r.degraded] == ["expansion", "rerank"]
        got = {x.episode.id for x in r.results}
        assert got == {x.episode.id for x in fast.results}
        assert {s.ids[c.timed], s.ids[c.untimed]} <= got
    finally:
        s.mem.close()


def test_an_expanded_query_with_no_word_to_search_is_searched_by_meaning_and_noted_nowhere(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The queries "a" and "what is it?" hold only stopwords: their full-text search skipped
    read as a fault (``bm25 skipped for query 2: no searchable terms``) though nothing
    failed, and then they were dropped, vector search and all (which lost "The Who", below).
    They are searched by their meaning, and ``degraded`` says nothing of them."""
    s = _store(tmp_path, srv, rerank_enabled=False)
    try:
        srv.push_chat(json_data=expansion("a", "What is it?", "Juno vet appointment", "  "))
        r, _ = s.ask()
        assert r.degraded == ()
        assert r.queries[-3:] == ("a", "What is it?", "Juno vet appointment")
        assert r.results[0].episode.id == s.ids["dental"]
        # the message's own words are still searched as they are, and said so when none
        r, _ = s.ask("what is it?", recent=[], llm=False)
        assert r.degraded == ("bm25 skipped for query 0: no searchable terms",)
    finally:
        s.mem.close()


class WordEmbedder(HashEmbedder):
    """Hashes every word of a text, stopwords too, as a real model reads them: "The Who"
    has a meaning to search by though the full text finds no word of it."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dimension] += 1.0
            out[row, 0] += 0.01
        return normalize(out)


WHO = "Saw The Who live at the Garden, Daltrey still has it"
BAND = [f"That concert {n} was amazing, a group of {n} friends came along again" for n in range(12)]
"""Twelve concerts nearer the message's words than the memory of The Who, which its own
searches (ten vector hits, the full text) never reach."""


@pytest.mark.parametrize("search", ["hybrid", "vector"])
def test_an_expanded_query_of_stopwords_alone_keeps_its_vector_search(
    tmp_path: Path, srv: ScriptedOpenAI, search: str
) -> None:
    """ "The Who", the band the model resolved "that group" to, holds no word the full text
    can search (nor 🎸); dropping it lost the memory only its meaning finds (ranked third,
    then absent). It is searched again, and no note says a search was skipped."""
    cfg = config(srv.base_url, rerank_enabled=False)
    cfg = cfg.model_copy(update={"retrieval": cfg.retrieval.model_copy(update={"search": search})})
    mem = Memory.open(
        tmp_path / "m.db", config=cfg, embedder=WordEmbedder(256), clock=FixedClock(NOW)
    )
    try:
        mem._llm()  # the client is ready (as test_phases' Store)
        day = datetime(2026, 5, 1, tzinfo=UTC)
        who = mem.add_exchange(WHO, "Nice!", occurred_at=day)
        for text in BAND:
            mem.add_exchange(text, "Nice!", occurred_at=day)
        recent = [{"role": "user", "text": "that concert was amazing"}]
        by_meaning = []  # the memory found first by a vector search, that of "The Who"
        for queries in (("The Who", "🎸"), ()):
            srv.push_chat(json_data=expansion(*queries))
            r = mem.retrieve("Which group was that again?", recent=recent, limit=20)
            assert r.queries[len(r.queries) - len(queries) :] == queries
            assert r.degraded == ()
            hit = next((x for x in r.results if x.episode.id == who), None)
            by_meaning.append(hit is not None and hit.components.get("knn_rank") == 1.0)
        assert by_meaning == [True, False]
    finally:
        mem.close()
