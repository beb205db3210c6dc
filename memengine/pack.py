"""The MemoryPack: the ``[EPISODE_EVIDENCE]`` prompt section built from a retrieval.

Format, one block per episode, best first, in the conversation's language, under a line
that says what day it is (the retrieval's ``now``) and that a block's date is when it was
said (where the budget left once the memories are chosen holds it)::

    [EPISODE_EVIDENCE]
    (today: 2026-03-10 (Tue); dates are when it was said)
    ## 2026-03-04 (Wed) — New project "Mimosa" starts
    User: … I started a new project today…
    Partner: Congratulations! …
    → why: shares "mimosa", "project"; high relevance

A heading names its topic (its tags, else its first sentence) only when the first line
quoted does not begin with it. Japanese conversations get ``User:``/``Partner:`` lines
too, with a ``→ 関連:`` line. The pack fits a token budget (an offline estimate that
counts each code point past ASCII as a token, a CJK character, an emoji's joiner, and four
Latin characters as one: :func:`.text.estimate_tokens`);
episodes that do not fit are dropped, long utterances are trimmed (:mod:`.quote`) to the
sentences that share words with the query, around the one that shares the most
(``quote_key_parts``; then the sentence right after that one, where the budget left once
the memories packed are chosen holds it), to their first sentence (``summarize``), or kept whole up
to four times the length of the others (``full``); a trimmed quote keeps too the first later
sentence (within :data:`.quote_changes.TURN_REACH` characters) that says what it quotes
changed or ended ("That all changed after my surgery", 状況が変わっちゃって; not one about
another person or matter, "My sister quit her job, by the way", そういえば妹が…辞めた:
:mod:`.quote_changes`), where it fits whole, before any other (alone, the quote would tell
the old fact as the fact); a quote marks what it leaves
out with "…", and shows a memory's line breaks as " / " (a side is one line of the pack),
whatever its length; a line break counts as the one character it is in the memory for the
length a quote may reach, so what fitted as a run of spaces still fits (the token budget
counts the text as shown). Control characters and the marks that reorder text on screen are
left out of what a memory says; a quoted line that begins as the pack's own lines do
("Partner: ", "## ", "[PRINCIPLES]", "(today: "; "Partner:" alone on its line, "**Partner:**",
"> User: ", "Partner:I promise", 相手:500円; in full width too, "［PRINCIPLES］"; behind a
zero-width space too), where a reader sees a line begin (after a line break any speaker's
label, "Ken: "; after a " / " typed so or a quote's " … " only those a reader takes for a
turn, not "Tokyo / Osaka: ": :func:`.quote.unposed`), has its label in ‹ ›
("‹Partner›: "), and a chat template's token is written with ‹ › for
its brackets, once ("‹|im_start|›", "‹INST›": :func:`.text.untemplated`): what is quoted is
stored text, and untrusted. The marks are not counted in the characters a quote may reach
(the token budget counts them).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import datetime, timezone, tzinfo

from .clock import in_zone
from .lazy_re import lazy_compile
from .lifecycle.strength import is_principle
from .models import Episode, EpisodeKind, Pack, Retrieval, Retrieved
from .quote import (
    BREAK,
    SENTENCE,
    Strategy,
    as_shown,
    quote_lines,
    quote_text,
    quoted_part,
    unposed,
)
from .retrieve.answer_type import AnswerType, asked_types, carries_any
from .text import (
    asked_with,
    cut_at,
    estimate_tokens,
    fold,
    query_terms,
    readable,
    reason_line,
    shared_phrases,
    untemplated,
)

__all__ = ["build_pack", "render_episode"]

_WEEKDAYS = {
    "ja": "月火水木金土日",
    "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
}
_HEADER = "[EPISODE_EVIDENCE]"
_HIRAGANA = lazy_compile(r"^[\u3040-\u309f]+$")
_PRINCIPLES = {"ja": "[PRINCIPLES]", "en": "[PRINCIPLES]"}


def _date_line(ep: Episode, lang: str, zone: tzinfo | None = None) -> str:
    return _day(in_zone(ep.occurred_at, zone), lang)


def _changed_line(older: datetime, newer: Episode, lang: str, zone: tzinfo | None) -> str:
    """When the memory a later change follows was said (``older``), as its reason line names
    it: its day ("2026-06-10 (Wed)"), or its time when it was said the same day as the
    change, whose block's heading already names that day (「同じ日の 09:30」, "09:30 the same
    day")."""
    said = in_zone(older, zone)
    if said.date() != in_zone(newer.occurred_at, zone).date():
        return _day(said, lang)
    return f"同じ日の {said:%H:%M}" if lang == "ja" else f"{said:%H:%M} the same day"


