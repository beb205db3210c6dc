"""Where a long memory's quote is cut: never inside a number ("$1,9…", "…8,000円") nor a
Latin word ("the ne…"), at either end, in English and Japanese; a cut that falls at an
edge already stays where it was. Episodes are stored in real SQLite and read back."""

from __future__ import annotations

import re
from datetime import timedelta

from memengine import Episode, FixedClock, Memory, Retrieval, Retrieved
from memengine.pack import build_pack, render_episode

_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[A-Za-z]+")


def _quoted(mem: Memory, text: str, query: str, max_chars: int, lang: str = "en") -> str:
    """What the block of ``text``, stored in ``mem`` and read back, quotes of it for
    ``query`` (``quote_key_parts``), without its "Note: " label."""
    ep = mem.get(mem.add(text))
    item = Retrieved(episode=ep, score=1.0, rank=1, relevance="high")
    block = render_episode(
        item, lang, query=query, strategy="quote_key_parts", max_chars=max_chars, why=False
    )
    return block.splitlines()[1].split(": ", 1)[1]


def _pieces(shown: str, stored: str) -> list[str]:
    """The digit runs and Latin words ``shown`` that ``stored`` does not hold whole: what a
    cut inside a number or a word shows ("9" of "$1,950", "ne" of "new")."""
    runs = set(_DIGITS.findall(stored)) | set(_LETTERS.findall(stored))
    return [r for r in _DIGITS.findall(shown) + _LETTERS.findall(shown) if r not in runs]


def test_an_english_quote_is_cut_at_neither_end_inside_a_number_or_a_word(mem: Memory) -> None:
    """A sweep of where the cut falls, at the end (the query's word near the start) and at
    the start (near the end), over "$1,950.75", "198,000円", "2026-06-12", "19:30", "3.5kg"
    and words: no piece of one is shown, and the quote keeps to its length."""
    numbers = (
        "they quoted $1,950.75 total and 198,000円 or 2026-06-12 ready at 19:30 "
        "with 3.5kg of parts from Acme Corp in the new year"
    )
    shown_any = set()
    for pad in range(0, 64):
        for max_chars in (240, 80):
            ahead = "For the laptop repair " + "a " * pad + numbers + " and so on" * 20
            behind = numbers + " b" * pad + " and that was the laptop repair in the end"
            for text in (ahead, "x " * 120 + behind):
                quote = _quoted(mem, text, "laptop repair", max_chars)
                assert "repair" in quote and len(quote) <= max_chars
                assert _pieces(quote, text) == [], quote
                shown_any |= set(_DIGITS.findall(quote))
    assert {"1", "950", "75", "198", "000", "19", "30"} <= shown_any  # (the sweep shows them)


def test_a_japanese_quote_starts_and_ends_outside_a_number(mem: Memory) -> None:
    """Casual Japanese with no 。 and no space: the start moved to a word's start, never into
    "128,000円" ("…8,000円", "…,000円", "…000円" before), and the end stops before
    "3,300円" rather than in it."""
    starts = set()
    for gap in range(50, 80):
        text = (
            "ずっと" * 40 + "家賃は128,000円に上がった" + "で" * gap + "自転車通勤にしようかな"
            + "ね" * (gap + 60) + "駐輪場は月3,300円で" + "よ" * 200
        )  # fmt: skip
        quote = _quoted(mem, text, "自転車通勤", 240, "ja")
        assert "自転車通勤" in quote and len(quote) <= 240
        assert set(_DIGITS.findall(quote)) <= {"128", "000", "3", "300"}, quote
        assert ("128" in quote) == ("000円に" in quote)  # whole or not at all
        assert "300円" not in quote or "3,300円" in quote
        starts.add(quote[:4])
    assert "…128" in starts or "…家賃は" in starts  # (the number is shown whole when in reach)


