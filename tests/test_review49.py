"""Fixes from the session-49 reviews: the language of a turn, a message searched alone
after set phrases that only look like pronouns, and a joined search's share of a score."""

from __future__ import annotations

import pytest

from memengine import FixedClock, Memory
from memengine.models import Message
from memengine.retrieve.retriever import turn_language
from memengine.store.filters import Filters
from memengine.store.fulltext import match_expression
from memengine.text import guess_language, query_terms


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # a Japanese writer spaces pasted English, and the particles with it
        ("pip install -r requirements.txt が ERROR: Could not find a version で失敗する", "ja"),
        ("torch==2.3.1 で ModuleNotFoundError が出た", "ja"),
        ("Pythonのdeadlineいつ？", "ja"),
        ("I wrote 'は' on the whiteboard", "en"),  # (a hiragana quoted: English)
        ("Tell me about de Gaulle and ni hao", "en"),
    ],
)
def test_a_particle_spaced_after_english_is_japanese(text: str, lang: str) -> None:
    assert guess_language(text) == lang


def test_a_message_of_its_own_words_gives_the_turn_its_language() -> None:
    """After a reply in Japanese, "When is Mochi's birthday?" was a Japanese turn: the
    pack's frame and an LLM's prompts came out in Japanese for an English question."""
    said = [Message(role="user", text="猫の話"), Message(role="assistant", text="もちの話だね！")]
    assert turn_language("When is Mochi's birthday?", said) == "en"
    assert turn_language("もちの誕生日いつ？", [Message(role="user", text="Hi")]) == "ja"
    assert turn_language("OK!", said) == "ja"  # (too short to tell: the conversation does)
    assert turn_language("はい", [Message(role="user", text="Is it at noon?")]) == "ja"


def test_an_english_question_after_a_japanese_reply_is_packed_in_english(
    real_mem: Memory,
) -> None:
    real_mem.add_exchange("Mochi's birthday is on 3 March, she turns four.", "Noted!")
    recent = [
        {"role": "user", "content": "Mochi is being so cute today"},
        {"role": "assistant", "content": "もちちゃん、かわいいね！写真見たいな"},
    ]
    r = real_mem.retrieve("When is Mochi's birthday?", recent=recent)
    assert r.language == "en"
    text = real_mem.pack(r).text
    assert "why:" in text and "関連" not in text


def test_the_same_words_told_again_come_the_latest_first(mem: Memory, clock: FixedClock) -> None:
    """Identical turns tie in both searches and came oldest first (by row id): "when did I
    last say I was tired?" packed the first tellings, the latest ranked ninth. The vector
    scan's order of ties is checked in tests/test_search_index.py."""
    copies = []
    for _ in range(6):
        copies.append(mem.add_exchange("so tired tonight", "Get some rest!"))
        clock.advance(days=1)
    expr = match_expression(query_terms("so tired tonight"))
    assert expr is not None
    hits = mem.store.bm25(expr, 4, Filters())
    assert len({score for _, score in hits}) == 1  # (a tie)
    assert [i for i, _ in hits] == sorted(copies, reverse=True)[:4]