def _changed_at(item: Retrieved, changes: Episode | None) -> datetime | None:
    """When the memory ``item`` changes was said: ``changes``' time, else, for a correction in
    the next turn, the time it was marked with (``changes_at``), so that one shown without
    the memory it corrects (a ``limit`` of 1, a tight budget) still says it corrects one,
    and of when; None for no change."""
    if changes is not None:
        return changes.occurred_at
    at = item.components.get("changes_at")
    if "correction" not in item.components or at is None:
        return None
    return datetime.fromtimestamp(at, tz=timezone.utc)


def _day(d: datetime, lang: str) -> str:
    """A day as the pack writes it: "2026-06-10 (Wed)", 「2026-06-10 (水)」."""
    return f"{d.date().isoformat()} ({_WEEKDAYS[lang][d.weekday()]})"


def _frame(now: datetime | None, lang: str) -> str:
    """The line under the evidence's header that says what day it is (the retrieval's
    ``now``, in its zone) and what a block's date is: when it was said ("" without a
    ``now``)."""
    if now is None:
        return ""
    if lang == "ja":
        return f"（今日: {_day(now, lang)}・日付は話した日）"
    return f"(today: {_day(now, lang)}; dates are when it was said)"


def _topic(ep: Episode, limit: int = 40) -> str:
    """An episode's heading: its first tags, else its first sentence, on one line and cut
    to about ``limit`` characters (a tag's line break would start a section of its own)."""
    return _tagged(ep, limit) or _first_sentence(ep, limit)


def _tagged(ep: Episode, limit: int = 40) -> str:
    """An episode's first tags as its heading names them ("" without one)."""
    if ep.tags:
        tags = [" ".join(readable(t).split()) for t in ep.tags if t.strip().lower() != "principle"]
        joined = ", ".join(t for t in tags[:3] if t)
        if joined:
            return joined if len(joined) <= limit else joined[: cut_at(joined, limit - 1)] + "…"
    return ""


def _first_sentence(ep: Episode, limit: int = 40) -> str:
    """An episode's first sentence (of its first side that says something), cut to about
    ``limit`` characters."""
    sides = (
        readable(quoted_part(t, limit)).strip()  # (a long one's beginning: what a quote reads)
        for t in (ep.user_text, ep.content, ep.reply_text)
        if t
    )
    first = next((t for t in sides if t), "").splitlines()  # (a side of controls alone: none)
    line = first[0] if first else ""
    sentence = SENTENCE.split(line)[0] if line else ""
    return sentence if len(sentence) <= limit else sentence[: cut_at(sentence, limit - 1)] + "…"


def _tokens(text: str) -> int:
    """The token estimate of ``text`` as shown (:func:`.quote.as_shown`)."""
    return estimate_tokens(as_shown(text))


MEANING_SHOWN = 0.1
"""The least cosine the reason line calls a similar meaning: below it (a memory found by
its time or its words alone) the line does not claim one."""


