"""Query-side signals, the adaptive list weights and the should-inject rule, worked by hand."""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta, timezone

import pytest

from memengine import Memory
from memengine.config import RetrievalConfig
from memengine.models import Episode
from memengine.retrieve.adapt import ListScales, dense_spread, list_scales, reweight
from memengine.retrieve.fastpath import Candidate
from memengine.retrieve.inject import evidence_found, should_inject, top_cosine
from memengine.retrieve.signals import (
    TermStats,
    asks_memory,
    asks_the_partner,
    content_terms,
    lexical_reach,
    only_asks_to_recall,
)

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


def _cand(i: int, score: float, **comps: float) -> Candidate:
    ep = Episode.model_construct(id=i, text=f"episode {i}")
    return Candidate(ep, score, dict(comps))


def test_content_terms_drop_particles_and_stopwords() -> None:
    assert content_terms("What did the vet say?") == ["vet", "say"]
    terms = content_terms("きなこの体重って何キロ？")
    assert "体重" in terms and "キロ" in terms
    assert not any(t in terms for t in ("の", "って", "この"))


def test_idf_and_lexical_reach() -> None:
    stats = TermStats(10, {"pickle": 9, "stipend": 0, "vet": 1})
    assert stats.idf("stipend") > stats.idf("vet") > stats.idf("pickle") > 0
    assert lexical_reach(["pickle", "vet"], stats) == pytest.approx(1.0)
    assert lexical_reach(["stipend"], stats) == 0.0
    half = lexical_reach(["vet", "stipend"], stats)
    expected = stats.idf("vet") / (stats.idf("vet") + stats.idf("stipend"))
    assert half == pytest.approx(expected)
    assert lexical_reach([], stats) == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "How many HX-40s did the lab order?",
        "Remind me, what's the date again",
        "Did I ever tell you about it",
        "ルクシアって何やってる会社だって言ったっけ？",
        "発表会って何日だったかしら",
        "この前の歯医者で言われたこと、覚えてる",
        "この間言ってた歯医者",
        "こないだ言ってた歯医者",
        "例の歯医者の件",
        "この間取った休みのこと",  # この間 before 取った, 合コン: still "the other day"
        "この間合コンで会った人",
        "先日例の店に行った",  # 例の after a time word
        "昨日例の人に会った",
        "就活の流れ、最初から一回振り返りたい",  # a request to be reminded, with no question
        "引っ越しまでのこと、まとめてください。",
        "Walk me through the whole lease saga.",
        "Fill me in on the roof business, I've lost track.",
        # Japanese without a question mark, in kana, or wondering about the past
        "あの給餌器なに買ったんだったかな",
        "千夏となんで金沢やめたんだったかな",
        "少し前に話した本のタイトル",
        "だいぶ前に話したよね",
        "何回行ったの",
        "なんで行かなかったの",
        # a question ending behind a laugh, a long vowel, an emoji or a kaomoji
        "ねえねえ、猫の名前なんだったかな😅",
        "名前なんだったかなー",
        "だったかなｗ",
        "名前なんだったかな💦",
        "あれいつだったっけ(´・ω・`)",
        "いつまで続くの",
        "明日は間に合いそうか",  # そうか of a question, not the backchannel
        "大丈夫そうか",
        # "again" and "had" in a question
        "What was her name again",
        "Had I told you about Mochi?",
        "Tell me the name of that place again",
        "Say the password again",
        "again, which hotel",
        "Had we been to Kyoto before",
        # English written against Japanese (code-switching)
        "rememberあのcafe",
        "whatだったっけ、あのcafe",
        # chat without a question mark: contractions, and what comes before the question
        "what's my vet's name",
        "whats the vets name",
        "who's getting married in march",
        "where'd I put the spare key",
        "wait when is the dental cleaning",
        "and when is jen's wedding",
        "btw what was the ramen place called",
        "lol ok what was the ramen place called",
        "so tired 😩 when's the dentist",
        "そういえばたかしってお義母さんと話してくれたのかな",
    ],
)
def test_asks_memory(text: str) -> None:
    assert asks_memory(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Okay, grilled cheese time. Talk later.",
        "今日はいいお天気ね。洗濯物がよく乾きそう",
        "何か食べたいな。いつも同じものばかり",
        "It's finally warm enough to sit on my balcony.",
        # 前に as a place or a time before something; set phrases with 何, どう, いつ; か endings
        "寝る前に本を読んだ",
        "駅前に新しいパン屋さんできてた",
        "5分前に起きた",
        "何となく今日は疲れたなあ",
        "何回も言うけど好き",
        "どうしても眠い",
        "いつの間にか夜だ",
        "映画とか観たい",
        "まあいいか",
        "なんかいい感じ",
        # kana question words inside other words
        "こんなに寒いとは",
        "みんなに会えた",
        "そうなんです",
        "好きなんですよ",
        "午前に会議、事前に連絡した",
        "この間に洗濯しちゃおう",  # "meanwhile", not "the other day"
        "この間違いを直して",  # この間違い, この間隔: "this mistake", "this interval"
        "この間隔で並べて",
        "異例の暑さだね",  # 例の inside a word, and 例のごとく "as usual"
        "恒例の花見に行ってきた",
        "例のごとく寝坊した",
        "家の前に猫がいた",
        # backchannels, letting go, and set phrases with 何, いつ, どこ, どう
        "そっか",
        "ああ、そうか",
        "あーそっか",
        "なるほどそっか",
        "そっかそっか",
        "え、マジか",
        "うーん、そうか",
        "マジか",
        "仕方ないか",
        "ま、いっか",
        "何より嬉しい",
        "何しろ忙しくて",
        "いつまでも一緒にいようね",
        "どこまでも行こう",
        "どうにもならない",
        "どうりで眠いわけだ",
        # "again" of a routine, and chat that leaves out its "I"
        "Rainy day again",
        "Ugh, Monday again",
        "Had pizza for lunch",
        # a negation, an exclamation, and chat words alone
        "can't sleep again",
        "What a day",
        "lol ok",
        "anyway I made pasta",
        "oh well",
    ],
)
def test_small_talk_does_not_ask(text: str) -> None:
    assert not asks_memory(text)


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("didn’t i tell you about the vet?", True),
        ("can’t sleep", False),  # a phone's apostrophe: a negation, not "can …"
        ("ugh can’t sleep", False),
        ("wait what", False),  # a reaction: nothing after the interrogative
        ("lol how cute", False),
        ("well who cares", False),
        ("so when i got home the cat had thrown up", False),  # a clause, not a question
        ("but what i really want is a nap", False),
        ("ok will do", False),  # after chat words, only an interrogative opens a question
        ("lol was fun tho", False),
        ("love you 😘 have a good night", False),
        ("so tired ⏰ whens the dentist", True),
        ("明日晴れるのかな", False),  # musing about the future
        ("旅行って来週だったかなあ", True),  # a long vowel after かな
        # a negative auxiliary and its subject open a question; without one, chat
        ("didn't i tell you about the new job", True),
        ("don't i have a vet appointment this week", True),
        ("doesn't my sister live in osaka", True),
        ("haven't we been there before", True),
        ("薬飲んだかな", True),
        ("元気ですかあ", True),
        # said, not asked: rhetoric, and an exclamation with a clause
        ("isn't it crazy how fast the year went", False),
        ("don't you just hate mondays", False),
        ("isn't she lovely", False),
        ("what a great time we had when ken visited", False),
        ("what a day, which is why I'm ordering pizza", False),
        ("omg what a trip, where did we stay", True),  # after a chat word too
        ("lol what a day, what time is the dentist tomorrow", True),
        ("didn't you say the party was on saturday", True),
        ("荷物まだかな", False),  # musing, set phrases, a backchannel, an intention
        ("なんだかなあ…", False),
        ("そうですかあ", False),
        ("じゃあ寝ますかあ", False),
        ("didn't sleep well", False),
        ("wasn't my best day", False),
        ("couldn't find my keys", False),
        ("could've been worse", False),  # an auxiliary's contraction says, not asks
        ("should've brought an umbrella", False),
        ("What a great trip, where did we stay", True),  # an exclamation, then a question
        ("月曜日かあ", False),  # a sigh
    ],
)
def test_chat_questions_and_what_only_looks_like_them(text: str, asks: bool) -> None:
    assert asks_memory(text) is asks


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # an English word run straight into Japanese is a name or a noun, not an opener
        ("Willが遊びに来た", False),
        ("Ｗｉｌｌが遊びに来た", False),
        ("Canのビール飲んだ", False),
        ("Whoのライブ行った", False),
        ("Whyって言われても困る", False),
        ("Which家電がいいかな", False),
        ("Will Smithの新作観た", False),
        ("Do it yourselfで棚作った", False),
        ("lol what time is itって聞かれた", False),
        # spaced from the Japanese, or leading on to it, it opens a question
        ("Where is 渋谷", True),
        ("when is健太の誕生日", True),
        ("btw what time is the 歯医者", True),
        ("Willって誰だっけ", True),  # a Japanese question about the name
        ("Will came over yesterday?", True),
        # an English question run straight into its Japanese words still asks
        ("what's明日の予定", True),
        ("when’s健太の誕生日", True),
        ("where'd I put鍵", True),
        ("where did I put鍵", True),
        ("Do you know翔太の誕生日", True),
        ("what was the name of that店", True),
        ("whatsアプリ入れた", False),  # (WhatsApp: no apostrophe, no contraction)
        ("Do itで直した", False),
    ],
)
def test_an_english_word_inside_japanese_opens_no_question(text: str, asks: bool) -> None:
    assert asks_memory(text) is asks