def test_a_cut_at_an_edge_already_stays_and_a_long_run_is_cut_where_it_falls(
    mem: Memory,
) -> None:
    """No false moves: a cut at a space stays, one a few characters before 、 starts past
    it, and one in kana far from any word's start stays where it fell; a run longer than a word (a URL) is cut within it, as before,
    not dropped whole."""
    spaced = "Cents report alpha receipts delta finance gamma. Totals beta receipts refunds."
    assert _quoted(mem, spaced, "receipts", 40) == "…alpha receipts delta finance gamma.…"
    clause = "ねえ" * 60 + "、" + "で" * 55 + "自転車通勤にしようかな" + "ね" * 200
    assert _quoted(mem, clause, "自転車通勤", 240, "ja").startswith("…ででで")  # (past 、)
    kana = "ずっと" * 40 + "あ" * 80 + "自転車通勤にしようかな" + "ね" * 200
    assert _quoted(mem, kana, "自転車通勤", 240, "ja").startswith("…ああああ")
    url = "My laptop repair invoice: https://example.com/" + "x" * 300
    quote = _quoted(mem, url, "laptop repair", 80)
    assert quote.startswith("My laptop repair invoice: https://example.com/xx") and len(quote) == 80


def test_the_review_laptop_repair_quote_shows_the_price_asked(
    real_mem: Memory, clock: FixedClock
) -> None:
    """Review repro: one 269-character sentence with "$1,950" at 235 was quoted to "they
    quoted $1,9…" (another price), then to "…the warranty desk they quoted…" (no price);
    "How much…?" asks a quantity, so the quote moves to show the price whole with "laptop
    repair", and the reason line's "holds a date or number" rests on it."""
    text = (
        "My laptop repair: the shop looked at it on Monday, said the hinge and the screen both "
        "need replacing, the keyboard is fine, the battery is still at ninety percent, and after "
        "checking with the supplier and the warranty desk they quoted $1,950 in total, ready on "
        "June 12."
    )
    real_mem.add_exchange(text, "Ouch.", occurred_at=clock.now - timedelta(days=2))
    query = "How much is my laptop repair?"
    pack = real_mem.pack(real_mem.retrieve(query), query=query)
    [said] = [line[6:] for line in pack.text.splitlines() if line.startswith("User: ")]
    assert said.startswith("…laptop repair: ") and said.endswith("they quoted $1,950…")
    assert len(said) <= 240 and _pieces(said, text) == []
    assert "holds a date or number" in pack.text


def test_a_quote_moves_to_the_asked_figure_only_when_asked_and_in_reach(mem: Memory) -> None:
    """The price moves the quote for a question that asks a quantity, not for one that asks
    none ("Tell me about…" keeps the quote where the word is), nor when it lies too far
    from the word to show both (the word is kept); a time is moved to as a quantity is, and
    a figure before the word is shown with the word too."""

    def told(parts: int) -> str:
        """A long sentence with "laptop repair" near its start and the price ``parts``
        clauses on."""
        return (
            "We talked about the weekend, then the laptop repair: the shop said "
            + "the part is on order and " * parts
            + "they quoted $1,950 in total, ready on June 12 or so, they think, maybe."
        )

    asked = _quoted(mem, told(7), "How much is the laptop repair?", 240)
    assert asked.startswith("…then the laptop repair") and asked.endswith("$1,950 in…")
    assert len(asked) <= 240
    plain = _quoted(mem, told(7), "Tell me about the laptop repair", 240)
    assert plain.startswith("We talked") and "$" not in plain and plain.endswith("on order…")
    beyond = _quoted(mem, told(8), "How much is the laptop repair?", 240)
    assert beyond == _quoted(mem, told(8), "Tell me about the laptop repair", 240)
    assert "laptop repair" in beyond and "$" not in beyond
    when = _quoted(mem, told(6), "When is the laptop repair ready?", 240)
    assert "laptop repair" in when and "June 12" in when and len(when) <= 240
    assert "June 12" not in _quoted(mem, told(6), "Tell me about the laptop repair", 240)
    before = (
        "They quoted $1,950 in total "
        + "and the part is on order " * 8
        + "for the laptop repair they did last week at the shop near the station"
        + " ok" * 40
    )
    shown = _quoted(mem, before, "How much was the laptop repair?", 240)
    assert shown.startswith("…$1,950") and "laptop repair" in shown and len(shown) <= 240
    assert "$" not in _quoted(mem, before, "Remember the laptop repair?", 240)