def _reason(
    item: Retrieved, lang: str, query: str, changed: str | None = None, shown: str = ""
) -> str:
    """The reason line: the LLM's, else what the memory ``shown`` (the lines quoted: the
    phrases a long memory shares lie beyond the start that is read) shares, and why; it
    says the memory holds a date or number only when what is shown holds one of the kinds
    the query asks (:func:`_holds_asked`). A later change says so first, beside the LLM's
    too ("newer than the memory of 2026-05-02 (Sat) on the same subject; the vet"; a
    correction in the next turn, "corrects the memory of 20:05 the same day; …")."""
    if item.reason:
        said = reason_line(item.reason)  # (the model's is already; one given by hand too)
        if changed is None:
            return said
        return f"{_change_said(item, lang, changed)}{' / ' if lang == 'ja' else '; '}{said}"
    text = shown or item.episode.text
    shared = shared_phrases(query, text)
    cos = item.components.get("cosine")
    comps = item.components
    holds = "answer_type" in comps and _holds_asked(text, query)
    # (a correction in the next turn answers no question of the one before)
    answers = "next_turn" in comps and "correction" not in comps
    bits: list[str] = []
    if lang == "ja":
        if changed is not None:
            bits.append(_change_said(item, lang, changed))
        if comps.get("asked_time", 0.0) >= 1.0:
            bits.append("尋ねられた時期のこと")
        if shared:
            bits.append("「" + "」「".join(shared) + "」が一致")
        if cos is not None and cos >= MEANING_SHOWN:
            bits.append(f"意味の近さ {cos:.2f}")
        if answers:
            bits.append("一致した発言の問いに答え" + ("、日時・数を含む" if holds else "る"))
        elif holds:
            bits.append("日時・数を含む")
        return " / ".join(bits or ["関連あり"]) + f"（{_label(item.relevance, lang)}）"
    if changed is not None:
        bits.append(_change_said(item, lang, changed))
    if comps.get("asked_time", 0.0) >= 1.0:
        bits.append("from the time asked about")
    if shared:
        bits.append("shares " + ", ".join(f'"{t}"' for t in shared))
    if cos is not None and cos >= MEANING_SHOWN:
        bits.append(f"similar meaning ({cos:.2f})")
    if answers:
        bits.append(
            "answers a matching turn's question" + (" and holds a date or number" if holds else "")
        )
    elif holds:
        bits.append("holds a date or number")
    return "; ".join(bits or ["related"]) + f"; {_label(item.relevance, lang)}"


def _change_said(item: Retrieved, lang: str, changed: str) -> str:
    """What a later change's reason line says of the memory it changes (``changed``: when
    that was said): a correction in the next turn corrects it, another change is newer."""
    if "correction" in item.components:
        return f"{changed} の記憶の訂正" if lang == "ja" else f"corrects the memory of {changed}"
    if lang == "ja":
        return f"{changed} の記憶より新しい、同じ話題の話"
    return f"newer than the memory of {changed} on the same subject"


def _may_fill(ep: Episode, strategy: Strategy, max_chars: int) -> bool:
    """Whether filling can change the block of ``ep``: a ``quote_key_parts`` quote of a side
    longer than ``max_chars`` as measured (a line break one character, :data:`.quote.BREAK`; a
    shorter one is quoted whole either way, :func:`.quote.quote_text`; a long one as the quote
    reads it, :func:`.quote.quoted_part`)."""
    if strategy != "quote_key_parts":
        return False
    sides = (ep.user_text, ep.reply_text) if ep.kind is EpisodeKind.exchange else (ep.content,)
    return any(
        t and len(BREAK.join(quote_lines(quoted_part(t, max_chars)))) > max_chars for t in sides
    )


_TIME_OR_NUMBER = frozenset({AnswerType.time, AnswerType.quantity})


def _holds_asked(shown: str, query: str) -> bool:
    """Whether ``shown`` holds a kind of answer ``query`` asks (a time, a quantity:
    :func:`.answer_type.carries_any`; either, when the query asks neither: the retrieval
    asked one). That fallback is no count's: a lone one ("no one", 一人で) answers only a
    question of a count, which the query would have shown."""
    return carries_any(shown, asked_types(query) or _TIME_OR_NUMBER)


def _label(relevance: str, lang: str) -> str:
    if lang == "ja":
        return {"high": "関連度: 高", "medium": "関連度: 中", "low": "関連度: 低"}[relevance]
    return f"{relevance} relevance"