def test_a_long_laugh_is_read_in_time() -> None:
    """A run of ｗ before other text once cost time doubling with each ｗ (30 of them:
    minutes, and the whole process stalled)."""
    start = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    assert not asks_memory("まじで" + "ｗ" * 40 + "やばい")
    assert not asks_memory("草" + "w" * 50_000 + " ok")
    assert time.thread_time() - start < 2.0


@pytest.mark.parametrize(
    ("text", "partner"),
    [
        ("hey how are you", True),
        ("how are you doing?", True),
        ("and you?", True),
        ("how are u", True),
        ("what's up", True),  # a greeting asks how things are
        ("how's it going", True),
        ("how's your day", True),
        ("how was your weekend?", True),
        ("how was my weekend?", False),  # the user's own
        ("how are things with Sarah?", False),
        ("is it today?", False),  # about a thing: a follow-up, not a greeting
        ("what day was that?", False),
        ("what's happening this weekend?", False),
        ("how's she doing?", False),
        ("what do you know about her?", False),
        ("how's 彼女 doing?", False),
        ("what is it?", False),  # a follow-up
        ("how is it?", False),
        ("hey how are you (・ω・)", True),  # a kaomoji is no Japanese
        ("hi how are you (^_^)ﾉ", True),
        ("how's it going (っ´ω`)っ", True),
        ("do you remember?", False),  # a recall cue
        ("what did you say about the vet?", False),  # a thing of its own
        ("when?", False),  # a follow-up, not to "you"
        ("what was it again?", False),
    ],
)
def test_a_question_only_to_the_partner(text: str, partner: bool) -> None:
    assert asks_the_partner(text) is partner