def test_a_japanese_quote_moves_to_the_asked_price(mem: Memory) -> None:
    """Casual Japanese, no 。: 「修理代はいくらだっけ？」 asks a quantity, and a quote that
    stopped before 「128,000円」 shows it whole with ノートパソコンの修理; 「どうなった？」 asks
    none and keeps the quote where it was, as does a price already shown or one too far
    from the word to show both; no cut is inside a number, nor past the length."""
    middle = (
        "だけど、月曜にお店で見てもらって、ヒンジも画面も交換が必要で、キーボードは大丈夫、バッテリーもまだ"
        "九割あるって言われて、部品の取り寄せとか保証の確認とか色々してもらって"
    )
    tail = (
        "結局修理代は全部で128,000円って言われたんだよね、" + "ほんと高すぎてびっくりしちゃった" * 8
    )
    moved = stayed = far = 0
    for gap in range(40, 140, 6):
        text = "ずっと" * 30 + "ノートパソコンの修理" + middle + "ね" * gap + tail
        price = _quoted(mem, text, "ノートパソコンの修理代はいくらだっけ？", 240, "ja")
        plain = _quoted(mem, text, "ノートパソコンの修理どうなった？", 240, "ja")
        for quote in (price, plain):
            assert "ノートパソコンの修理" in quote and len(quote) <= 240
            assert _pieces(quote, text) == [], quote
        if "128,000円" in plain or "128,000円" not in price:
            assert price == plain  # (shown already, or out of reach)
            stayed += "128,000円" in plain
            far += "128,000円" not in plain
        else:
            moved += 1
    assert moved >= 3 and stayed >= 3 and far >= 1, (moved, stayed, far)


def test_the_review_rent_quote_starts_at_the_rent_whole(
    real_mem: Memory, clock: FixedClock
) -> None:
    """Review repro: a 352-character casual message with no 。 was quoted from "…8,000円に
    上がった" (the rent of 128,000円 told as 8,000円)."""
    text = (
        "最近ほんとに色々あってさ、仕事は相変わらず忙しいし週末も資格の勉強してるしで全然休めてないんだけど、"
        "一番きついのはお金のことで、大家さんから連絡が来て家賃は128,000円に上がったって言われて、"
        "駐車場代も別で払ってるもう無理だなと思って、色々考えた結果として車を手放して"
        "来月から自転車通勤にしようと思ってるんだよね、会社まで片道40分くらいかかるけど運動にもなるし"
        "雨の日だけ電車にすればいいかなって、ヘルメットとか鍵とかも買わなきゃいけないから最初はちょっと"
        "お金かかるけどまあ長い目で見たら絶対そっちの方が安いし健康にもいいし一石二鳥だよねって自分に"
        "言い聞かせてるところ、あと職場にシャワーがあるかどうか確認しなきゃいけないし駐輪場の空きがあるかも"
        "聞かないとだし、やることいっぱいなんだけど、どう思う？"
    )
    real_mem.add_exchange(text, "それは大変だったね…", occurred_at=clock.now - timedelta(days=3))
    query = "自転車通勤にする理由なんだっけ？"
    pack = real_mem.pack(real_mem.retrieve(query), query=query)
    [said] = [line[6:] for line in pack.text.splitlines() if line.startswith("User: ")]
    assert "自転車通勤" in said and _pieces(said, text) == []
    assert "128,000円" in said and "…8,000円" not in said


def test_a_price_cut_off_the_quote_is_not_claimed_by_the_reason(mem: Memory) -> None:
    """The reason line says "holds a date or number" of what is shown: a price that would
    have been cut, too far from "laptop repair" for the quote to move to it, is left out,
    and with it the claim; a price shown whole keeps it."""
    lead = "My laptop repair went badly: " + "the shop kept it and " * 9
    ep = mem.get(mem.add(lead + "they quoted $1,234,567.89 for the whole job in the end."))
    short = mem.get(mem.add("My laptop repair went badly: they quoted $1,950 for it."))

    def why(episode: Episode) -> str:
        """The reason line of ``episode``'s block for a question that asks a quantity."""
        item = Retrieved(
            episode=episode, score=1.0, rank=1, relevance="high", components={"answer_type": 1.0}
        )
        retrieval = Retrieval(
            results=(item,), queries=("q",), should_inject=True, language="en", agent="default"
        )
        return build_pack(retrieval, query="How much is my laptop repair?", budget_tokens=800).text

    cut = why(ep)
    assert "they quoted…" in cut and "$" not in cut and "234" not in cut
    assert "holds a date or number" not in cut
    assert "holds a date or number" in why(short)