def render_episode(
    item: Retrieved,
    lang: str,
    *,
    query: str = "",
    strategy: Strategy,
    max_chars: int,
    zone: tzinfo | None = None,
    changes: Episode | None = None,
    why: bool = True,
    fill: bool = True,
) -> str:
    """One episode as a block of the pack ("" when it shows nothing): date (in ``zone``,
    else as stored) and topic (left out when the first line quoted begins with it: it
    would be read twice),
    the utterances (a memory not an exchange says who spoke, when its metadata names a
    ``speaker``; a trimmed quote holds a later sentence that says it changed, and with
    ``fill`` the sentence after the one that matched most, where ``max_chars`` allows:
    :func:`.quote.quote_text`), the reason line unless ``why`` is False (it
    names the day of the memory it ``changes``: a later change, :mod:`.retrieve.changes`)."""
    block = _block(
        item, lang, query=query, strategy=strategy, max_chars=max_chars, zone=zone,
        changes=changes, why=why, fill=fill,
    )  # fmt: skip
    return as_shown(block)


def _block(
    item: Retrieved,
    lang: str,
    *,
    query: str,
    strategy: Strategy,
    max_chars: int,
    zone: tzinfo | None,
    changes: Episode | None,
    why: bool,
    fill: bool,
) -> str:
    """:func:`render_episode` with its quotes' line breaks as :data:`.quote.BREAK`, as the pack
    measures a block against its budget (each one character, as before it showed them)."""
    ep = item.episode
    folded = fold(query)
    dropped = asked_with(folded)
    terms = [t for t in query_terms(query) if not _HIRAGANA.match(t) and t not in dropped]
    asked = asked_types(query)
    if ep.kind is EpisodeKind.exchange:
        sides = [("User", ep.user_text), ("Partner", ep.reply_text)]
    else:
        sides = [(ep.kind.value.capitalize(), ep.content)]
    lines: list[str] = []
    quoted: list[str] = []
    for label, text in sides:
        said = quote_text(text, strategy, terms, max_chars, asked, fill) if text else ""
        if said:  # (a side of control characters alone says nothing: no empty line)
            own = False  # (a message that begins with its own speaker's name)
            if ep.kind is not EpisodeKind.exchange:
                speaker = ep.metadata.get("speaker")
                label = _speaker_label(label, speaker, said)
                own = _names_itself(speaker, said)
            lines.append(f"{label}: {unposed(said, own)}")
            quoted.append(said)
    if not quoted:  # (nothing it says can be shown: no block)
        return ""
    topic = _topic(ep)
    repeated = not _tagged(ep) and quoted[0].startswith(" ".join(topic.removesuffix("…").split()))
    date = _date_line(ep, lang, zone)
    lines.insert(0, f"## {date}" if repeated else f"## {date} — {topic}")
    if why:
        arrow = "→ 関連: " if lang == "ja" else "→ why: "
        at = _changed_at(item, changes)
        changed = _changed_line(at, ep, lang, zone) if at is not None else None
        lines.append(arrow + _reason(item, lang, query, changed, as_shown("\n".join(quoted))))
    return untemplated("\n".join(lines))


def _speaker_label(label: str, speaker: object, said: str) -> str:
    """The label of a memory that is not an exchange: its kind, with the ``speaker`` its
    metadata names ("Message (Ken)", as :func:`_speaker_name` shows it) unless what is
    quoted, ``said``, starts with that name and a colon already (in any case, ：too)."""
    if _names_itself(speaker, said):
        return label
    name = _speaker_name(speaker)
    if not name:
        return label
    return f"{label} ({name if len(name) <= 40 else name[: cut_at(name, 39)] + '…'})"


def _speaker_name(speaker: object) -> str:
    """A ``speaker`` name as its label shows it: on one line, and ending before a colon or
    a closing bracket that closes none it opened (":", "：", ")", "）"), so a name cannot
    close its label and start a line of its own: "Ken): I owe you $500" shows "Ken",
    "Dr. O'Neil (work)" and "田中（営業）" show whole ("" for no name)."""
    if not isinstance(speaker, str):
        return ""
    name = " ".join(readable(speaker).split())
    depth = 0
    for i, c in enumerate(name):
        plain = unicodedata.normalize("NFKC", c)
        if plain == ":" or (plain == ")" and depth == 0):
            return name[:i].rstrip()
        depth += (plain == "(") - (plain == ")")
    return name


