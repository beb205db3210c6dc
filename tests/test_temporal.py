"""The offline time-expression parser (Japanese and English) and the window filter."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine.retrieve.temporal import (
    find_time_expressions,
    parse_iso_range,
    parse_time_window,
    time_is_asked,
    union,
    widen,
    window_filters,
)
from memengine.store.filters import Filters

JST = timezone(timedelta(hours=9))
NOW = datetime(2026, 5, 20, 15, 0, tzinfo=JST)  # Wednesday 20 May 2026, 15:00 in Tokyo


def d(y: int, m: int, day: int, h: int = 0) -> datetime:
    return datetime(y, m, day, h, tzinfo=JST)


CASES: list[tuple[str, tuple[datetime, datetime] | None]] = [
    # Japanese: days, weeks, months, years
    ("昨日の話の続きなんだけど", (d(2026, 5, 19), d(2026, 5, 20))),
    ("きのう言ってたやつ", (d(2026, 5, 19), d(2026, 5, 20))),
    ("一昨日のこと覚えてる?", (d(2026, 5, 18), d(2026, 5, 19))),
    ("先週話したカフェどこだっけ", (d(2026, 5, 11), d(2026, 5, 18))),
    ("先々週の会議", (d(2026, 5, 4), d(2026, 5, 11))),
    ("先週末どこ行ったっけ", (d(2026, 5, 16), d(2026, 5, 18))),
    ("先週の金曜に言った本", (d(2026, 5, 15), d(2026, 5, 16))),
    ("今週の月曜に話したこと", (d(2026, 5, 18), d(2026, 5, 19))),
    ("先週金曜日に行った店", (d(2026, 5, 15), d(2026, 5, 16))),  # without の: the day too
    # months and days in kanji numerals, as in digits
    ("三月十日って何してたっけ？", (d(2026, 3, 10), d(2026, 3, 11))),
    ("二月二十日に会った", (d(2026, 2, 20), d(2026, 2, 21))),
    ("四月に何してた？", (d(2026, 4, 1), d(2026, 5, 1))),
    ("去年の十二月は忙しかった", (d(2025, 12, 1), d(2026, 1, 1))),
    ("一月前に会った", None),  # (a month ago, in a form the rules do not read: not January)
    ("三月ほど前かな", None),
    ("五月雨が降った", None),
    ("二月三十日に", None),
    # a weekday a plan was moved or set to is not the past one
    ("猫の病院、金曜じゃなくて木曜に変更になった", None),
    ("会議が金曜に決まった", None),
    ("試合が延期になった、土曜に", None),
    # … but a past deed on a weekday names it, as before
    ("金曜日にパスワードを変更した。", (d(2026, 5, 15), d(2026, 5, 16))),
    ("宿題は金曜日にしたよ。", (d(2026, 5, 15), d(2026, 5, 16))),
    ("金曜日になって、やっと晴れた。", (d(2026, 5, 15), d(2026, 5, 16))),
    ("三年前の十二月に結婚した。", (d(2023, 12, 1), d(2024, 1, 1))),
    ("一月ぶりに彼に会った。", None),  # (months counted, not named)
    ("三月分の家賃", None),
    ("一月以上会ってない", None),
    ("土曜日にしたバーベキュー楽しかった", (d(2026, 5, 16), d(2026, 5, 17))),
    ("今週月曜の話", (d(2026, 5, 18), d(2026, 5, 19))),
    ("一昨昨日のこと", (d(2026, 5, 17), d(2026, 5, 18))),  # not 昨日's day
    ("さきおとといの話", (d(2026, 5, 17), d(2026, 5, 18))),  # not おととい's
    ("先月の旅行の写真", (d(2026, 4, 1), d(2026, 5, 1))),
    ("先々月", (d(2026, 3, 1), d(2026, 4, 1))),
    ("今月", (d(2026, 5, 1), NOW)),
    ("せんしゅう行った店どこ？", (d(2026, 5, 11), d(2026, 5, 18))),  # kana, as typed casually
    ("せんげつの旅行", (d(2026, 4, 1), d(2026, 5, 1))),
    ("きょねんはどうだった", (d(2025, 1, 1), d(2026, 1, 1))),
    ("大相撲のせんしゅうらく見た？", None),  # 千秋楽, the tournament's last day: no week
    ("せんせんしゅうの映画", (d(2026, 5, 4), d(2026, 5, 11))),  # 先々週, not せんしゅう's week
    ("せんせんげつ行った店", (d(2026, 3, 1), d(2026, 4, 1))),
    ("せんしゅうまつに行った店", (d(2026, 5, 16), d(2026, 5, 18))),
    ("いっさくねんの夏", (d(2024, 6, 1), d(2024, 9, 1))),
    ("きょねんの夏に行った海", (d(2025, 6, 1), d(2025, 9, 1))),  # as 去年の夏: the season
    ("きょねんのなつ", (d(2025, 6, 1), d(2025, 9, 1))),
    ("さくねんの12月", (d(2025, 12, 1), d(2026, 1, 1))),
    ("せんしゅうの金曜に言った本", (d(2026, 5, 15), d(2026, 5, 16))),  # the day, not the week
    ("「せんしゅう、」って言ったよね", (d(2026, 5, 11), d(2026, 5, 18))),
    ("でもきょねんはね", (d(2025, 1, 1), d(2026, 1, 1))),
    ("さくねんから続けてる", (d(2025, 1, 1), NOW)),
    ("あのせんしゅうまいね", None),  # 選手うまい: kana inside longer words name no time
    ("せんしゅうだいがくに行った", None),  # 専修大学
    ("よせんしゅうりょうした", None),  # 予選終了
    ("ませんしゅうかん", None),
    ("ぱっさくねんど", None),
    ("ききょねん", None),
    # kana time words with no particle at either side: hiragana has no edges, so only the
    # longer words a time word sits in are refused
    ("せんしゅうどこいった？", (d(2026, 5, 11), d(2026, 5, 18))),
    ("たぶんせんしゅうだった", (d(2026, 5, 11), d(2026, 5, 18))),
    ("せんしゅうみた映画", (d(2026, 5, 11), d(2026, 5, 18))),
    ("せんしゅうまつどこいった？", (d(2026, 5, 16), d(2026, 5, 18))),
    ("せんせんしゅうまつ", (d(2026, 5, 4), d(2026, 5, 11))),  # as 先々週末: that week
    ("もうきょねんのことじゃん", (d(2025, 1, 1), d(2026, 1, 1))),
    ("きょねんいった", (d(2025, 1, 1), d(2026, 1, 1))),
    ("きょねんどこいった？", (d(2025, 1, 1), d(2026, 1, 1))),
    ("せんげつかったくつ", (d(2026, 4, 1), d(2026, 5, 1))),
    ("あのせんしゅううまいね", None),  # 選手うまい
    ("やきゅうせんしゅうになりたい", None),  # 野球選手
    ("せんしゅうけんでしあい", None),  # 選手権
    ("いきませんげつようびは", None),  # ません + 月曜
    ("さくねんど", None),  # 昨年度: a fiscal year, April to March
    ("けっさくねんだ", None),  # 傑作
    ("きょねんのなつかしいはなし", (d(2025, 1, 1), d(2026, 1, 1))),  # 懐かしい: the year only
    ("去年の夏に行った海", (d(2025, 6, 1), d(2025, 9, 1))),
    ("去年はどうだった", (d(2025, 1, 1), d(2026, 1, 1))),
    ("おととしの冬", (d(2024, 12, 1), d(2025, 3, 1))),
    ("3日前に言ったよね", (d(2026, 5, 16), d(2026, 5, 19))),
    ("三日前", (d(2026, 5, 16), d(2026, 5, 19))),
    ("2週間前", (d(2026, 5, 3, 15), d(2026, 5, 9, 15))),
    ("数日前", (d(2026, 5, 14), d(2026, 5, 19))),
    ("3月に", (d(2026, 3, 1), d(2026, 4, 1))),
    ("2025年の3月", (d(2025, 3, 1), d(2025, 4, 1))),
    ("5月3日の件", (d(2026, 5, 3), d(2026, 5, 4))),
    ("先週から調子が悪い", (d(2026, 5, 11), NOW)),
    ("ゴールデンウィークの旅行", (d(2026, 4, 29), d(2026, 5, 7))),
    ("夏休みの思い出", (d(2025, 6, 1), d(2025, 9, 1))),
    # English
    ("yesterday", (d(2026, 5, 19), d(2026, 5, 20))),
    ("What did I tell you last night?", (d(2026, 5, 19, 17), d(2026, 5, 20, 4))),
    ("the day before yesterday", (d(2026, 5, 18), d(2026, 5, 19))),
    ("what was that cafe from last week", (d(2026, 5, 11), d(2026, 5, 18))),
    ("last weekend", (d(2026, 5, 16), d(2026, 5, 18))),
    ("Last month I said", (d(2026, 4, 1), d(2026, 5, 1))),
    ("last year", (d(2025, 1, 1), d(2026, 1, 1))),
    ("Remember last summer?", (d(2025, 6, 1), d(2025, 9, 1))),
    ("last winter", (d(2025, 12, 1), d(2026, 3, 1))),
    ("two months ago", (d(2026, 3, 5, 15), d(2026, 4, 4, 15))),
    ("a couple of weeks ago", (d(2026, 5, 3, 15), d(2026, 5, 9, 15))),
    ("3 days ago", (d(2026, 5, 16), d(2026, 5, 19))),
    ("a few days ago", (d(2026, 5, 14), d(2026, 5, 19))),
    ("two months back", (d(2026, 3, 5, 15), d(2026, 4, 4, 15))),
    ("a stretch a few months back", (d(2025, 11, 16, 15), d(2026, 3, 26, 15))),
    ("He came back home", None),
    ("in March", (d(2026, 3, 1), d(2026, 4, 1))),
    ("on March 5th", (d(2026, 3, 5), d(2026, 3, 6))),
    ("on 5 May", (d(2026, 5, 5), d(2026, 5, 6))),
    ("last Friday", (d(2026, 5, 15), d(2026, 5, 16))),
    ("since last month", (d(2026, 4, 1), NOW)),
    ("in 2025", (d(2025, 1, 1), d(2026, 1, 1))),
    ("on 2026-03-04", (d(2026, 3, 4), d(2026, 3, 5))),
    ("the past week", (d(2026, 5, 13, 15), NOW)),
    # a stretch until now, counted
    ("in the last 3 days", (NOW - timedelta(days=3), NOW)),
    ("over the past two weeks", (NOW - timedelta(days=14), NOW)),
    ("the past 6 months", (d(2025, 11, 20, 15), NOW)),
    ("the last two weeks of June", None),  # the final ones
    ("ここ数日", (NOW - timedelta(days=4), NOW)),
    ("ここ1週間", (NOW - timedelta(days=7), NOW)),
    ("the past couple weeks", (NOW - timedelta(days=14), NOW)),
    # not a stretch until now: ahead, a school year, a part of something, "at last"
    ("この1週間が勝負", None),
    ("この1年でやりたいこと", None),
    ("ここ1週間後に結果が出ます", None),
    ("この2年生の担任になった", None),
    ("過去2年度の予算", None),
    ("at last a day off!", None),
    ("what have I done these past two weeks?", (NOW - timedelta(days=14), NOW)),
    ("last 10 days were busy", (NOW - timedelta(days=10), NOW)),
    ("last 10 days", None),  # no verb in the past: the verb "last", or a plan
    ("in the last 3 days until now", (NOW - timedelta(days=3), NOW)),
    ("the last two weeks in April", (d(2026, 4, 1), d(2026, 5, 1))),
    ("the last 5 days until the exam", None),
    ("These batteries last two weeks", None),  # the verb
    ("It didn't last 3 months", None),
    ("at last two days off!", None),
    ("Hey, last two weeks I was sick", (NOW - timedelta(days=14), NOW)),
    ("summarize my last 7 days", (NOW - timedelta(days=7), NOW)),
    ("The trip will last 10 days", None),
    ("the last 5 days before the exam", None),
    ("過去2ヶ月", (d(2026, 3, 20, 15), NOW)),
    ("ここ3日間で", (NOW - timedelta(days=3), NOW)),
    ("この3月", (d(2026, 3, 1), d(2026, 4, 1))),  # a month, not three
    ("this past weekend", (d(2026, 5, 16), d(2026, 5, 18))),
    ("what are you doing over the weekend?", None),  # ahead as often
    # a date of a named year, an era, a latest weekday
    ("12月24日に何してたっけ", None),  # ahead this year: a plan ("the wedding is on June 20")
    ("去年の12月24日", (d(2025, 12, 24), d(2025, 12, 25))),
    ("昨年末の旅行", (d(2025, 12, 20), d(2026, 1, 1))),
    ("一昨年末の旅行", (d(2024, 12, 20), d(2025, 1, 1))),
    ("去年の年末", (d(2025, 12, 20), d(2026, 1, 1))),
    ("令和7年12月24日", (d(2025, 12, 24), d(2025, 12, 25))),
    ("令和元年", (d(2019, 1, 1), d(2020, 1, 1))),
    ("令和七年の夏", (d(2025, 6, 1), d(2025, 9, 1))),
    ("㋿7年の夏", (d(2025, 6, 1), d(2025, 9, 1))),
    ("2025年の冬", (d(2025, 12, 1), d(2026, 3, 1))),
    ("平成30年の3月", (d(2018, 3, 1), d(2018, 4, 1))),
    ("この前の日曜に行った店", (d(2026, 5, 17), d(2026, 5, 18))),
    ("こないだの水曜", (d(2026, 5, 13), d(2026, 5, 14))),  # today is Wednesday: a week ago
    ("今朝の夢の話", (d(2026, 5, 20), d(2026, 5, 20, 12))),
    ("this morning", (d(2026, 5, 20), d(2026, 5, 20, 12))),
    ("先日の話", (d(2026, 5, 6, 15), d(2026, 5, 19, 15))),
    ("半年前", (d(2025, 11, 5, 15), d(2025, 12, 5, 15))),
    ("ひと月前", (d(2026, 4, 5, 15), d(2026, 5, 5, 15))),
    # present, future or no time at all: no window
    ("今日は疲れた", None),
    ("今週の土曜に行く", None),
    ("明日の予定", None),
    ("来週の会議", None),
    ("6月20日の結婚式", None),
    ("How are you today?", None),
    ("next week", None),
    ("in June", None),
    ("This may take a while", None),
    ("I may go", None),
    ("Juno's vet appointment", None),
    ("", None),
    # numbers before "may"/"mar" that are no date; dates written as dates still are
    ("Do you think these 2 may be related to the laptop issue?", None),
    ("I watched 10 mar the view", None),
    ("on the 2nd may we met", (d(2026, 5, 2), d(2026, 5, 3))),
    ("it was 3 May.", (d(2026, 5, 3), d(2026, 5, 4))),
    ("by 3 mar the roof was done", (d(2026, 3, 3), d(2026, 3, 4))),
    ("the 10th of March", (d(2026, 3, 10), d(2026, 3, 11))),
    # 月曜 is Monday and 3月期 a fiscal period, not months
    ("第2月曜日に会議がある", None),
    ("毎月第1月曜", None),
    ("3月期決算の話", None),
    # next year's months, dates and holidays are plans (their month alone would be past)
    ("来年の3月に結婚する", None),
    ("来年の5月3日", None),
    ("再来年の1月", None),
    ("来年のお盆は帰省する", None),
    ("We're getting married in March next year", None),
    ("next March", None),
    ("next Christmas", None),
    ("今年の年末は実家に帰る", None),  # in May: still to come
    ("今年のクリスマス", None),
    # a holiday or month of a named year is that year's, not two years' span
    ("去年のお盆", (d(2025, 8, 13), d(2025, 8, 17))),
    ("去年のクリスマスに何した？", (d(2025, 12, 24), d(2025, 12, 26))),
    ("一昨年のゴールデンウィーク", (d(2024, 4, 29), d(2024, 5, 7))),
    ("2024年の正月", (d(2024, 1, 1), d(2024, 1, 8))),
    ("Christmas last year", (d(2025, 12, 24), d(2025, 12, 26))),
    ("last year's Christmas", (d(2025, 12, 24), d(2025, 12, 26))),
    ("2年前の3月", (d(2024, 3, 1), d(2024, 4, 1))),
    ("two years ago in March", (d(2024, 3, 1), d(2024, 4, 1))),
    ("in March two years ago", (d(2024, 3, 1), d(2024, 4, 1))),
    # New Year's Eve is 31 December; a lunar new year has no fixed days
    ("What did we do on New Year's Eve?", (d(2025, 12, 31), d(2026, 1, 1))),
    ("大晦日に何してた？", (d(2025, 12, 31), d(2026, 1, 1))),
    ("lunar new year dinner", None),
    ("旧正月の料理", None),
    # a year before 1900 in a date is a number
    ("order 1234-5-6 arrived", None),
    ("1234年5月6日", None),
    # dates written with slashes or dots, an ISO date inside Japanese text, 〜くらい前
    ("2026/5/3の晩ごはん", (d(2026, 5, 3), d(2026, 5, 4))),
    ("2026.5.3の晩ごはん", (d(2026, 5, 3), d(2026, 5, 4))),
    ("after I updated Home Assistant to 2025.10.1 the lights broke", None),  # a version
    ("2026-05-03の晩ごはん何だった？", (d(2026, 5, 3), d(2026, 5, 4))),
    ("2週間くらい前", (d(2026, 5, 3, 15), d(2026, 5, 9, 15))),
    ("10日ほど前", (d(2026, 5, 9), d(2026, 5, 12))),
    ("version 2026.3.5.1", None),
    # a count beside "may" is no date; a clause after a comma is no plan of next year
    ("one of the 2 may be broken", None),
    ("up to 3 may join", None),
    ("may 3 people join us?", None),
    ("on May 3 we met", (d(2026, 5, 3), d(2026, 5, 4))),
    ("May 3 was my birthday", (d(2026, 5, 3), d(2026, 5, 4))),  # written as a month
    ("from May 3 to May 10 we travelled", (d(2026, 5, 3), d(2026, 5, 11))),
    ("apr 3 was fun", (d(2026, 4, 3), d(2026, 4, 4))),
    ("2026.5.3", (d(2026, 5, 3), d(2026, 5, 4))),
    ("「2026.5.3」の話", (d(2026, 5, 3), d(2026, 5, 4))),
    ("Home Assistant 2025.10.1で壊れた", None),
    ("I started the course in March, next year I'll finish it", (d(2026, 3, 1), d(2026, 4, 1))),
    # "may" the verb and a name's possessive are no months
    ("Logging in may take a while", None),
    ("Plugging it in may help", None),
    ("Running late may cost us the deposit", None),
    ("we met in april's house", None),
    ("a friend of Jan's", None),
    ("in may.", (d(2026, 5, 1), NOW)),
    ("in may, we moved", (d(2026, 5, 1), NOW)),
    ("since may 2025", (d(2025, 5, 1), d(2025, 6, 1))),
    ("since May", (d(2026, 5, 1), NOW)),
    ("in May we moved", (d(2026, 5, 1), NOW)),
    # "the last week of X" is X's final week, not the previous week
    ("the last week of April", (d(2026, 4, 1), d(2026, 5, 1))),
    ("the last Friday of March", (d(2026, 3, 1), d(2026, 4, 1))),
    ("last week of April", (d(2026, 4, 1), d(2026, 5, 1))),
    ("the last week of the year", None),
    ("the last month of school", None),
    ("the last year of college", None),
    ("the last week", (d(2026, 5, 11), d(2026, 5, 18))),
    # "in the last year" is the rolling span up to now, as "the past year"
    ("in the last year", (d(2025, 5, 19, 15), NOW)),
    ("over the last month", (d(2026, 4, 19, 15), NOW)),
    ("within the last week", (d(2026, 5, 13, 15), NOW)),
    ("during the last year of college", None),
    # forward-pointing phrases are no "so far"
    ("今週末に行く予定", None),  # said on Wednesday: still to come
    ("今月末の締め切り", None),
    ("later this week", None),
    ("by the end of this week", None),
    ("the rest of this week", None),
    ("later this month", None),
    # 前後 (about) and 前期 (first term) after a count are no "ago"; 数十 is no ten
    ("1週間前後かかります", None),
    ("3日前後で届きます", None),
    ("2年前期の授業", None),
    ("数十年前の写真", None),
    ("十年前", (d(2015, 11, 19, 15), d(2016, 11, 19, 15))),
    # a range of counts covers from the larger to the smaller
    ("1〜2週間前", (d(2026, 5, 3, 15), d(2026, 5, 16, 15))),
    ("2、3日前", (d(2026, 5, 16), d(2026, 5, 20))),
    ("1-2 months ago", (d(2026, 3, 5, 15), d(2026, 5, 5, 15))),
    ("one or two weeks ago", (d(2026, 5, 3, 15), d(2026, 5, 16, 15))),
    ("2-3 weeks ago", (d(2026, 4, 26, 15), d(2026, 5, 9, 15))),
    # as 先日, "the other day" is the last two weeks but today
    ("What did I say the other day about Hannah?", (d(2026, 5, 6, 15), d(2026, 5, 19, 15))),
    ("a fortnight ago", (d(2026, 5, 3, 15), d(2026, 5, 9, 15))),  # as "two weeks ago"
    ("over the past fortnight", (d(2026, 5, 6, 15), NOW)),
    # a year before a model's or an edition's word is a thing's year, not a time
    ("2019年モデルのMacBookどうなったっけ", None),
    ("2019年式の車を売った", None),
    ("2020年モデル", None),
    ("2019年版の地図", None),
    ("2019年製のギター", None),
    ("2019年産のワイン", None),
    ("令和元年モデル", None),
    ("the 2019 model", None),
    ("2019年に買った", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年の夏", (d(2019, 6, 1), d(2019, 9, 1))),
    ("2019年産休を取った", (d(2019, 1, 1), d(2020, 1, 1))),  # 産休, a leave
    ("2019年モデルのMacBookを2019年に買った", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年型プリウスに乗ってる", None),  # (a name after the word)
    ("うちの車は2019年式だよ", None),
    ("2019年製造の車", None),
    ("2019年産米", None),
    ("2019年型落ちのiPhone", None),
    ("2019年型って何？", None),
    ("2019年モデルって何？", None),
    ("2019年製造業に転職した", (d(2019, 1, 1), d(2020, 1, 1))),  # an industry, not a make
    ("2019年って大変だった", (d(2019, 1, 1), d(2020, 1, 1))),
    # a word that only starts as a model's or an edition's: a year still
    ("長男は2019年産まれ", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年産後うつになった", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年産婦人科に通ってた", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年製薬会社に転職した", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年式典に出た", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年版画展に行った", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年モデルチェンジした", (d(2019, 1, 1), d(2020, 1, 1))),
    ("2019年式挙げたんだよね", (d(2019, 1, 1), d(2020, 1, 1))),  # a wedding
    ("2019年式を挙げた", (d(2019, 1, 1), d(2020, 1, 1))),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_parse_time_window(text: str, expected: tuple[datetime, datetime] | None) -> None:
    assert parse_time_window(text, NOW) == expected


def test_end_never_passes_now_and_start_precedes_end() -> None:
    for text, _ in CASES:
        window = parse_time_window(text, NOW)
        if window is not None:
            assert window[0] < window[1] <= NOW


def test_several_expressions_give_the_covering_window() -> None:
    found = find_time_expressions("昨日と先月の話", NOW)
    assert [e.surface for e in found] == ["昨日", "先月"]
    assert parse_time_window("昨日と先月の話", NOW) == (d(2026, 4, 1), d(2026, 5, 20))


def test_full_width_digits_and_time_zone_of_now() -> None:
    assert parse_time_window("３日前", NOW) == (d(2026, 5, 16), d(2026, 5, 19))
    utc_now = NOW.astimezone(timezone.utc)  # 06:00 UTC, same day
    start, end = parse_time_window("yesterday", utc_now) or (None, None)
    assert start == datetime(2026, 5, 19, tzinfo=timezone.utc)
    assert end == datetime(2026, 5, 20, tzinfo=timezone.utc)


def test_naive_now_gives_nothing() -> None:
    assert parse_time_window("yesterday", NOW.replace(tzinfo=None)) is None


def test_last_season_is_the_latest_one_that_is_over() -> None:
    autumn = datetime(2026, 10, 10, tzinfo=JST)
    assert parse_time_window("last summer", autumn) == (d(2026, 6, 1), d(2026, 9, 1))
    july = datetime(2026, 7, 10, tzinfo=JST)
    assert parse_time_window("last summer", july) == (d(2025, 6, 1), d(2025, 9, 1))


def test_january_last_month_and_last_week_cross_the_year() -> None:
    jan = datetime(2026, 1, 2, 9, 0, tzinfo=JST)  # a Friday
    assert parse_time_window("先月", jan) == (d(2025, 12, 1), d(2026, 1, 1))
    assert parse_time_window("last week", jan) == (d(2025, 12, 22), d(2025, 12, 29))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-05-11/2026-05-17", (d(2026, 5, 11), d(2026, 5, 18))),
        ("2026-05-11..2026-05-17", (d(2026, 5, 11), d(2026, 5, 18))),
        ("2026-05-11 to 2026-05-13", (d(2026, 5, 11), d(2026, 5, 14))),
        ("2026-05-18", (d(2026, 5, 18), d(2026, 5, 19))),
        ("2026-04", (d(2026, 4, 1), d(2026, 5, 1))),
        ("2026-05-18/2026-05-31", (d(2026, 5, 18), NOW)),  # clipped to now
        ("2026-05-11T00:00:00+09:00/2026-05-12T00:00:00+09:00", (d(2026, 5, 11), d(2026, 5, 12))),
        ("2026-06-01/2026-06-07", None),  # the future
        ("2026-05-17/2026-05-11", None),  # reversed
        ("2026-13-01", None),
        ("0001-01-01/2026-05-01", None),  # "all time" is no window
        ("last week", None),
        ("", None),
    ],
)
def test_parse_iso_range(value: str, expected: tuple[datetime, datetime] | None) -> None:
    assert parse_iso_range(value, NOW) == expected


def test_union_and_window_filters() -> None:
    assert union([None, None]) is None
    a = (d(2026, 5, 1), d(2026, 5, 2))
    b = (d(2026, 5, 10), d(2026, 5, 11))
    assert union([a, None, b]) == (d(2026, 5, 1), d(2026, 5, 11))
    base = Filters(agent="x", since_ts=0, until_ts=int(NOW.timestamp()) + 1)
    narrowed = window_filters(base, a, lag=False)
    assert narrowed.agent == "x"
    assert narrowed.since_ts == int(a[0].timestamp())
    assert narrowed.until_ts == int(a[1].timestamp()) - 1
    lagged = window_filters(base, a)  # one day of recording lag
    assert lagged.until_ts == int(a[1].timestamp()) + 86400 - 1
    old = (d(2020, 1, 1), d(2020, 2, 1))  # beyond a one-year day range: the window wins
    assert window_filters(
        Filters(since_ts=int(NOW.timestamp()) - 365 * 86400), old
    ).since_ts == int(old[0].timestamp())


def test_widen_adds_a_recording_lag() -> None:
    weekend = parse_time_window("先週末泊まった宿", NOW)  # Sat 16 – Sun 17 May
    assert weekend == (d(2026, 5, 16), d(2026, 5, 18))
    assert widen(weekend) == (d(2026, 5, 16), d(2026, 5, 19))  # told on Monday: found
    month = (d(2026, 3, 1), d(2026, 4, 1))
    assert widen(month) == (d(2026, 3, 1), d(2026, 4, 8))  # at most a week
    assert widen((d(2026, 5, 4), d(2026, 5, 11)), NOW)[1] == d(2026, 5, 14, 12)  # 3.5 days
    assert widen((d(2026, 5, 11), d(2026, 5, 18)), NOW)[1] == NOW
    assert widen((d(2026, 5, 19), d(2026, 5, 20)), NOW)[1] == NOW  # never past now


def test_a_retrieval_reads_relative_days_in_the_zone_of_its_now(tmp_path: Path) -> None:
    """One Memory serves users in several zones: ``now`` says when (and where) the
    message was sent; 昨日 is the day before in that zone, not in the clock's UTC."""
    from zoneinfo import ZoneInfo

    from memengine import FixedClock, InvalidInput, Memory

    from .helpers import HashEmbedder

    tokyo = ZoneInfo("Asia/Tokyo")
    clock = FixedClock(datetime(2026, 3, 9, 23, 0, tzinfo=timezone.utc))  # 10 March in Tokyo
    with Memory.open(tmp_path / "z.db", embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("鎌倉でしらす丼を食べた", "いいね", occurred_at=clock())
        by_clock = mem.retrieve("昨日どこに行ったっけ？")
        in_tokyo = mem.retrieve("昨日どこに行ったっけ？", now=clock().astimezone(tokyo))
        assert by_clock.time_window is not None and in_tokyo.time_window is not None
        assert by_clock.time_window[0] == datetime(2026, 3, 8, tzinfo=timezone.utc)
        assert in_tokyo.time_window[0] == datetime(2026, 3, 9, tzinfo=tokyo)
        with pytest.raises(InvalidInput, match="now is a datetime"):
            mem.retrieve("昨日は？", now="2026-03-10")  # type: ignore[arg-type]


JAN = datetime(2026, 1, 20, 12, tzinfo=JST)
XMAS_EVE = datetime(2026, 12, 24, 10, tzinfo=JST)
SEPT = datetime(2026, 9, 10, 12, tzinfo=JST)


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        # in January this winter began last December: 去年の冬 is the winter before it
        ("去年の冬どこ行ったっけ", JAN, (d(2024, 12, 1), d(2025, 3, 1))),
        ("一昨年の冬", JAN, (d(2023, 12, 1), d(2024, 3, 1))),
        ("今年の冬", JAN, (d(2025, 12, 1), JAN)),
        ("去年の冬", d(2026, 6, 1), (d(2025, 12, 1), d(2026, 3, 1))),
        # "since" and 以来 point back only: a month or day still to come is last year's
        ("since December", JAN, (d(2025, 12, 1), JAN)),
        ("12月以来ずっと", JAN, (d(2025, 12, 1), JAN)),
        ("12月3日以来", JAN, (d(2025, 12, 3), JAN)),
        ("since Dec 3", JAN, (d(2025, 12, 3), JAN)),
        # a month or day still to come, whose last one ended under 31 days ago: that one
        ("in December", JAN, None),  # no verb in the past: a plan as often
        ("What did I do in December?", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月に何してたっけ", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月31日は何してたっけ？", d(2026, 1, 3, 12), (d(2025, 12, 31), d(2026, 1, 1))),
        ("What did I do on December 31?", d(2026, 1, 3, 12), (d(2025, 12, 31), d(2026, 1, 1))),
        ("in November", JAN, None),  # ended 50 days ago: this one, a plan
        ("this past weekend", d(2026, 1, 18, 12), (d(2026, 1, 10), d(2026, 1, 12))),  # Sunday
        # a message that looks ahead keeps a month or day still to come a plan
        ("in December this year", JAN, None),
        ("I'm going to Paris in December", JAN, None),
        ("12月に引っ越す予定なんだ", JAN, None),
        ("12月どうする？", JAN, None),
        ("I’ll be in Paris in December", JAN, None),  # (a phone's apostrophe)
        ("12月に行きたい", JAN, None),
        ("My mom will visit in December", JAN, None),
        ("Where should we go in December?", JAN, None),
        ("Are you going to Paris in December?", JAN, None),
        ("12月に沖縄に行きたいです", JAN, None),
        ("今度は12月に会おうね", JAN, None),
        ("We have to move in December", JAN, None),
        ("It will snow in December", JAN, None),
        ("Did Will visit us in December?", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("what did I want to do in December?", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月に買った服、もったいないな", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        # past forms are no plan
        ("I planned to go in December, did I?", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("What did Will say in December?", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月にぜったい言ったよね", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月は冷たい雨ばかりだったね", JAN, (d(2025, 12, 1), d(2026, 1, 1))),
        ("12月31日はありがたいことに休みだった", JAN, (d(2025, 12, 31), d(2026, 1, 1))),
        ("on December 20", d(2026, 1, 25, 12), None),  # 35 days ago
        # から and 以降 point forward as often: a plan, no window
        ("12月から", JAN, None),
        ("4月から大学生になります", JAN, None),
        ("12月3日から出張に行く予定です", d(2026, 11, 30, 12), None),
        ("来年度、4月以降に引っ越す予定", d(2026, 2, 10, 12), None),
        ("3月から", JAN + timedelta(days=60), (d(2026, 3, 1), JAN + timedelta(days=60))),
        ("12月から今まで", JAN, (d(2025, 12, 1), JAN)),  # 今まで: until now
        ("12月から今日までずっと", JAN, (d(2025, 12, 1), JAN)),
        ("4月からずっと大阪勤務になるので", JAN, None),  # ずっと looks forward too
        ("12月からずっと今まで忙しかった", JAN, (d(2025, 12, 1), JAN)),
        ("12月から、これまで", JAN, (d(2025, 12, 1), JAN)),
        ("4月からこれまで以上に頑張ります", JAN, None),  # another phrase: a plan
        ("4月からこれまで通りの条件で", JAN, None),
        ("5月から現在までの売上", JAN, (d(2025, 5, 1), JAN)),
        ("12月から今までの売上は？", JAN, (d(2025, 12, 1), JAN)),
        ("12月から今までに何回ジムに行った？", JAN, (d(2025, 12, 1), JAN)),
        # "last Christmas" is the latest one that is over
        ("last Christmas", XMAS_EVE, (d(2025, 12, 24), d(2025, 12, 26))),
        ("last Christmas", d(2026, 12, 26), (d(2026, 12, 24), d(2026, 12, 26))),
        ("last new year's eve", JAN, (d(2025, 12, 31), d(2026, 1, 1))),
        ("last new year's day", d(2026, 1, 3, 12), (d(2026, 1, 1), d(2026, 1, 3, 12))),
        # a holiday marked as still to come is no memory of last year's
        ("this Christmas", SEPT, None),
        ("the coming Christmas", SEPT, None),
        ("next Christmas", SEPT, None),
        ("今度のクリスマス", SEPT, None),
        ("次のクリスマス", SEPT, None),
        ("来週のGW", d(2026, 4, 22, 12), None),
        ("今度のGW", SEPT, None),  # this year's is over: the next one is meant
        ("来月のお盆", d(2026, 7, 20, 12), None),
        ("今度の年末", SEPT, None),
        ("今年末", SEPT, None),
        ("this new year's eve", SEPT, None),
        ("this Christmas", XMAS_EVE, (d(2026, 12, 24), XMAS_EVE)),  # begun: this year's
        ("今年末", d(2026, 12, 22, 12), (d(2026, 12, 20), d(2026, 12, 22, 12))),
        ("クリスマス", SEPT, (d(2025, 12, 24), d(2025, 12, 26))),  # unmarked: as before
        ("今週末", d(2026, 5, 24, 15), (d(2026, 5, 23), d(2026, 5, 24, 15))),  # on Sunday
        # "N … ago" past 200 of a unit
        ("300 days ago", JAN, (d(2025, 3, 25), d(2025, 3, 28))),
        ("300日前", JAN, (d(2025, 3, 25), d(2025, 3, 28))),
        ("1000 years ago", JAN, None),
    ],
)
def test_windows_at_the_turn_of_the_year(
    text: str, now: datetime, expected: tuple[datetime, datetime] | None
) -> None:
    assert parse_time_window(text, now) == expected


def test_a_reversed_iso_range_of_the_llm_is_no_date() -> None:
    """ "2026-05-31/2026-05-01" was read word by word: a window on 31 May."""
    from memengine.retrieve.expand import DetectedReference
    from memengine.retrieve.turn import llm_window

    reversed_range = DetectedReference(
        type="temporal", surface="then", resolved="2026-05-17/2026-05-11"
    )
    assert llm_window([reversed_range], NOW) is None
    last_week = DetectedReference(
        type="temporal", surface="last week", resolved="2026-05-17/2026-05-11"
    )
    assert llm_window([last_week], NOW) == (d(2026, 5, 11), d(2026, 5, 18))
    plan = DetectedReference(
        type="temporal", surface="12月3日から", resolved="2026-12-03/2026-12-05"
    )
    assert llm_window([plan], d(2026, 11, 30, 12)) is None  # a trip to come: no window


@pytest.mark.parametrize(
    "resolved", ["2026-05-12/", "/2026-05-12", "2026-05-11/2026-05-17/2026-05-18", "2026-05-12.."]
)
def test_a_broken_iso_range_of_the_llm_leaves_the_words_to_say_the_time(resolved: str) -> None:
    """ "2026-05-25/" (the model meant "since 25 May") was read as its one date, a window of
    that day: a range written broken names no date, and the words it resolved are read."""
    from memengine.retrieve.expand import DetectedReference
    from memengine.retrieve.turn import llm_window

    last_week = DetectedReference(type="temporal", surface="last week", resolved=resolved)
    assert llm_window([last_week], NOW) == (d(2026, 5, 11), d(2026, 5, 18))
    then = DetectedReference(type="temporal", surface="then", resolved=resolved)
    assert llm_window([then], NOW) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("in April last year", (d(2025, 4, 1), d(2025, 5, 1))),
        ("in March of last year", (d(2025, 3, 1), d(2025, 4, 1))),
        ("last year in March", (d(2025, 3, 1), d(2025, 4, 1))),
        ("March 3rd last year", (d(2025, 3, 3), d(2025, 3, 4))),
        ("the 3rd of March last year", (d(2025, 3, 3), d(2025, 3, 4))),
        ("In May the year before last", (d(2024, 5, 1), d(2024, 6, 1))),
        ("back in April of 2025", (d(2025, 4, 1), d(2025, 5, 1))),
        ("it may last year-round", None),  # the verb
    ],
)
def test_a_month_of_a_named_year_is_one_month(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    """ "in April last year" was the union of all of 2025 and this April."""
    assert parse_time_window(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("last may we went hiking", (d(2025, 5, 1), d(2025, 6, 1))),
        ("what did i do in may last year?", (d(2025, 5, 1), d(2025, 6, 1))),
        ("in may of last year", (d(2025, 5, 1), d(2025, 6, 1))),
        ("in may this year", (d(2026, 5, 1), NOW)),
        ("last March's trip", (d(2026, 3, 1), d(2026, 4, 1))),
        ("2年前期待してた仕事", (d(2023, 11, 19, 15), d(2024, 11, 19, 15))),
        ("3日前期限だった", (d(2026, 5, 16), d(2026, 5, 19))),
        ("一週間前後前に話した", (d(2026, 5, 10, 15), d(2026, 5, 16, 15))),
        ("1週間前後かかります", None),
        ("2年前期の授業", None),
    ],
)
def test_a_month_word_or_an_ago_that_the_narrower_rules_first_missed(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    """ "last may" and "in may this year" are the month; 前期待 and 前後前 are still "ago"."""
    assert parse_time_window(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("What did I do yesterday?", True),
        ("What'd I do yesterday?", True),
        ("What’d I do yesterday?", True),
        ("What did we discuss 2 weeks ago?", True),
        ("what did we chat about last week lol", True),
        ("What did I do yesterday btw?", True),
        ("Walk me through yesterday.", True),
        ("Catch me up on last week", True),
        ("先週何話したっけ", True),
        ("昨日の件どうなった？", True),
        ("一昨日の件、その後どう？", True),
        ("先週末どこ行ったっけ", True),
        ("昨日の続きなんだけど", True),
        ("先週金曜日何したっけ", True),
        ("昨日話した内容まとめて", True),  # (内容, 全部 name no topic)
        ("昨日話したこと全部教えて", True),
        ("wait what did I mention yesterday?", True),
        ("昨日の会議の内容教えて", False),
        ("昨日何食べたっけ", False),  # what was eaten: a topic, as "eat" would be
        ("What's the capital of France? I forgot it yesterday", False),
        ("Did I walk the dog yesterday?", False),
        ("Did we chat about the dentist last week?", False),
        ("昨日の天気予報って当たった？", False),
    ],
)
def test_whether_the_time_is_what_a_message_asks_about(text: str, asked: bool) -> None:
    assert time_is_asked(text, find_time_expressions(text, NOW)) is asked