def test_a_quote_moved_to_a_date_before_the_word_shows_the_whole_word_and_the_month(
    mem: Memory,
) -> None:
    """The move to a date before the query's word ended where the pattern matched, the
    "dentist" of "dentists", and the cut before a word's end dropped it; it started at the
    day's digits, "…12 at the clinic", without "June". Over a sweep of lengths, the quote
    shows the word matched whole ("dentists", "repairs") and, where it shows the day, its
    month with it; at 120 the move shows both."""
    filler = ", the receptionist said the doctor was running late so I played games with the "
    for noun, query in (
        ("dentists", "When is the dentist?"),
        ("laptop repairs", "When is the laptop repair?"),
    ):
        text = (
            f"I was so busy lately, but it is set for June 12 at the clinic{filler}{noun}"
            " and then we went home and talked about many other things for hours."
        )
        for max_chars in range(90, 141, 5):
            quote = _quoted(mem, text, query, max_chars)
            assert noun in quote and len(quote) <= max_chars, (max_chars, quote)
            assert "12" not in quote or "June 12" in quote, (max_chars, quote)
            assert not _pieces(quote, text), (max_chars, quote)
        assert "June 12" in _quoted(mem, text, query, 120)


def test_a_japanese_quote_moved_to_a_date_keeps_the_month_and_the_whole_word(
    mem: Memory,
) -> None:
    """In Japanese the query's word is a bigram (歯医 of 歯医者): the moved quote showed
    「…12日に予約…歯医…」, the month and the word's end cut off. Over a sweep it shows 12日 only
    as 6月12日 and 歯医 only as 歯医者 (a run of kanji is one word); at 60 both."""
    text = (
        "最近いろいろあって忙しかったんだけど、来週の6月12日に予約したんだけど、その日は朝から"
        "雨みたいで傘を持っていかないと、歯医者さんは駅前のところにしたよ。"
        + "あとは買い物もしたいな"
        * 3
    )
    for max_chars in range(40, 91, 3):
        quote = _quoted(mem, text, "歯医者さんはいつ？", max_chars, "ja")
        assert "歯医者" in quote and len(quote) <= max_chars, (max_chars, quote)
        assert "12日" not in quote or "6月12日" in quote, (max_chars, quote)
    quote = _quoted(mem, text, "歯医者さんはいつ？", 60, "ja")
    assert "6月12日" in quote and "歯医者さん" in quote


def test_an_incidental_number_neither_blocks_nor_draws_the_move_to_the_price(
    mem: Memory,
) -> None:
    """A phone number, a room's, "5th Avenue" or an age in view counted as an answer to "How
    much…?": the quote stayed put, the price cut off. Only a value of the asked kind as the
    answer judge reads it (:func:`.values.closed_values`, an amount with its currency) is
    one: the quote moves to "$1,950" past each. Without a price, none of them moves it, and a
    "When…?" question is moved neither by a price nor by a duration ("2 hours")."""
    text = (
        "We spent the whole weekend cleaning out the garage and sorting the boxes, and about"
        " my laptop repair: the shop{} said the hinge needs replacing, and the warranty desk"
        " quoted {} in total."
    )
    for aside in ("", " (555-0199)", " in room 12", " on 5th Avenue", " (I'm 35, ugh)"):
        quote = _quoted(mem, text.format(aside, "$1,950"), "How much is my laptop repair?", 120)
        assert "$1,950" in quote and "laptop repair" in quote, (aside, quote)
        plain = _quoted(mem, text.format("", "a lot"), "How much is my laptop repair?", 120)
        unpriced = _quoted(mem, text.format(aside, "a lot"), "How much is my laptop repair?", 120)
        assert unpriced.startswith(plain[:40]), (aside, unpriced)  # (stays at the word)
    for said in ("$1,950", "2 hours"):
        when = _quoted(mem, text.format("", said), "When is my laptop repair?", 120)
        assert when.startswith("…the boxes, and about my laptop repair"), when  # (not moved)
