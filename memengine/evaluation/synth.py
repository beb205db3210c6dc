"""Seeded synthetic chat data for the benchmark: Zipf-like English and Japanese text, vectors.

Everything is a pure function of a seed and an episode's global index, so a
corpus can be generated batch by batch (never held in memory whole) and the
same corpus can be written twice, e.g. once spread over many agents and
once in a single agent.

Text: each episode is an exchange (user line, partner reply), in English
or Japanese. Words are drawn from a Zipf–Mandelbrot distribution over a
vocabulary whose head is real words (English function words, then content
words; Japanese content words) and whose long tail is made-up words. Each
episode also has a topic; a share of its words come from that topic's own
words, and one designated *frequent word* (``today`` / ``今日``) appears in
most episodes, for the BM25 frequent-term measurement.

Vectors: not embeddings of the text, but random unit vectors clustered
around one random centroid per topic (so neighbourhoods have some
structure, as real embeddings do). Only the small benchmark sizes use the
real embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ..models import EpisodeKind, NewEpisode
from ..text import analyze

__all__ = [
    "FREQUENT_WORD_EN",
    "FREQUENT_WORD_JA",
    "Batch",
    "Corpus",
    "QuerySource",
    "query_text",
    "random_unit_vectors",
    "text_seed",
]

FREQUENT_WORD_EN = "today"
FREQUENT_WORD_JA = "今日"

_EN_FUNCTION = (
    "i the to and a my it you was that is of in for me so with but we on just have be at "
    "this not what do are he she they had like about really when all there how"
).split()

_EN_CONTENT = (
    "work job boss meeting deadline project office team email client report presentation "
    "cat dog vet food walk park home room kitchen garden apartment rent move train bus car "
    "bike station airport trip travel flight hotel beach mountain city weekend holiday summer "
    "winter spring autumn birthday wedding party dinner lunch breakfast coffee tea cake "
    "restaurant cooking recipe pasta curry sushi ramen bread wine beer friend sister brother "
    "mother father mom dad grandma family cousin neighbour partner girlfriend boyfriend kids "
    "school class exam study teacher course book novel library movie film show music concert "
    "song guitar piano band game football tennis running gym yoga swimming hiking doctor "
    "hospital dentist appointment medicine headache cold sleep tired stress anxious happy sad "
    "excited nervous angry worried lonely calm busy money salary budget shopping clothes shoes "
    "phone laptop computer app website photo camera painting drawing pottery class lesson "
    "interview promotion colleague manager plan idea problem decision news weather rain snow "
    "sunny morning evening night week month year yesterday tomorrow later soon finally again "
    "bought made went saw met called visited started finished forgot lost found cooked watched "
    "read wrote played tried wanted needed loved hated hoped missed learned taught helped "
    "great good bad new old big small nice fun hard easy late early long short favourite"
).split()

_JA_CONTENT = (
    "猫 犬 仕事 会社 上司 会議 締切 案件 転職 面接 同僚 先輩 後輩 残業 出張 給料 休み 週末 "
    "友達 家族 母 父 姉 兄 妹 弟 祖母 彼氏 彼女 子供 学校 大学 授業 試験 勉強 先生 図書館 本 "
    "映画 音楽 ライブ ギター ピアノ ゲーム サッカー テニス ジム ヨガ 散歩 公園 旅行 温泉 "
    "海 山 京都 金沢 東京 大阪 名古屋 新幹線 電車 飛行機 ホテル 誕生日 結婚式 飲み会 "
    "夕飯 朝ごはん 昼ごはん カフェ コーヒー 紅茶 ケーキ ラーメン 寿司 カレー パン 料理 "
    "レシピ 買い物 服 靴 スマホ パソコン 写真 カメラ 陶芸 絵 教室 病院 歯医者 薬 風邪 "
    "頭痛 睡眠 疲れ 不安 楽しみ 嬉しい 悲しい 緊張 心配 引っ越し 部屋 家賃 天気 雨 雪 "
    "朝 夜 来週 先週 明日 昨日 予定 計画 約束 相談 連絡 準備 練習 趣味 目標 健康 運動"
).split()

_KANJI = (
    "日一国会人年大十二本中長出三同時政事自行社見月分議後前民生連五発間対上部東者党地合市業内"
    "相方四定今回新場金員九入選立開手米力学問高代明実円関決子動京全目表戦経通外最言氏現理調体"
    "化田当八六約主題下首意法不来作性的要用制治度務強気小七成期公持野協取都和統以機平総加山思"
    "家話世受区領多県続進正安設保改数記院女初北午指権心界支第産結百派点教報済書府活原先共得解"
    "名交資予川向際査勝面委告軍文反元重近千考判認画海参売利組知案道信策集在件団別物側任引使求"
)
_KATAKANA = (
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン"
)
_PARTICLES = ("は", "が", "を", "に", "で", "と", "の", "も", "から", "まで")
_JA_ENDINGS = ("。", "です。", "ました。", "だよ。", "かな。", "ね。", "よ!", "んだ。")
_NOT_QUERY_WORDS = frozenset([*_EN_FUNCTION, FREQUENT_WORD_EN, FREQUENT_WORD_JA])
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "sh", "ch", "qu"]

EPOCH = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
SESSION = 8
SESSION_STEP_S = 120


def random_unit_vectors(rng: np.random.Generator, n: int, dim: int) -> npt.NDArray[np.float32]:
    """``n`` random float32 rows of unit length (uniform on the sphere)."""
    out = rng.standard_normal((n, dim), dtype=np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _zipf_cdf(n: int, exponent: float, offset: float) -> npt.NDArray[np.float64]:
    ranks = np.arange(1, n + 1, dtype=np.float64)
    weights = 1.0 / (ranks + offset) ** exponent
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return cdf


def _pseudo_en(rng: np.random.Generator, n: int) -> list[str]:
    seen = set(_EN_FUNCTION) | set(_EN_CONTENT)
    out: list[str] = []
    while len(out) < n:
        k = int(rng.integers(2, 4))
        word = "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), k))
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _pseudo_ja(rng: np.random.Generator, n: int) -> list[str]:
    seen = set(_JA_CONTENT)
    out: list[str] = []
    while len(out) < n:
        if rng.random() < 0.6:
            k = int(rng.integers(2, 4))
            word = "".join(_KANJI[int(i)] for i in rng.integers(0, len(_KANJI), k))
        else:
            k = int(rng.integers(3, 6))
            word = "".join(_KATAKANA[int(i)] for i in rng.integers(0, len(_KATAKANA), k)) + "ー"
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


@dataclass(frozen=True)
class _Model:
    """The vocabulary and topic model of a corpus (a function of its seed)."""

    en: npt.NDArray[np.object_]
    ja: npt.NDArray[np.object_]
    en_cdf: npt.NDArray[np.float64]
    ja_cdf: npt.NDArray[np.float64]
    topic_cdf: npt.NDArray[np.float64]
    en_topic: npt.NDArray[np.int64]
    ja_topic: npt.NDArray[np.int64]
    centroids: npt.NDArray[np.float32]


@dataclass(frozen=True)
class QuerySource:
    """An episode picked to derive a benchmark query from: its words and its vector."""

    index: int
    language: str
    words: tuple[str, ...]
    vector: npt.NDArray[np.float32]


@dataclass
class Batch:
    """One generated batch: episodes with their search texts and vectors, and query sources."""

    episodes: list[NewEpisode]
    search_texts: list[str]
    vectors: npt.NDArray[np.float32]
    texts: list[str]
    sources: list[QuerySource] = field(default_factory=list)


@dataclass(frozen=True)
class Corpus:
    """A seeded synthetic corpus of ``size`` exchanges spread over ``agents`` agents.

    Episode ``j`` belongs to agent ``j % agents`` (agents talk at the same
    time, round-robin) unless ``grouped``, where agent ``j // per_agent``
    (each agent's whole history written in turn, as an import would).
    """

    size: int
    dimension: int = 512
    agents: int = 1
    grouped: bool = True
    seed: int = 7
    agent_prefix: str = "bench"
    ja_share: float = 0.3
    frequent_share: float = 0.85
    span_days: float = 300.0
    topics: int = 48
    topic_word_share: float = 0.35
    en_vocab: int = 30_000
    ja_vocab: int = 12_000
    vector_noise: float = 1.1

    # -- the vocabulary and the topic model (a function of the seed only) --------------------
    @cached_property
    def _model(self) -> _Model:
        rng = np.random.default_rng([self.seed, 0xC0FFEE])
        en = list(_EN_FUNCTION) + list(dict.fromkeys(_EN_CONTENT))
        en += _pseudo_en(rng, self.en_vocab - len(en))
        ja = list(dict.fromkeys(_JA_CONTENT))
        ja += _pseudo_ja(rng, self.ja_vocab - len(ja))
        n_func = len(_EN_FUNCTION)
        en_topic = np.stack(
            [rng.choice(np.arange(n_func, 3000), 40, replace=False) for _ in range(self.topics)]
        )
        ja_topic = np.stack([rng.choice(2000, 40, replace=False) for _ in range(self.topics)])
        return _Model(
            en=np.array(en, dtype=object),
            ja=np.array(ja, dtype=object),
            en_cdf=_zipf_cdf(len(en), 1.07, 2.7),
            ja_cdf=_zipf_cdf(len(ja), 1.07, 2.7),
            topic_cdf=_zipf_cdf(self.topics, 0.8, 1.0),
            en_topic=en_topic,
            ja_topic=ja_topic,
            centroids=random_unit_vectors(rng, self.topics, self.dimension),
        )

    def agent_of(self, index: int) -> str:
        """The agent that episode ``index`` belongs to."""
        if self.agents == 1:
            return self.agent_prefix
        if self.grouped:
            per = -(-self.size // self.agents)
            return f"{self.agent_prefix}{index // per:05d}"
        return f"{self.agent_prefix}{index % self.agents:05d}"

    def agent_names(self) -> list[str]:
        """Every agent name, in order."""
        if self.agents == 1:
            return [self.agent_prefix]
        return [f"{self.agent_prefix}{a:05d}" for a in range(self.agents)]

    def _position(self, index: int) -> tuple[int, int]:
        """Episode ``index``'s position in its agent's history, and that history's length."""
        if self.agents == 1:
            return index, self.size
        if self.grouped:
            per = -(-self.size // self.agents)
            a = index // per
            return index - a * per, min(self.size, (a + 1) * per) - a * per
        a = index % self.agents
        return index // self.agents, len(range(a, self.size, self.agents))

    def occurred_at(self, index: int) -> datetime:
        """When episode ``index`` happened, in its agent's history of ``span_days`` days.

        An agent talks in sessions of ``SESSION`` exchanges two minutes apart;
        its sessions are spread evenly over the span, which ends one hour
        before :data:`EPOCH`. Every agent's history covers the whole span.
        """
        local, n = self._position(index)
        sessions = max(1, -(-n // SESSION))
        session, turn = divmod(local, SESSION)
        span = self.span_days * 86400.0
        offset = span * session / sessions + turn * SESSION_STEP_S
        return EPOCH - timedelta(hours=1) - timedelta(seconds=span - offset)

    def batch(self, start: int, count: int, *, sources: Sequence[int] = ()) -> Batch:
        """Episodes ``start`` … ``start+count-1``, deterministic for the seed and the range.

        ``sources`` are global indices in the range whose words and vectors
        are also returned, to build queries from.
        """
        m = self._model
        rng = np.random.default_rng([self.seed, start, count])
        count = max(0, min(count, self.size - start))
        lang_ja = rng.random(count) < self.ja_share
        topic = np.searchsorted(m.topic_cdf, rng.random(count))
        freq = rng.random(count) < self.frequent_share
        n_user = rng.integers(7, 19, count)
        n_reply = rng.integers(4, 12, count)
        width = int(n_user.max(initial=0) + n_reply.max(initial=0))
        use_topic = rng.random((count, width)) < self.topic_word_share
        u = rng.random((count, width))
        pick = rng.integers(0, 40, (count, width))

        en_words = np.where(
            use_topic, m.en_topic[topic[:, None], pick], np.searchsorted(m.en_cdf, u)
        )
        ja_words = np.where(
            use_topic, m.ja_topic[topic[:, None], pick], np.searchsorted(m.ja_cdf, u)
        )
        en_vocab, ja_vocab = m.en, m.ja
        particles = rng.integers(0, len(_PARTICLES), (count, width)).tolist()
        endings = rng.integers(0, len(_JA_ENDINGS), (count, 2)).tolist()
        freq_pos = rng.integers(0, 4, count).tolist()

        vecs = m.centroids[topic] + self.vector_noise * random_unit_vectors(
            rng, count, self.dimension
        )
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

        wanted = {s - start for s in sources if start <= s < start + count}
        episodes: list[NewEpisode] = []
        texts: list[str] = []
        out_sources: list[QuerySource] = []
        for r in range(count):
            nu, nr = int(n_user[r]), int(n_reply[r])
            if lang_ja[r]:
                words = ja_vocab[ja_words[r, : nu + nr]].tolist()
                if freq[r]:
                    words.insert(freq_pos[r], FREQUENT_WORD_JA)
                    nu += 1
                p = particles[r]
                user = "".join(w + _PARTICLES[p[i]] for i, w in enumerate(words[:nu]))
                user += _JA_ENDINGS[endings[r][0]]
                reply = "".join(w + _PARTICLES[p[i]] for i, w in enumerate(words[nu:]))
                reply += _JA_ENDINGS[endings[r][1]]
            else:
                words = en_vocab[en_words[r, : nu + nr]].tolist()
                if freq[r]:
                    words.insert(freq_pos[r], FREQUENT_WORD_EN)
                    nu += 1
                user = " ".join(words[:nu]).capitalize() + "."
                reply = " ".join(words[nu:]).capitalize() + "!"
            index = start + r
            ep = NewEpisode.model_construct(
                agent=self.agent_of(index),
                kind=EpisodeKind.exchange,
                user_text=user,
                reply_text=reply,
                content=None,
                occurred_at=self.occurred_at(index),
                sensitivity=0,
                importance=0.5,
                tags=(),
                metadata={},
                status="active",
                id=None,
                created_at=None,
                strength=1.0,
            )
            episodes.append(ep)
            texts.append(f"{user}\n{reply}")
            if r in wanted:
                content = tuple(w for w in words if w not in _NOT_QUERY_WORDS)
                lang = "ja" if lang_ja[r] else "en"
                out_sources.append(QuerySource(index, lang, content, vecs[r].copy()))
        return Batch(
            episodes, [analyze(t) for t in texts], vecs.astype(np.float32), texts, out_sources
        )

    def batches(self, batch_size: int = 2000) -> list[tuple[int, int]]:
        """The (start, count) ranges that cover the corpus in ``batch_size`` steps."""
        return [(s, min(batch_size, self.size - s)) for s in range(0, self.size, batch_size)]

    def relabel(self, episodes: Sequence[NewEpisode], start: int) -> list[NewEpisode]:
        """Episodes ``start`` … of another layout of this corpus, with this layout's agents and times."""
        return [
            ep.model_copy(
                update={
                    "agent": self.agent_of(start + i),
                    "occurred_at": self.occurred_at(start + i),
                }
            )
            for i, ep in enumerate(episodes)
        ]

    def indices_of(self, agent: str) -> range:
        """The global indices of one agent's episodes."""
        if self.agents == 1:
            return range(self.size)
        a = int(agent[len(self.agent_prefix) :])
        if self.grouped:
            per = -(-self.size // self.agents)
            return range(a * per, min(self.size, (a + 1) * per))
        return range(a, self.size, self.agents)

    def pick_sources(self, n: int, *, spread: bool = False, salt: int = 0) -> list[int]:
        """``n`` distinct episode indices to derive queries from (one per agent when ``spread``)."""
        rng = np.random.default_rng([self.seed, 0x5EED, salt])
        if spread and self.agents > 1:
            chosen = rng.choice(self.agents, min(n, self.agents), replace=False)
            out = []
            for a in chosen.tolist():
                idx = self.indices_of(f"{self.agent_prefix}{a:05d}")
                out.append(idx[int(rng.integers(0, len(idx)))])
            return sorted(out)
        n = min(n, self.size)
        return sorted(int(i) for i in rng.choice(self.size, n, replace=False))


def query_text(
    source: QuerySource, rng: np.random.Generator, *, words: int = 3, asks_time: bool = False
) -> str:
    """A short question built from a few of the source episode's content words; with
    ``asks_time`` it also asks when (so the answer-type stages run, as for a real "when"),
    in words that add no search term of weight."""
    pool = list(dict.fromkeys(source.words))
    k = min(words, len(pool))
    chosen = [pool[int(i)] for i in rng.choice(len(pool), k, replace=False)] if k else []
    if source.language == "ja":
        topic = "".join(w + "の" for w in chosen[:-1]) + (chosen[-1] if chosen else "")
        return topic + "のこと覚えてる?" + ("いつ?" if asks_time else "")
    text = "Do you remember the " + " and ".join(chosen) + "?"
    return text + (" When was it?" if asks_time else "")


def text_seed(text: str) -> int:
    """A stable 64-bit seed derived from a text (for per-text random vectors)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