# An English expression written against Japanese (code-switching): no space between
# "yesterday" and って is still a word's end.
MIXED: list[tuple[str, str]] = [
    ("yesterdayって何してた？", "yesterday"),
    ("last weekの飲み会", "last week"),
    ("2 weeks agoに何した？", "2 weeks ago"),
    ("3 days ago何食べた？", "3 days ago"),
    ("last monthの給料", "last month"),
    ("last nightの夢", "last night"),
    ("this morningのcoffee", "this morning"),
    ("the day before yesterdayのdinner", "the day before yesterday"),
    ("昨日とyesterdayの違い", "yesterday"),
]


@pytest.mark.parametrize(("text", "english"), MIXED, ids=[c[0] for c in MIXED])
def test_english_expressions_against_japanese_read_as_when_spaced(text: str, english: str) -> None:
    spaced = text.replace(english, f" {english} ")
    window = parse_time_window(text, NOW)
    assert window is not None
    assert window == parse_time_window(spaced, NOW)
    assert english in [e.surface for e in find_time_expressions(text, NOW)]


def test_an_english_word_inside_a_longer_latin_word_is_still_no_expression() -> None:
    assert parse_time_window("yesterdays", NOW) is None  # (no such word: no window)
    assert parse_time_window("blast weekend", NOW) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did I do on 5/3?", (d(2026, 5, 3), d(2026, 5, 4))),
        ("5/3何してた？", (d(2026, 5, 3), d(2026, 5, 4))),
        ("５／３のこと", (d(2026, 5, 3), d(2026, 5, 4))),
        ("5/18の歯医者", (d(2026, 5, 18), d(2026, 5, 19))),
        ("5/1〜5/15に何した", (d(2026, 5, 1), d(2026, 5, 16))),
        ("What did I do 5/1~5/15?", (d(2026, 5, 1), d(2026, 5, 16))),  # both ends
        ("5/2と5/3に何した？", (d(2026, 5, 2), d(2026, 5, 4))),
        ("5/2朝何食べた", (d(2026, 5, 2), d(2026, 5, 3))),
        ("I rated it 7/10, 2024 was better", None),
        ("on 5/3, 2025", (d(2025, 5, 3), d(2025, 5, 4))),
        ("5/16(土)に行った店", (d(2026, 5, 16), d(2026, 5, 17))),
        ("since 12/3", (d(2025, 12, 3), NOW)),
        ("I went on 17/5", (d(2026, 5, 17), d(2026, 5, 18))),  # 17 cannot be the month
        ("the party on 12/24/2025", (d(2025, 12, 24), d(2025, 12, 25))),
        ("5/30に行く", None),  # still to come: a plan
        # alone, a slash is a score, a share or a schedule
        ("The movie was 8/10.", None),
        ("open 24/7", None),
        ("add 1 1/2 cups", None),
        ("about 3/4 of the people", None),
        ("on 2/30", None),
        ("打率3/10だったっけ", None),
        ("3/4くらい残ってる", None),
        ("バス停は3/4番線", None),
        ("my rent went up by 1/4", None),
        ("it dropped from 3/4 to 1/2", None),
    ],
)
def test_a_month_and_day_written_with_a_slash(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    assert parse_time_window(text, NOW) == expected


def test_a_holiday_named_alone_shortly_before_it_comes_names_no_time() -> None:
    dec22 = datetime(2026, 12, 22, 19, 0, tzinfo=JST)
    assert parse_time_window("What did I say I'm getting Mum for Christmas?", dec22) is None
    assert parse_time_window("last Christmas", dec22) == (d(2025, 12, 24), d(2025, 12, 26))
    assert parse_time_window("去年のクリスマス", dec22) == (d(2025, 12, 24), d(2025, 12, 26))
    nov10 = datetime(2026, 11, 10, 19, 0, tzinfo=JST)  # six weeks before: last year's
    assert parse_time_window("What did we do at Christmas?", nov10) == (
        d(2025, 12, 24),
        d(2025, 12, 26),
    )
    jan10 = datetime(2027, 1, 10, 19, 0, tzinfo=JST)
    assert parse_time_window("What did we do at Christmas?", jan10) == (
        d(2026, 12, 24),
        d(2026, 12, 26),
    )
    assert parse_time_window("お盆何してた？", datetime(2026, 7, 20, tzinfo=JST)) is None
    dec20 = datetime(2026, 12, 20, tzinfo=JST)  # this year's New Year has begun; the next is near
    assert parse_time_window("お正月どうする？", dec20) is None
    assert parse_time_window("what are we doing for new year?", dec20) is None
    assert parse_time_window("お正月何した？", datetime(2026, 1, 20, tzinfo=JST)) is not None
    assert parse_time_window("what did we do last new year?", dec20) == (
        d(2026, 1, 1),
        d(2026, 1, 8),
    )


def test_an_english_word_inside_a_latin_word_with_accents_is_no_expression() -> None:
    assert parse_time_window("what happened in Marché", NOW) is None
    assert parse_time_window("in march", NOW) == (d(2026, 3, 1), d(2026, 4, 1))


UTC = timezone.utc
JUNE3 = datetime(2026, 6, 3, 10, tzinfo=JST)  # Wednesday
SAT = datetime(2026, 3, 14, 20, tzinfo=JST)
MON = datetime(2026, 3, 16, 20, tzinfo=JST)
JAN5 = datetime(2026, 1, 5, 12, tzinfo=JST)
LATE = datetime(2024, 1, 13, tzinfo=UTC)  # a LoCoMo-like "now", long after the dates asked
AUG = datetime(2026, 8, 21, tzinfo=JST)


def u(y: int, m: int, day: int) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


READ_IN_CHAT: list[tuple[str, datetime, tuple[datetime, datetime] | None]] = [
    # a school break named alone: the season of the latest break begun
    ("夏休みどこ行ったっけ", JUNE3, (d(2025, 6, 1), d(2025, 9, 1))),
    ("夏休みどこ行ったっけ", datetime(2026, 8, 10, tzinfo=JST), (d(2026, 6, 1), d(2026, 8, 10))),
    ("冬休み何してたっけ", datetime(2026, 12, 5, tzinfo=JST), (d(2025, 12, 1), d(2026, 3, 1))),
    ("冬休み何してたっけ", datetime(2027, 1, 5, tzinfo=JST), (d(2026, 12, 1), d(2027, 1, 5))),
    ("春休みどこ行ったっけ", datetime(2026, 3, 3, tzinfo=JST), (d(2025, 3, 1), d(2025, 6, 1))),
    # "this morning" after midnight is the morning just gone
    (
        "What did we talk about this morning?",
        d(2026, 6, 13, 0),
        (d(2026, 6, 12), d(2026, 6, 12, 12)),
    ),
    (
        "今朝何話したっけ？",
        datetime(2026, 6, 13, 0, 40, tzinfo=JST),
        (d(2026, 6, 12), d(2026, 6, 12, 12)),
    ),
    (
        "今朝何話したっけ？",
        datetime(2026, 6, 13, 9, tzinfo=JST),
        (d(2026, 6, 13), d(2026, 6, 13, 9)),
    ),
    # a weekday or weekend named alone, told as past: the latest one
    ("Pickle ate one of my socks on Tuesday.", SAT, (d(2026, 3, 10), d(2026, 3, 11))),
    ("she howled for an hour on Thursday", MON, (d(2026, 3, 12), d(2026, 3, 13))),
    ("火曜に歯医者行ったよ", SAT, (d(2026, 3, 10), d(2026, 3, 11))),
    ("土曜に何したっけ？", MON, (d(2026, 3, 14), d(2026, 3, 15))),
    ("土曜に何したっけ？", SAT, (d(2026, 3, 7), d(2026, 3, 8))),  # (today's is not yet told)
    ("週末は何してたっけ？", MON, (d(2026, 3, 14), d(2026, 3, 16))),
    ("What did I do over the weekend?", SAT, (d(2026, 3, 7), SAT)),  # with the one under way
    ("We met up last Fri", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("I'm seeing her on Friday", SAT, None),  # a plan
    ("I go swimming on Tuesdays", SAT, None),  # a habit
    ("来週の金曜に行く", SAT, None),
    ("毎週金曜に行ってた", SAT, None),
    # …and without a particle, as chat drops it, only before a question of what was done on
    # the day: what, where, who with, how it was, in the past; in English a question "did I/we/
    # you …" or "what did …" that ends with the weekday
    ("土曜日何してた？", MON, (d(2026, 3, 14), d(2026, 3, 15))),
    ("金曜日何した？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日って何してた？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日どうだった？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日\u3000何してた？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日 何してた？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("火曜日どこ行った？", MON, (d(2026, 3, 10), d(2026, 3, 11))),
    ("金曜日誰と会った？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日のいつものカフェ行った？", MON, (d(2026, 3, 13), d(2026, 3, 14))),  # that Friday's
    # English names the day with "on": a weekday alone, even in a did-question, is as often
    # a plan's ("Did we confirm Saturday?", "Did I order the cake for the party Saturday?")
    ("Did I go to the gym Friday?", MON, None),
    ("What did we eat Friday night?", MON, None),
    ("Remind me, did I call mom Tuesday?", MON, None),
    ("Did I watch a movie Friday night?", MON, None),
    ("Did we confirm Saturday?", MON, None),
    ("Did I order the cake for the party Saturday?", MON, None),
    ("Did I go to the gym on Friday?", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("水曜日の夜何食べた？", MON, (d(2026, 3, 11), d(2026, 3, 12))),
    # a plan's day recalled, asked or called off: the past form is the recalling's
    ("土曜日って何時に集合だったっけ？", MON, None),
    ("土曜日空いてたっけ？", MON, None),
    ("日曜日どこ行くか決めた？", MON, None),
    ("金曜日休み取った", MON, None),
    ("金曜日行けなくなった、ごめん", MON, None),
    ("月曜日って祝日だった？", MON, None),
    ("金曜日何日だった？", MON, None),
    ("金曜日何食べたい？", MON, None),
    ("金曜日どうする？", MON, None),
    # …and the rest of a bare weekday, which the first review read: too often a plan's
    ("金曜日も雨だった？", MON, None),
    ("何してた、金曜日？", MON, None),
    ("金曜日行った？", MON, None),
    ("ねえ、日曜寝てた？", MON, None),
    ("did I call mom tuesday", MON, None),  # not a question
    ("What did I say about my sister Friday", MON, None),
    ("He texted me Friday night and I haven't replied", MON, None),
    ("We went hiking Sunday", MON, None),
    # a day written, told or chosen
    ("金曜日って書いてあった", MON, None),
    ("金曜日ってメールに書いてたよ", MON, None),
    ("金曜日って伝えた", MON, None),
    ("金曜日って送った", MON, None),
    ("We decided Friday.", MON, None),
    ("She asked if I was free Friday.", MON, None),
    ("The doctor said to come back Monday.", MON, None),
    ("Did we decide Saturday?", MON, None),
    ("Did I tell you I'm out Friday?", MON, None),
    # a statement of the past about a day to come
    ("I got a new job, I start Monday!", MON, None),
    ("My sister invited me to her party Saturday.", MON, None),
    ("I told my boss I'm out Friday.", MON, None),
    ("I requested off Friday", MON, None),
    ("We made a reservation for dinner Friday night", MON, None),
    ("Did I go to the dentist Tuesday or Wednesday?", MON, None),  # (one of two)
    # a habit, a liking, a deadline
    ("毎週金曜日何してた？", MON, None),
    ("金曜日はいつもジム行ってた", MON, None),
    ("金曜日っていつも混んでたよね", MON, None),
    ("金曜日に大抵飲みに行ってた", MON, None),
    # よく, たまに and 時々 after the particle as often say "a lot" or modify a clause of
    # that day: the day is read, as it was before they were taken for habits
    ("金曜日はよく飲みに行ってた", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日はたまにジム行ってた", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日はよく飲んだね、何軒行ったっけ？", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("土曜日はたまに会う友達と飲んだ", MON, (d(2026, 3, 14), d(2026, 3, 15))),
    ("金曜日はよく眠れた", MON, (d(2026, 3, 13), d(2026, 3, 14))),  # よく "well"
    ("金曜日が好きだった", MON, None),
    ("金曜日まで出張だった", MON, None),
    ("金曜日までに出すって言ってた", MON, None),
    ("水曜どうでしょう見た？", MON, None),  # names
    ("日曜大工で棚作った", MON, None),
    ("日曜版の記事読んだ？", MON, None),
    ("土曜出勤した", MON, None),
    ("I went every Friday.", MON, None),
    ("I liked Fridays.", MON, None),
    ("I had to finish it by Friday.", MON, None),
    ("I worked Monday through Friday.", MON, None),
    ("Mark said the party is Saturday, not Friday.", MON, None),
    ("Friday the 13th was scary", MON, None),
    ("What did I buy Black Friday?", MON, None),
    ("Did you watch Saturday Night Live?", MON, None),
    # a day said, heard or chosen: the saying is past, the day as often to come
    ("飲み会、金曜日って言ったよね？", MON, None),
    ("金曜日って言ってたっけ？", MON, None),
    ("歯医者、金曜日って言われた", MON, None),
    ("締め切り金曜日って聞いた", MON, None),
    ("金曜日ってことになった", MON, None),
    ("金曜言ったじゃん", MON, None),
    ("You said Friday, right?", MON, None),
    ("Did you say Friday?", MON, None),
    ("The doctor said Friday.", MON, None),
    ("I told him Friday", MON, None),
    ("We picked Saturday.", MON, None),
    ("What time did I say Friday?", MON, None),
    # …but the day it was said, with a particle as before, or asked what was said then
    ("金曜日に言ったよね", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("金曜日って何話したっけ", MON, (d(2026, 3, 13), d(2026, 3, 14))),
    ("What did you say Friday?", MON, None),
    # a title, a habit, a kind of thing, what a thing was
    ("Finally watched Wednesday!", MON, None),
    ("I binged Wednesday.", MON, None),
    ("Did I tell you I finished Wednesday?", MON, None),
    ("What did I think of Wednesday?", MON, None),
    ("Jenna Ortega was amazing in Wednesday!", MON, None),
    ("Did you see Jenna Ortega in Wednesday?", MON, None),
    ("I watched Freaky Friday.", MON, None),
    ("Did you watch Freaky Friday?", MON, None),
    ("We ate at Ruby Tuesday.", MON, None),
    ("Did we eat at Ruby Tuesday?", MON, None),
    ("U2 played Sunday Bloody Sunday!", MON, None),
    ("We had a party Super Bowl Sunday.", MON, None),
    ("Mom always called Sunday night.", MON, None),
    ("Did we always have church Sunday morning?", MON, None),
    ("Growing up we had church Sunday morning.", MON, None),
    ("Saturday morning cartoons were the best", MON, None),
    ("Ugh Monday morning meetings were the worst", MON, None),
    ("Friday night dinner was my favourite tradition growing up", MON, None),
    ("the deadline was Friday", MON, None),
    ("水曜日のカンパネラ好きだった", MON, None),  # a band
    ("I met him on the 15th", AUG, (d(2026, 8, 15), d(2026, 8, 16))),
    ("15日に先輩と会った", AUG, (d(2026, 8, 15), d(2026, 8, 16))),
    ("25日に何したっけ", AUG, (d(2026, 7, 25), d(2026, 7, 26))),  # still to come: last month's
    ("2日に1回ジム行ってた", AUG, None),  # every other day
    ("two weekends ago we hiked", AUG, (d(2026, 8, 8), d(2026, 8, 10))),
    # a month just past, told as past in its own sentence; plans told in the past are plans
    ("What did I do in December? I'll have to tell Mum.", JAN5, (d(2025, 12, 1), d(2026, 1, 1))),
    ("What did we talk about in October?", JAN5, (d(2025, 10, 1), d(2025, 11, 1))),
    ("12月20日に結婚式やることに決まったよ", JAN5, None),
    ("12月に引っ越すことになった", JAN5, None),
    ("I signed up for a marathon on December 14.", JAN5, None),
    ("My sister said she's due in December.", JAN5, None),
    ("Our lease ends in December, so we decided to look for a house.", JAN5, None),
    # words that count from a time
    ("What did Mel do the week before 16 November 2023?", LATE, (u(2023, 11, 9), u(2023, 11, 16))),
    ("What happened two weeks before August 11, 2023?", LATE, (u(2023, 7, 24), u(2023, 8, 1))),
    ("Where was he the Sunday before October 25, 2023?", LATE, (u(2023, 10, 22), u(2023, 10, 23))),
    ("What did I do the week after Christmas?", LATE, (u(2023, 12, 26), u(2024, 1, 2))),
    ("the day after Christmas", LATE, (u(2023, 12, 26), u(2023, 12, 27))),
    ("クリスマスの前の週に何してた？", LATE, (u(2023, 12, 17), u(2023, 12, 24))),
    ("GWの翌週どこ行った？", LATE, (u(2023, 5, 7), u(2023, 5, 14))),
    ("What did they do last weekend before April 10, 2023?", LATE, (u(2023, 4, 8), u(2023, 4, 10))),
    # a written year anchors the others
    ("What did she buy last Friday on 23 January, 2022?", LATE, (u(2022, 1, 23), u(2022, 1, 24))),
    # expressions that were missing
    ("Got the tattoo a few years ago", AUG, (d(2020, 8, 22), d(2025, 2, 19))),
    ("数年前に行った", AUG, (d(2020, 8, 22), d(2025, 2, 19))),
    ("in summer 2021 we went", AUG, (d(2021, 6, 1), d(2021, 9, 1))),
    ("the summer of 2021", AUG, (d(2021, 6, 1), d(2021, 9, 1))),
    ("What did we do on Halloween?", AUG, (d(2025, 10, 31), d(2025, 11, 1))),
    ("last Easter we went", AUG, (d(2026, 4, 3), d(2026, 4, 7))),
    ("バレンタインに何もらったっけ", AUG, (d(2026, 2, 14), d(2026, 2, 15))),
    ("the fourth of july party was fun", AUG, (d(2026, 7, 4), d(2026, 7, 5))),
    # plans, habits and counts told beside a past verb name no day
    ("I'm so excited, the party is on Saturday!", JUNE3, None),
    ("I'm so stressed about my exam on Monday.", JUNE3, None),
    ("Worked late again today. Seeing Mike on Friday.", JUNE3, None),
    ("I'm meeting Sarah on Friday, she moved back to town.", JUNE3, None),
    ("She said she'd come on Friday.", JUNE3, None),
    ("I'm going to see Dr. Smith on Friday. I was sick all week.", JUNE3, None),
    ("My mom called, she's visiting on the weekend.", JUNE3, None),
    ("I have a hundred things to do on Monday.", JUNE3, None),
    ("金曜に飲み会があるんだ", JUNE3, None),
    ("金曜は飲み会なんだよね", JUNE3, None),
    ("彼女は金曜に来るって言ってた", JUNE3, None),
    ("週末、映画見に行こうよ。昨日は疲れた", JUNE3, (d(2026, 6, 2), d(2026, 6, 3))),
    ("1日に10キロ歩いた", AUG, None),
    ("1日に何回も手を洗った", AUG, None),
    ("1日に2、3回は電話してた", AUG, None),
    ("展示会は2日にわたって開催された", AUG, None),
    ("2泊3日の旅行、楽しかった", AUG, None),
    ("夏休みに沖縄行く予定なんだ", JUNE3, None),
    ("The elevator on the 15th floor was broken again.", AUG, None),
    ("The meeting got moved, it's on the 20th now.", AUG, None),
    ("My sister got engaged, the wedding is in December.", datetime(2026, 2, 15, tzinfo=JST), None),
    (
        "I called her on the 30th",
        datetime(2026, 3, 5, tzinfo=JST),
        (d(2026, 1, 30), d(2026, 1, 31)),
    ),
    ("先月の15日に先輩と会った", AUG, (d(2026, 7, 15), d(2026, 7, 16))),  # that day
    # a year alone anchors nothing
    ("I moved here in 2019 and last week I met my neighbour", AUG, (d(2019, 1, 1), d(2026, 8, 17))),
    # words that name no time
    ("It feels like just yesterday I got married.", AUG, None),
    ("昨日のことのように覚えてる", AUG, None),
    ("年末調整の書類どこやったっけ", AUG, None),
]


@pytest.mark.parametrize(
    ("text", "now", "expected"), READ_IN_CHAT, ids=[f"{c[0]}@{c[1]:%m-%d}" for c in READ_IN_CHAT]
)
def test_time_expressions_as_chat_tells_them(
    text: str, now: datetime, expected: tuple[datetime, datetime] | None
) -> None:
    assert parse_time_window(text, now) == expected


def test_this_morning_after_midnight_finds_the_morning_memory(tmp_path: Path) -> None:
    """Asked at 00:40, "this morning" is the morning just gone: its memory is the answer."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    now = datetime(2026, 6, 13, 0, 40, tzinfo=JST)
    clock = FixedClock(now)
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        breakfast = mem.add_exchange(
            "Made pancakes with blueberries for breakfast", "Yum!", occurred_at=d(2026, 6, 12, 8)
        )
        mem.add_exchange("Rainy walk to the station", "Stay dry", occurred_at=d(2026, 6, 10, 18))
        retrieval = mem.retrieve("What did we talk about this morning?", now=now)
        assert retrieval.time_window is not None
        assert retrieval.time_window[0] == d(2026, 6, 12)
        assert retrieval.results[0].episode.id == breakfast and retrieval.should_inject


def test_a_weekday_without_a_particle_finds_that_day(tmp_path: Path) -> None:
    """「土曜日何してた？」 asked on a Monday is last Saturday's, as 「土曜日は何してた？」 is:
    that day's memory comes first, not the Friday's, Sunday's or the Saturday's before."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    now = d(2026, 12, 7, 10)  # a Monday
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        days = {
            day: mem.add_exchange(text, "いいね", occurred_at=d(2026, month, day, 20))
            for month, day, text in [
                (11, 28, "今日は友達と鎌倉に行った"),
                (12, 4, "今日は一日中家でゲームしてた"),
                (12, 5, "今日は誕生日ディナーで寿司を食べた"),
                (12, 6, "今日は雨で散歩に行けなかった"),
            ]
        }
        bare, marked = (
            mem.retrieve(q, now=now, record=False)
            for q in ("土曜日何してた？", "土曜日は何してた？")
        )
        assert bare.time_window is not None and bare.time_window == marked.time_window
        assert bare.time_window[0] <= d(2026, 12, 5) < d(2026, 12, 6) <= bare.time_window[1]
        assert bare.results[0].episode.id == marked.results[0].episode.id == days[5]


def test_a_weekday_said_is_not_the_day_asked(tmp_path: Path) -> None:
    """「美香との飲み会、金曜日って言ったよね？」 asks about the day the plan names, not last Friday:
    the plan told on Monday comes first, not the boss's drinks of the Friday before; and
    "What did I think of Wednesday?" (a show) keeps the memory that names it in the pack."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    now = d(2026, 6, 10, 12)  # a Wednesday
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        plan = mem.add_exchange(
            "美香との飲み会、今週の金曜19時に決まった！場所は一蘭",
            "楽しんで！",
            occurred_at=d(2026, 6, 8, 20),
        )
        mem.add_exchange(
            "今日は上司と飲み会、つまらなかった", "おつかれ", occurred_at=d(2026, 6, 5, 22)
        )
        mem.add_exchange("美香から猫の動画きた笑", "かわいい", occurred_at=d(2026, 6, 5, 21))
        show = mem.add_exchange(
            "Finally watched Wednesday on Netflix, Jenna Ortega is amazing",
            "The dance scene!",
            occurred_at=d(2026, 5, 1, 21),
        )
        mem.add_exchange(
            "Wednesday I had lunch with Mika at the ramen place",
            "Yum",
            occurred_at=d(2026, 6, 3, 13),
        )
        said = mem.retrieve("美香との飲み会、金曜日って言ったよね？", now=now, record=False)
        assert said.time_window is None and said.results[0].episode.id == plan
        asked = mem.retrieve("What did I think of Wednesday?", now=now, record=False)
        assert asked.time_window is None
        assert show in {r.episode.id for r in asked.results}
        assert "Finally watched Wednesday" in mem.pack(asked).text


def test_a_plan_day_recalled_is_not_last_weeks(tmp_path: Path) -> None:
    """「土曜日って何時に集合だったっけ？」 recalls the plan's time, not last Saturday: the plan told
    on Monday comes first, not 「土曜日は家でゴロゴロしてた」 of the Saturday before, which a window
    of last Saturday put above it."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    now = d(2026, 12, 9, 12)  # a Wednesday
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        plan = mem.add_exchange(
            "月曜に、土曜日は10時に駅前集合って美香と決めた",
            "楽しみだね！",
            occurred_at=d(2026, 12, 7, 12),
        )
        mem.add_exchange("土曜日は家でゴロゴロしてた", "休めた？", occurred_at=d(2026, 12, 5, 12))
        mem.add_exchange(
            "土曜日に美香と映画見に行った", "何見たの？", occurred_at=d(2026, 11, 28, 12)
        )
        recalled = mem.retrieve("土曜日って何時に集合だったっけ？", now=now, record=False)
        assert recalled.time_window is None and recalled.results[0].episode.id == plan


MAY10 = datetime(2026, 5, 10, 12, tzinfo=JST)  # a Sunday
MAY9 = (d(2026, 5, 9), d(2026, 5, 10))
LAST_MONDAY = (d(2026, 4, 27), d(2026, 5, 5))  # (either Monday it may mean)
NAMED_IN_CODE: list[tuple[str, tuple[datetime, datetime] | None]] = [
    # a time named as code is, not said of one: no window
    ("what was the git log --since=yesterday command?", None),
    ("`journalctl --since yesterday` showed nothing", None),
    ("what did the yesterday.log file contain?", None),
    ("tail -f logs/yesterday and grep it", None),
    ('date -d "last monday" printed the wrong day', None),
    ("git log --since '3 days ago' --oneline", None),
    ('the regex for "3 days ago" does not match', None),
    ("grep 'last week' in the notes", None),  # quoted as text to match
    ("正規表現の「3日前」が合わない", None),
    ("open 3 days ago.csv in the editor", None),  # a known extension
    ("cd ~/notes/today/yesterday", None),  # a path goes on beside the two times
    ("```\ncron: run backup yesterday at 2am\n```\nwhy does it fail?", None),
    ("「`date -d yesterday` の出力は何だっけ」", None),
    ("report-2026-05-01.csv は開けた？", None),
    # said of a time: still a window
    ("I saw it yesterday.", MAY9),
    ("last monday I went to the gym", LAST_MONDAY),
    ("It was yesterday.It rained all day", MAY9),  # (no space, but no file name either)
    ("what did we talk about since yesterday?", (d(2026, 5, 9), MAY10)),
    ("I ran `git pull` yesterday", MAY9),  # the code is beside the time, not around it
    ("it`s been a mess since yesterday", (d(2026, 5, 9), MAY10)),  # a backtick as apostrophe
    ("I -- no, we -- went yesterday", MAY9),
    ("先週/先々週の話", (d(2026, 4, 20), d(2026, 5, 4))),  # a slash between words
    # a sentence written without its space after a time: no file's extension
    ("I saw him yesterday.he said hi", MAY9),
    ("what happened last week.any idea?", (d(2026, 4, 27), d(2026, 5, 4))),
    ("what did we do 3 days ago.ok", (d(2026, 5, 6), d(2026, 5, 9))),
    ("İstanbul trip: yesterday.Out of options", MAY9),  # (İ lower-cased is two characters)
    # a time quoted in prose, not as text to match
    ('you said "last monday" we went hiking', LAST_MONDAY),
    ("was it 'last week' or earlier?", (d(2026, 4, 27), d(2026, 5, 4))),
    ("remind me what we did “last weekend”", (d(2026, 5, 2), d(2026, 5, 4))),
    ("「昨日」何食べたっけ", MAY9),
    # a slash between two times: both
    ("what did I say this morning/yesterday?", (d(2026, 5, 9), MAY10)),
    ("last week/this week", (d(2026, 4, 27), MAY10)),
    ("2026/5/1に行った", (d(2026, 5, 1), d(2026, 5, 2))),
]


@pytest.mark.parametrize(("text", "expected"), NAMED_IN_CODE, ids=[c[0] for c in NAMED_IN_CODE])
def test_a_time_named_in_code_names_no_time(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    """Time words in a command, a file's name or backticks set a window: the question
    about a command was searched for the day before. Then the rule for code took too much:
    a sentence after a time with no space ("yesterday.he said hi") as a file's name, a time
    quoted in prose as a pattern's, "this morning/yesterday" as a path."""
    assert parse_time_window(text, MAY10) == expected


def test_a_question_about_a_command_searches_no_window(tmp_path: Path) -> None:
    """ "what was the git log --since=yesterday command?" lifted what was said yesterday
    above the memory of the command."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    clock = FixedClock(MAY10)
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        command = mem.add_exchange(
            "To list recent commits: git log --since=yesterday --oneline",
            "Handy.",
            occurred_at=MAY10 - timedelta(days=30),
        )
        mem.add_exchange("Made pasta for dinner", "Yum.", occurred_at=MAY10 - timedelta(days=1))
        asked = mem.retrieve("what was the git log --since=yesterday command?", now=MAY10)
        assert asked.time_window is None and asked.results[0].episode.id == command
        said = mem.retrieve("what did I eat yesterday?", now=MAY10)
        assert said.time_window is not None and said.time_window[0] == MAY9[0]


def test_a_year_of_a_model_is_no_time_asked_about(tmp_path: Path) -> None:
    """2019年モデルのMacBook was read as the year 2019: "what did I do in 2019?" found the
    memory of the laptop in the time asked about, beside the one told of that year, and a
    question about the laptop searched 2019 only."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    clock = FixedClock(NOW)
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        berlin = mem.add_exchange("2019年はベルリンに住んでた", "すごい経験だね")
        laptop = mem.add_exchange("2019年モデルのMacBookがそろそろ限界", "買い替え時かもね")
        asked = mem.retrieve("2019年って何してたっけ")
        assert asked.time_window is not None and asked.time_window[0] == d(2019, 1, 1)
        marks = {x.episode.id: x.components.get("asked_time") for x in asked.results}
        assert marks[berlin] == 1.0 and marks[laptop] != 1.0
        about = mem.retrieve("2019年モデルのMacBookどうなったっけ")
        assert about.time_window is None and about.results[0].episode.id == laptop


MAR18 = datetime(2026, 3, 18, 12, tzinfo=JST)  # a Wednesday

A_DAY_OF_A_NAMED_PERIOD: list[tuple[str, tuple[datetime, datetime] | None]] = [
    ("今月の1日何した", (d(2026, 3, 1), d(2026, 3, 2))),
    ("今月の一日って何してたっけ", (d(2026, 3, 1), d(2026, 3, 2))),
    ("今月1日付で異動した", (d(2026, 3, 1), d(2026, 3, 2))),
    ("先月の15日に先輩と会った", (d(2026, 2, 15), d(2026, 2, 16))),
    ("先月15日何した？", (d(2026, 2, 15), d(2026, 2, 16))),
    ("先々月の十日に会った", (d(2026, 1, 10), d(2026, 1, 11))),
    ("今月の20日何する？", None),  # still to come: a plan
    ("先月の30日に行った", None),  # February has none
    ("今月の3日間は忙しかった", (d(2026, 3, 1), MAR18)),  # days counted: the month
    ("先月2日休んだだけ", (d(2026, 2, 1), d(2026, 3, 1))),
    ("先週の今日何した", (d(2026, 3, 11), d(2026, 3, 12))),
    ("先々週の今日", (d(2026, 3, 4), d(2026, 3, 5))),
    ("先月の今日は雨だった", (d(2026, 2, 18), d(2026, 2, 19))),
    ("去年の今日何してた？", (d(2025, 3, 18), d(2025, 3, 19))),
    ("先々週の土曜何した", (d(2026, 3, 7), d(2026, 3, 8))),
    ("先先週の土曜日に行った", (d(2026, 3, 7), d(2026, 3, 8))),
    ("せんせんしゅうの金曜", (d(2026, 3, 6), d(2026, 3, 7))),
    ("先週の土曜何した", (d(2026, 3, 14), d(2026, 3, 15))),
    ("what did I do on the 1st of this month?", (d(2026, 3, 1), d(2026, 3, 2))),
    ("we met on the 3rd of last month", (d(2026, 2, 3), d(2026, 2, 4))),
    ("what did I do this day last week?", (d(2026, 3, 11), d(2026, 3, 12))),
    ("what did we talk about a week ago today?", (d(2026, 3, 11), d(2026, 3, 12))),
    ("what did I do on Saturday two weeks ago?", (d(2026, 3, 7), d(2026, 3, 8))),
    ("what did I do the Saturday before last?", (d(2026, 3, 7), d(2026, 3, 8))),
]


@pytest.mark.parametrize(
    ("text", "expected"), A_DAY_OF_A_NAMED_PERIOD, ids=[c[0] for c in A_DAY_OF_A_NAMED_PERIOD]
)
def test_a_day_of_a_named_week_or_month_is_that_day(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    """今月の1日, 先週の今日, 先々週の土曜 (and "the 1st of this month", "this day last week",
    "the Saturday before last") name one day: they were read as the whole week or month."""
    assert parse_time_window(text, MAR18) == expected


def test_a_day_of_a_named_week_or_month_finds_that_days_memory(tmp_path: Path) -> None:
    """Asked on Wednesday 18 March, 今月の1日何した finds the memory of 1 March alone, 先週の今日
    that of 11 March and 先々週の土曜 that of 7 March, not last week's Saturday's nor every
    memory of the month or the week."""


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        # a laugh, a kaomoji or the asker's own "I" names nothing beside the time
        ("先週の金曜なにした（笑）", True),
        ("先週の金曜なにした笑", True),
        ("先週の金曜なにした？？（笑）", True),
        ("先週の金曜なにしたｗ", True),
        ("先週の金曜なにしたｗｗ", True),
        ("先週の金曜なにしたwww", True),
        ("先週の金曜なにした(´・ω・｀)", True),
        ("先週の金曜なにした(・・;)", True),
        ("先週の金曜って俺なにしてた", True),
        ("先週の金曜、私なにしてた？", True),
        ("先週の金曜って僕なにしてた？", True),
        ("昨日なにしてた？ｗ", True),
        ("what did I do last friday lol", True),
        ("what did me and you do last friday haha", True),
        ("what did I do last friday xD", True),
        ("what did I do last friday hehe", True),
        # … but what was laughed at, a meeting or a katakana word is a topic
        ("先週の金曜なんで笑ったんだっけ", False),
        ("先週の金曜の会議どうだった（笑）", False),
        ("先週の金曜ラーメン食べたっけｗ", False),
        ("what did I watch last friday lol", False),
    ],
)
def test_a_laugh_a_kaomoji_or_the_askers_i_is_no_topic(text: str, asked: bool) -> None:
    """笑, ｗ, the ・ of a kaomoji's eyes (a katakana character by its block) and 俺 or 私
    each counted as a topic, so the asked time was not lifted."""
    assert time_is_asked(text, find_time_expressions(text, NOW)) is asked


def test_a_laugh_after_the_question_keeps_last_friday_first(tmp_path: Path) -> None:
    """「先週の金曜なにした？？（笑）」 packed the Friday before first, as high: the laugh made
    the time no longer the question, and that Friday's memory, which says 金曜 and 笑, won on
    its words. Last Friday's memory comes first and is packed, as without the laugh."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(MAR18)) as mem:
        days = {
            day: mem.add_exchange(text, "いいね", occurred_at=d(2026, 3, day, 20))
            for day, text in [
                (1, "今日は友達と鎌倉に行った"),
                (5, "今日は一日中家でゲームしてた"),
                (7, "今日は誕生日ディナーで寿司を食べた"),
                (11, "今日は雨で散歩に行けなかった"),
                (14, "今日は映画を見に行った"),
                (16, "今日は新しいカフェを開拓した"),
            ]
        }
        for question, day in [
            ("今月の1日何した", 1),
            ("先週の今日何した", 11),
            ("先々週の土曜何した", 7),
        ]:
            asked = mem.retrieve(question, now=MAR18, record=False)
            assert asked.time_window is not None, question
            assert asked.time_window[0] == d(2026, 3, day), question
            assert asked.results[0].episode.id == days[day], question
            assert mem.pack(asked).episode_ids == (days[day],), question

    now = d(2026, 6, 10, 12)  # a Wednesday
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        mem.add_exchange(
            "金曜の夜は同僚と焼肉に行った（笑）", "いいね", occurred_at=d(2026, 5, 29, 21)
        )
        last = mem.add_exchange(
            "今日は映画館でスパイダーマンを観てきた", "どうだった？", occurred_at=d(2026, 6, 5, 21)
        )
        for query in (
            "先週の金曜なにした？？",
            "先週の金曜なにした？？（笑）",
            "先週の金曜なにした(´・ω・｀)",
            "先週の金曜って俺なにしてた？ｗ",
        ):
            got = mem.retrieve(query, now=now, record=False)
            assert got.time_window == (d(2026, 6, 5), d(2026, 6, 7)), query
            assert got.results[0].episode.id == last, query
            assert got.results[0].relevance != "low", query
            assert "スパイダーマン" in mem.pack(got).text, query


DEC5 = datetime(2026, 12, 5, 12, tzinfo=JST)  # a Saturday

A_RANGE_OF_DAYS: list[tuple[str, tuple[datetime, datetime] | None]] = [
    ("先月の1日〜10日なにしてた？", (d(2026, 11, 1), d(2026, 11, 11))),
    ("今月の1日〜3日何してた？", (d(2026, 12, 1), d(2026, 12, 4))),
    ("先月の10日〜15日何してた？", (d(2026, 11, 10), d(2026, 11, 16))),
    ("先月の1日から10日まで何してた？", (d(2026, 11, 1), d(2026, 11, 11))),
    ("先月15日〜20日何してた", (d(2026, 11, 15), d(2026, 11, 21))),
    ("先月の一日から十日まで何した", (d(2026, 11, 1), d(2026, 11, 11))),
    ("先月の1日〜31日何してた？", (d(2026, 11, 1), d(2026, 12, 1))),  # to its last day
    ("先月の25日〜5日何してた？", (d(2026, 11, 25), DEC5)),  # on into this month, to now
    ("11月1日〜10日何してた？", (d(2026, 11, 1), d(2026, 11, 11))),
    ("11月1日から10日まで何してた？", (d(2026, 11, 1), d(2026, 11, 11))),
    ("去年の3月1日〜3日何してた？", (d(2025, 3, 1), d(2025, 3, 4))),
    ("2025年3月1日から3日まで何してた？", (d(2025, 3, 1), d(2025, 3, 4))),
    ("今月の1日から何してた？", (d(2026, 12, 1), DEC5)),  # from it, to now, as before
    ("12月3日から5日間休み", (d(2026, 12, 3), DEC5)),  # a length, no end day
    ("今月の10日〜15日何する？", None),  # still to come: a plan
    ("先月の31日何してた？", None),  # November has none, as 2月30日 names no day
]


@pytest.mark.parametrize(("text", "expected"), A_RANGE_OF_DAYS, ids=[c[0] for c in A_RANGE_OF_DAYS])
def test_a_range_of_days_is_those_days(
    text: str, expected: tuple[datetime, datetime] | None
) -> None:
    """先月の1日〜10日 was read as its first day alone (the range's end was left out), and
    先月の1日から10日まで as from that day to now; 11月1日〜10日 too."""
    assert parse_time_window(text, DEC5) == expected


def test_a_range_of_days_finds_those_days_memories(tmp_path: Path) -> None:
    """Asked on 5 December, 先月の1日〜10日なにしてた？ finds the memories of 1 to 10 November,
    not only that of the 1st, nor those of later in November."""
    from memengine import FixedClock, Memory

    from .helpers import HashEmbedder

    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(DEC5)) as mem:
        days = {
            day: mem.add_exchange(text, "いいね", occurred_at=d(2026, 11, day, 20))
            for day, text in [
                (1, "今日は友達と鎌倉に行った"),
                (6, "今日は一日中家でゲームしてた"),
                (9, "今日は誕生日ディナーで寿司を食べた"),
                (20, "今日は雨で散歩に行けなかった"),
                (28, "今日は映画を見に行った"),
            ]
        }
        asked = mem.retrieve("先月の1日〜10日なにしてた？", now=DEC5, record=False)
        # (the ten days, and half their length after them for memories told late)
        assert asked.time_window == (d(2026, 11, 1), d(2026, 11, 16))
        packed = set(mem.pack(asked).episode_ids)
        assert {days[1], days[6], days[9]} <= packed
        assert not {days[20], days[28]} & packed


def test_each_time_of_a_long_sentence_is_read_as_in_a_short_one() -> None:
    """A comma-joined list is one sentence, which each of its times reads (told as past,
    looking ahead); it was found and searched again for each of them, and a list of a few
    thousand characters took seconds. Read once per text, each reads as it did."""
    parts = ["I went there on Monday at 1pm", "on Tuesday at 2pm", "and on Friday at 3pm"]
    plan = " Seeing Mike on Saturday."
    short = find_time_expressions(", ".join(parts) + "." + plan, NOW)
    long = ", ".join(parts * 40) + "." + plan
    found = find_time_expressions(long, NOW, max_chars=len(long))
    assert [e.surface for e in short] == ["on monday", "on tuesday", "on friday"]
    assert found == short * 40


def test_a_times_sentence_is_the_one_scanned_up_to_it() -> None:
    """The sentence of a time found once per text (:class:`Sentences`) is the one found
    by scanning the text up to the time: a full stop before a space, 。, ！, a line break
    or the time's own start end one; "Dr." and "Mrs." none."""
    from memengine.retrieve.time_rules import SENTENCE_END, Sentences

    def scanned(text: str, start: int, end: int) -> tuple[int, int]:
        first = 0
        for m in SENTENCE_END.finditer(text, 0, start):
            first = m.end()
        after = SENTENCE_END.search(text, end)
        return first, after.end() if after else len(text)

    texts = [
        "I saw Dr. Sato on monday. Then Mrs. Ito on tuesday! And st. monday",
        "it was yesterday.it rained on monday.monday\nmonday？月曜日。月曜日",
        "mr.monday, ms. monday. vs.monday",
        "monday",
        "...monday...",
    ]
    for text in texts:
        read = Sentences(text)
        for m in re.finditer("monday|tuesday|yesterday|月曜日", text):
            assert read.bounds(m.start(), m.end()) == scanned(text, m.start(), m.end()), (text, m)


def test_each_date_of_a_long_list_with_years_is_kept() -> None:
    """Each time of a sentence is weighed against each date with its year in it, whether
    a sentence ends between them; searched between each pair, a list of dates of 2,000
    characters took seconds. Found once per text, each is kept as alone."""
    one = find_time_expressions("I was there on 3 May 2022, back on 9 May 2022.", NOW)
    many = ", ".join(["I was there on 3 May 2022", "back on 9 May 2022"] * 60) + "."
    assert len(one) == 2
    assert find_time_expressions(many, NOW, max_chars=len(many)) == one * 60