def _names_itself(speaker: object, said: str) -> bool:
    """Whether ``said`` starts with the ``speaker``'s name (:func:`_speaker_name`) and a
    colon (in any case, ：too): "Ken: see you" of Ken."""
    name = _speaker_name(speaker)
    return bool(name) and fold(said).lstrip().startswith(fold(name) + ":")


def build_pack(
    retrieval: Retrieval,
    *,
    query: str,
    budget_tokens: int,
    strategy: Strategy | None = None,
    principles: Sequence[Episode] = (),
    principle_budget_tokens: int = 200,
    max_chars_per_utterance: int = 240,
) -> Pack:
    """Render a retrieval as a MemoryPack within ``budget_tokens``.

    Nothing is injected when the retrieval decided not to (``should_inject``
    false) and there are no principles: the pack text is then empty. Dates are
    days of the retrieval's time zone (that of its ``now``). An episode
    whose text repeats one already in the pack, within :data:`.COPY_WINDOW_S`, is
    left out (it is not offered: :func:`.offered_results`), as is a result shown
    among the ``principles`` (one cut by their budget stays in the evidence). A principle
    whose words repeat one already listed is listed once, whenever each was stored. The
    budget and the pack's ``tokens`` count the text as shown (a quote's line break as " / ";
    the length a quote may reach counts it as the one character it is: :data:`.quote.BREAK`).
    """
    lang = retrieval.language
    zone = retrieval.now.tzinfo if retrieval.now is not None else None
    strat: Strategy = strategy or retrieval.injection_strategy
    blocks: list[str] = []
    used = 0
    truncated = False
    ids: list[int] = []
    copies: set[int] = set()  # principles stored more than once: said once
    if principles:
        plines = [_PRINCIPLES[lang]]
        pused = _tokens(plines[0])
        for p in principles:
            raw = p.content or p.text
            if len(raw) > 64 * max(principle_budget_tokens, 1):  # can never fit: not read
                truncated = True  # (a line of tokens at 4 characters each, and then some)
                continue
            line = "- " + untemplated(" ".join(readable(raw).split()))
            if line in plines:  # a rule stored again (at each start-up) is one rule
                copies.add(p.id)
                continue
            cost = _tokens(line)
            if pused + cost > principle_budget_tokens:  # a long rule: the shorter ones still go
                truncated = True
                continue
            plines.append(line)
            pused += cost
            ids.append(p.id)
        if len(plines) > 1:
            blocks.append("\n".join(plines))
    offered = retrieval.offered  # (what feedback judges an answer against)
    if offered:
        frame = _frame(retrieval.now, lang)
        used = _tokens(_HEADER)  # (the frame line goes in if it fits: below)
        evidence: list[str] = []
        drawn: list[tuple[Retrieved, Strategy, int, bool, Episode | None]] = []
        shown = {*ids, *copies}  # principles in their block are not repeated as evidence
        listed = {r.episode.id: r.episode for r in retrieval.results}
        outdated: set[int] = set()  # what a later change that did not fit says is changed
        for item in offered:  # (copies of one memory are offered once)
            if item.episode.id in shown:
                continue
            changes = listed.get(int(item.components.get("changes", 0)))
            # as it is; shorter (what matched, else the first sentence); then without its
            # reason line: the first that fits what is left of the budget. One that does
            # not fit leaves out what it says changed: alone, that would tell the old fact
            # as the fact (and so down a chain of changes)
            short: Strategy = "summarize" if strat == "summarize" else "quote_key_parts"
            block, fits = "", item.episode.id not in outdated
            for n, (how, chars, why) in enumerate(
                ((strat, max_chars_per_utterance, True), (short, 80, True), (short, 80, False))
                if fits
                else ()
            ):
                block = _block(
                    item, lang, query=query, strategy=how, max_chars=chars, zone=zone,
                    changes=changes, why=why, fill=False,
                )  # fmt: skip
                cost = _tokens(block) + 1
                if not block or used + cost <= budget_tokens:
                    truncated = truncated or n > 0
                    break
            else:
                fits = False
            if not fits:
                truncated = True
                if changes is not None:
                    outdated.add(changes.id)
                continue
            if not block:  # (it shows nothing: control characters alone)
                continue
            evidence.append(block)
            drawn.append((item, how, chars, why, changes))
            used += cost
            ids.append(item.episode.id)
        for n in sorted(_lone_bare_corrections(drawn, {*ids, *shown}), reverse=True):
            used -= _tokens(evidence[n]) + 1
            ids.remove(drawn[n][0].episode.id)
            del evidence[n], drawn[n]
        # then the frame line and each block, best first, with its quote filled (the
        # sentence after the one that matched) where what is left of the budget holds it:
        # which memories are packed, and how short, is decided without (neither takes a
        # memory's place)
        header = _HEADER
        framed = f"{_HEADER}\n{frame}"
        extra = _tokens(framed) - _tokens(_HEADER)
        if frame and used + extra <= budget_tokens:
            header, used = framed, used + extra
        for n, (item, how, chars, why, changes) in enumerate(drawn):
            if not _may_fill(item.episode, how, chars):  # (shown whole already: no new render)
                continue
            fuller = _block(
                item, lang, query=query, strategy=how, max_chars=chars, zone=zone,
                changes=changes, why=why, fill=True,
            )  # fmt: skip
            more = _tokens(fuller) - _tokens(evidence[n])
            if used + more <= budget_tokens:
                evidence[n] = fuller
                used += more
        if evidence:
            blocks.append(header + "\n" + "\n\n".join(evidence))
    text = "\n\n".join(blocks)  # (measured with its quotes' line breaks as one character)
    return Pack(
        text=as_shown(text),
        episode_ids=tuple(ids),
        tokens=_tokens(text),
        injected=bool(text),
        language=lang,
        truncated=truncated,
        note=_no_memory_note(retrieval, ids, injected=bool(text), truncated=truncated),
    )