def test_dense_spread() -> None:
    cands = [_cand(i, 1.0, knn_rank=float(i), cosine=0.5 - 0.05 * (i - 1)) for i in range(1, 5)]
    cands.append(_cand(9, 1.0, bm25_rank=1.0, cosine=0.9))  # not in the vector list
    assert dense_spread(cands, 4) == pytest.approx(0.15)
    assert dense_spread(cands, 5) is None


def test_list_scales() -> None:
    cfg = RetrievalConfig()
    full = list_scales(cfg, reach=1.0, spread=None)
    assert full == ListScales()
    none = list_scales(cfg, reach=0.0, spread=None)
    assert none.bm25 == pytest.approx(cfg.reach_floor)
    assert none.cosine == pytest.approx(cfg.reach_cosine_weight)
    half = list_scales(cfg, reach=cfg.reach_full / 2, spread=None)
    assert half.bm25 == pytest.approx(cfg.reach_floor + (1 - cfg.reach_floor) / 2)
    assert list_scales(cfg, reach=1.0, spread=cfg.spread_low).knn == 1.0
    wide = list_scales(cfg, reach=1.0, spread=1.0)
    assert wide.knn == pytest.approx(1 + cfg.spread_boost)
    assert wide.cosine == pytest.approx(cfg.spread_cosine_weight)
    mid = (cfg.spread_low + cfg.spread_high) / 2
    assert list_scales(cfg, reach=1.0, spread=mid).knn == pytest.approx(1 + cfg.spread_boost / 2)
    off = cfg.model_copy(update={"adaptive_weights": False})
    assert list_scales(off, reach=0.0, spread=1.0) == ListScales()


def test_reweight_rescales_each_list() -> None:
    cfg = RetrievalConfig(rrf_k=10, knn_weight=0.5, bm25_weight=1.0)
    lexical = _cand(1, 1.0 / 11, bm25_rank=1.0, cosine=0.0)
    dense = _cand(2, 0.5 / 11, knn_rank=1.0, cosine=0.5)
    same = reweight([lexical, dense], cfg, ListScales())
    assert [c.episode.id for c in same] == [1, 2]
    out = reweight([lexical, dense], cfg, ListScales(knn=2.0, bm25=0.25, cosine=0.2))
    assert [c.episode.id for c in out] == [2, 1]
    assert out[0].score == pytest.approx(1.0 / 11 + 0.2 * 0.5)
    assert out[1].score == pytest.approx(0.25 / 11)


def test_should_inject() -> None:
    cfg = RetrievalConfig()
    agree = [_cand(1, 1.0, knn_rank=2.0, bm25_rank=3.0, cosine=0.1)]
    close = [_cand(1, 1.0, knn_rank=1.0, cosine=0.3)]
    weak = [_cand(1, 1.0, knn_rank=1.0, cosine=0.2), _cand(2, 0.5, bm25_rank=1.0, cosine=0.1)]
    restated = [_cand(1, 1.0, knn_rank=1.0, bm25_rank=1.0, cosine=0.75)]
    assert evidence_found(agree, cfg) and evidence_found(close, cfg)
    assert not evidence_found(weak, cfg)
    assert should_inject(agree, cfg, asks=True)
    assert not should_inject(weak, cfg, asks=True)
    assert not should_inject(agree, cfg, asks=False)  # small talk needs a near restatement
    assert should_inject(restated, cfg, asks=False)
    assert top_cosine([], cfg) == 0.0


def test_document_counts(mem: Memory) -> None:
    mem.add_exchange("Pickle ate a sock", "Oh no", occurred_at=T0)
    # a day apart: not neighbours (a neighbour's words count for the episode too)
    mem.add_exchange("Pickle learned sit", "Good dog", occurred_at=T0 + timedelta(days=1))
    n, counts = mem.store.document_counts(["pickle", "sock", "stipend", "pickle", ""])
    assert n == 2
    assert counts == {"pickle": 2, "sock": 1, "stipend": 0}


def test_retrieval_reports_reach_time_and_skips_small_talk(mem: Memory) -> None:
    mem.add_exchange("The laundry dried fast in the sun", "Nice", occurred_at=T0)
    r = mem.retrieve("The laundry dried fast in the sun")
    assert "reach" in r.timings_ms
    asked = mem.retrieve("When did the laundry dry fast?")
    assert asked.should_inject
    assert math.isfinite(r.timings_ms["reach"])