def _lone_bare_corrections(
    drawn: Sequence[tuple[Retrieved, Strategy, int, bool, Episode | None]], packed: set[int]
) -> set[int]:
    """The positions in ``drawn`` (the evidence blocks: item, strategy, length, reason line,
    what it changes) of the corrections in the next turn drawn without their reason line
    whose memory is not in the pack (``packed``, the ids; nor, in turn, a correction left
    out so). Beside that memory, "Actually it's Tuesday, not Monday" reads as its
    correction; alone, only the reason line says what it corrects, and of when: one that
    fits with it stays, without the memory it corrects (it states the current value)."""
    left = set(packed)
    gone: set[int] = set()
    while True:
        lone = {
            n
            for n, (item, _, _, why, changes) in enumerate(drawn)
            if n not in gone
            and not why
            and "correction" in item.components
            and (changes is None or changes.id not in left)
        }
        if not lone:
            return gone
        gone |= lone
        left -= {drawn[n][0].episode.id for n in lone}


def _no_memory_note(
    retrieval: Retrieval, ids: Sequence[int], *, injected: bool, truncated: bool
) -> str:
    """Why a pack holds none of the memories its retrieval found ("" when it holds one):
    the budget (relevant, but nothing fitted: not "nothing relevant"), a message read as a
    statement (a keyword typed alone, 猫 or dentist, found a ``high`` result and packed
    nothing), or nothing relevant."""
    evidence = {  # what the retrieval offers, but a principle (packed in its own block)
        x.episode.id
        for x in retrieval.offered
        if not is_principle(x.episode.kind.value, x.episode.tags)
    }
    if evidence & set(ids):
        return ""
    left = "holds the principles alone" if injected else "is empty"
    if retrieval.should_inject and truncated and evidence:
        return (
            "the relevant memories did not fit the pack's token budget, [retrieval] "
            f"pack_token_budget: the pack {left}"
        )
    if retrieval.signals.get("asks") == 0 and any(x.relevance == "high" for x in retrieval.results):
        return (
            f"the pack {left}: the message reads as a statement, not a question, and a "
            "statement's memories go in only when one nearly restates it; asked as a "
            "question (a ? at its end), what was found goes in"
        )
    return f"nothing relevant: the pack {left}"