@pytest.mark.parametrize(
    ("text", "only"),
    [
        ("What did I do last week?", True),
        ("Hey, where do I live again?", True),
        ("3月は何してたっけ？", True),
        ("ねえ、私の好きな食べ物って何だっけ？", True),
        ("ヨガ教室って何曜日だっけ", True),  # (no question mark: the ending asks)
        # a question that tells something, or one beside a statement
        ("Is it normal that my knee still hurts after the surgery on the 21st?", False),
        ("膝の手術のあと、まだ痛いのって普通？", False),
        ("Baked bread today. What did I do last week?", False),
        ("今日は面接だった、どうだったと思う？", False),
        ("昨日パン焼いた。先週何してたっけ？", False),
        ("Went hiking on Mount Rokko with Ken", False),
        ("What did I do last week? " + "x" * 200, False),  # too long to be a bare question
        # recall forms, beside chat words that tell nothing
        ("Hmm, what did I do?", True),
        ("What's my favourite food again?", True),
        ("Do you remember what I ate on Friday?", True),
        ("Remind me where I parked?", True),
        ("Who was that guy again?", True),
        ("私の好きな食べ物って何だっけ？", True),
        ("ヨガ教室って何曜日だっけ？", True),
        ("先週何してた？", True),
        # an interrogative is no recall form: these tell, plan or request
        ("Any idea why my knee hurts after running 10k on Sunday?", False),
        ("Why does my knee still hurt after the hike?", False),
        ("Remember when I ran my first marathon on Sunday?", False),
        ("Do you remember I started a new job at Google?", False),
        ("What should I cook for Ken's birthday party on Saturday?", False),
        ("Can you remind me to call mom tomorrow?", False),
        ("Who do you think won the match I played yesterday?", False),
        ("How do I make pasta?", False),
        ("なんで昨日の面接で落ちたんだろう？", False),
        ("どうして膝が痛いんだろう、昨日ハーフマラソン走ったから？", False),
        ("覚えてる？先週京都に行ったの", False),
        # a recall form beside an event of the user's own tells it
        ("What did I eat after the hike again?", False),
        ("ハーフマラソン走ったあと何食べたっけ？", False),
        ("猫を拾ったって言ったっけ？", False),
        # (a time set off by a comma is part of the question; a clause that tells is not)
        ("Last week, what did I do?", True),
        ("Yesterday, what did I eat?", True),
        ("In March, what did I do?", True),
        ("先週末、何してた？", True),
        ("3月は、何してたっけ", True),
        ("After the concert, what did I do?", False),
        ("Last week I went to Kyoto, what did I do?", False),
        ("Kyoto, what did I do?", False),
        ("On Monday, what did I do?", True),
        ("月曜、何したっけ？", True),
        ("月曜日は、何したっけ？", True),
        ("Today, what did I do?", True),
        ("Earlier today, what did I eat?", True),
        ("On June 6, what did I do?", True),
        ("On the 19th, what did I do?", True),
        ("Recently, what did I say?", True),
        ("Yesterday morning, what did I do?", True),
        ("On the way, what did I do?", False),
        ("At the gym, what did I do?", False),
        ("Monday I went to Kyoto, what did I do?", False),
        ("月曜の夜、何したっけ？", True),  # (a part of the day after a day)
        ("昨日の夜、何したっけ？", True),
        ("日曜日の午後、何してた？", True),
        ("At 3pm, what did I do?", True),
        ("This weekend, what did I do?", True),
        ("Over the weekend, what did I do?", True),
        ("夜ご飯、何食べたっけ？", False),
        ("Over the bridge, what did I do?", False),
        ("週末、何してたっけ？", True),  # (a weekend or a clock time, as in English)
        ("今週末、何してたっけ？", True),
        ("週末は、何してたっけ？", True),
        ("土日、何してたっけ？", True),
        ("15時、何してたっけ？", True),
        ("午後3時、何してたっけ？", True),
        ("3時に、何してたっけ？", True),
        ("昨日の15時、何してたっけ？", True),
        ("At 15:00, what did I do?", True),
        ("3時間、何してたっけ？", False),  # (a while, no time)
        ("15時に渋谷で友達と会った、何してたっけ？", False),
        ("週末に京都に行った、何してたっけ？", False),
        ("At 15:00 I met Ken, what did I do?", False),
    ],
)
def test_only_asks_to_recall(text: str, only: bool) -> None:
    assert only_asks_to_recall(text) is only


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # どこで and 何で ask where and how, typed without a ？ as chat types them
        ("焼肉どこで食べた", True),
        ("佐藤くんとラーメンどこで食べたの", True),
        ("傘どこで買った", True),
        ("歯医者どこで予約した", True),
        ("何で行ったの", True),
        ("どこで会ったの", True),
        # … but でも, であれ and でしょうね make them indefinites or musing, as before
        ("どこでもいい", False),
        ("何でもいい", False),
        ("誰でもいいから来てほしい", False),
        ("何であれ楽しかった", False),
        ("何でしょうね、この暑さは", False),
        # 教えて in kana asks as in kanji; a topic and its value stay a statement
        ("おしえて〜", True),
        ("昨日の話おしえて", True),
        ("猫の名前はミケ", False),
    ],
)
def test_where_and_how_without_a_question_mark(text: str, asks: bool) -> None:
    """The lookahead that keeps どこでも and 何でも from asking once rejected every で after
    an interrogative: 「焼肉どこで食べた」 asked nothing, and nothing was injected."""
    assert asks_memory(text) is asks


def test_where_asked_without_a_question_mark_injects(mem: Memory) -> None:
    """「焼肉どこで食べた」 without its ？ injects the memory it asks about, as with it."""
    told = mem.add_exchange("昨日は新宿の叙々苑で焼肉を食べた", "いいね", occurred_at=T0)
    mem.add_exchange("猫が朝からずっと寝てる", "かわいい", occurred_at=T0 + timedelta(days=2))
    bare = mem.retrieve("焼肉どこで食べた", record=False)
    marked = mem.retrieve("焼肉どこで食べた？", record=False)
    assert bare.should_inject and marked.should_inject
    assert bare.results[0].episode.id == marked.results[0].episode.id == told
    assert "叙々苑" in mem.pack(bare).text


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # an interrogative then …ても a few characters on concedes: "wherever", "however"
        ("何で行っても同じ", False),
        ("どこで食べても美味しい", False),
        ("どこで寝ても同じ", False),
        ("どこ行っても混んでる", False),
        ("何をしても駄目", False),
        ("このパン、どこで食べても美味しい", False),
        ("誰に教えてもらったの", True),  # …てもらった asks who
        ("どこで撮ってもらった", True),
        ("何で行っても同じだけど、どこで乗り換える", True),  # a question of its own after it
        # an embedded question the speaker knows, has decided or does not know
        ("何で怒ってるのか分からない", False),
        ("何を言ってるのか全然分からない", False),
        ("誰が来るか分からない", False),
        ("どこで働くかまだ決めてない", False),
        ("どこで働くかはまだ決めてない", False),
        ("どこに行くか決めてない", False),
        ("どこで降りればいいか分かった", False),
        ("誰が来るか知ってる", True),  # asks whether the partner knows
        # not knowing a past of one's own asks to be reminded, as 覚えてない and 忘れた do
        ("鍵どこに置いたか分からない", True),
        ("鍵どこに置いたかまだ分からない", True),
        ("何を食べたか覚えてない", True),
        ("どこで買ったか忘れた", True),
        # an offer to tell, or thanks for being told, requests nothing; 教えて as before
        ("おしえてあげる", False),
        ("おしえてあげるね、今日ね、ジム行ってきた", False),
        ("教えてあげる", False),
        ("おしえてくれてありがとう", False),
        ("番号を教えてもらった", False),
        ("教えてくれない", True),
        ("焼肉どこで食べたか教えて", True),
        ("焼肉どこで食べた", True),
        ("何で行ったの", True),
        ("どこで会ったの", True),
    ],
)
def test_a_concession_or_an_embedded_question_asks_nothing(text: str, asks: bool) -> None:
    """どこで and 何で asking without a ？ made 「どこで食べても美味しい」, 「何で行っても同じ」,
    「どこで働くかまだ決めてない」 and 「おしえてあげる」 questions, and memories were injected
    into statements: an interrogative conceding (…ても) or inside a question the speaker says
    they know or have decided asks nothing, nor does an offer to tell."""
    assert asks_memory(text) is asks


def test_a_concession_injects_nothing(mem: Memory) -> None:
    """「このパン、どこで食べても美味しい」 packs no memory of where something was eaten (the
    pack says the message reads as a statement), nor 「大阪までは何で行っても同じくらいだよ」 the
    plan of going to Kyoto by Shinkansen; 「焼肉どこで食べた」 still packs its memory."""
    ramen = mem.add_exchange("このラーメン屋どこで見つけたんだっけ", "駅前だよ", occurred_at=T0)
    told = mem.add_exchange(
        "焼肉は新宿の叙々苑で食べた", "いいね", occurred_at=T0 + timedelta(days=1)
    )
    kyoto = mem.add_exchange(
        "京都には新幹線で行く予定", "楽しみ", occurred_at=T0 + timedelta(days=2)
    )
    for statement in ("このパン、どこで食べても美味しい", "大阪までは何で行っても同じくらいだよ"):
        said = mem.retrieve(statement, record=False)
        pack = mem.pack(said, query=statement)
        assert said.signals["asks"] == 0, statement
        assert not {ramen, told, kyoto} & set(pack.episode_ids), statement
    asked = mem.retrieve("焼肉どこで食べた", record=False)
    assert told in mem.pack(asked).episode_ids
