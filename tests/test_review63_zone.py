"""Session 63's review of the time zones: a ``now`` given in UTC, a ``TZ`` that names no
zone, a local time a summer-time change skips or repeats, and a fixed offset's days."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memengine import Config, FixedClock, Memory
from memengine.config import _zone_named

from .helpers import HashEmbedder

TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YORK = ZoneInfo("America/New_York")


def _tokyo_memory(path: Path) -> Memory:
    clock = FixedClock(datetime(2026, 5, 1, tzinfo=timezone.utc))
    mem = Memory.open(
        path, config=Config(time_zone="Asia/Tokyo"), embedder=HashEmbedder(), clock=clock
    )
    mem.add_exchange(
        "妹のあいこが来てラーメン食べた",
        "楽しそう",
        occurred_at=datetime(2026, 5, 15, 7, tzinfo=TOKYO),
    )
    return mem


@pytest.mark.parametrize(
    "utc", [timezone.utc, ZoneInfo("UTC"), ZoneInfo("Etc/UTC"), timezone(timedelta(0))]
)
def test_a_now_given_in_utc_is_read_in_the_configured_zone(tmp_path: Path, utc: object) -> None:
    """``retrieve(now=datetime.now(timezone.utc))``, a server's idiom, read 昨日 as a day of
    UTC: at 08:00 on the 16th in Tokyo (23:00 UTC on the 15th) the window was the 14th
    and the pack's 今日 the 15th."""
    with _tokyo_memory(tmp_path / "m.db") as mem:
        now = datetime(2026, 5, 16, 8, tzinfo=TOKYO).astimezone(utc)  # type: ignore[arg-type]
        r = mem.retrieve("昨日何したっけ？", now=now, record=False)
        assert r.now == now and r.now is not None and r.now.utcoffset() == timedelta(hours=9)
        assert r.time_window is not None
        assert r.time_window[0] == datetime(2026, 5, 15, tzinfo=TOKYO)
        pack = mem.pack(r).text
        assert "今日: 2026-05-16" in pack and "## 2026-05-15" in pack


def test_a_now_in_another_zone_is_that_users_own(tmp_path: Path) -> None:
    """A per-user zone on a server wins over time_zone, +00:00 of a people's zone too."""
    with _tokyo_memory(tmp_path / "m.db") as mem:
        for zone in (NEW_YORK, ZoneInfo("Europe/London"), timezone(timedelta(hours=-3))):
            now = datetime(2026, 1, 16, 8, tzinfo=zone)
            r = mem.retrieve("昨日何したっけ？", now=now, record=False)
            assert r.now is not None and r.now.tzinfo is zone and r.time_window is not None
            assert r.time_window[0] == datetime(2026, 1, 15, tzinfo=zone)


def test_a_fixed_offset_of_the_configured_zone_keeps_its_summer_time(tmp_path: Path) -> None:
    """``datetime.now().astimezone()`` carries an offset (-04:00), not the zone: "yesterday"
    on the day after summer time began started at 00:00-04:00, an hour off the day."""
    clock = FixedClock(datetime(2026, 3, 1, tzinfo=timezone.utc))
    cfg = Config(time_zone="America/New_York")
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("Baked banana bread", "Yum", occurred_at=datetime(2026, 3, 8, 10))
        now = datetime(2026, 3, 9, 12, tzinfo=timezone(timedelta(hours=-4)))
        r = mem.retrieve("what did I do yesterday?", now=now, record=False)
        assert r.now is not None and str(r.now.tzinfo) == "America/New_York" and r.now == now
        assert r.time_window is not None
        assert r.time_window[0] == datetime(2026, 3, 8, tzinfo=NEW_YORK)  # (at -05:00)
    assert str(cfg.message_time(now).tzinfo) == "America/New_York"
    assert Config().message_time(now).tzinfo is now.tzinfo  # (no zone set: as given)


@pytest.fixture
def fresh_tz_cache() -> object:
    _zone_named.cache_clear()
    yield None
    _zone_named.cache_clear()


def test_a_tz_that_names_no_zone_is_utc_and_says_so(
    monkeypatch: pytest.MonkeyPatch, fresh_tz_cache: object
) -> None:
    """``TZ=Asia/Tokio`` with time_zone "local" fell back to UTC in silence, and the CLI's
    title named the C library's abbreviation ("times in Asia")."""
    from memengine.config import TimeZoneWarning
    from memengine.diagnostics import _zone_check

    monkeypatch.setenv("TZ", "Asia/Tokio")
    cfg = Config(time_zone="local")
    at = datetime(2026, 5, 1, tzinfo=timezone.utc)
    with pytest.warns(TimeZoneWarning, match=r"TZ='Asia/Tokio' names no time zone"):
        moment = cfg.in_zone(at)
    assert getattr(moment.tzinfo, "key", None) == "UTC"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg.in_zone(at)  # (once)
    ok, detail = _zone_check(cfg)
    assert not ok and detail.startswith("UTC (time_zone = 'local': TZ='Asia/Tokio'")
    monkeypatch.setenv("TZ", "JST-9")  # a POSIX rule: the C library's, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg.in_zone(at)
    assert _zone_check(cfg)[0] and "a POSIX rule" in _zone_check(cfg)[1]
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert _zone_check(cfg) == (True, "Asia/Tokyo (time_zone = 'local': TZ=Asia/Tokyo)")
    assert _zone_check(Config(time_zone="Europe/Paris")) == (True, "Europe/Paris (time_zone)")


def test_the_cli_warns_of_a_tz_that_names_no_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None, fresh_tz_cache: object
) -> None:
    from typer.testing import CliRunner

    from memengine.cli import app

    db = str(tmp_path / "z.db")
    runner = CliRunner()
    monkeypatch.setenv("MEMENGINE_TIME_ZONE", "local")
    monkeypatch.setenv("TZ", "Garbage/Zone")
    added = runner.invoke(app, ["add", "I adopted a cat", "--at", "2026-01-01T10:00", "--db", db])
    assert added.exit_code == 0
    assert added.stderr.count("warning: TZ='Garbage/Zone' names no time zone") == 1
    found = runner.invoke(app, ["search", "cat", "--db", db])  # (warned once a process)
    assert "1 result (times in UTC)" in found.stdout and "2026-01-01 10:00" in found.stdout


def test_a_local_time_a_summer_time_change_skips_is_stored_at_its_real_offset() -> None:
    """02:30 on the day New York's clocks skip from 02:00 to 03:00 was stored as
    02:30-05:00 (searches show 03:30); a repeated hour's time quietly took the first."""
    cfg = Config(time_zone="America/New_York")
    skipped = cfg.localize(datetime(2026, 3, 8, 2, 30))
    assert skipped.isoformat() == "2026-03-08T03:30:00-04:00"
    assert skipped == datetime(2026, 3, 8, 7, 30, tzinfo=timezone.utc)
    twice = cfg.localize(datetime(2026, 11, 1, 1, 30))
    assert twice.isoformat() == "2026-11-01T01:30:00-04:00"
    assert cfg.localize(datetime(2026, 11, 1, 1, 30, fold=1)).utcoffset() == timedelta(hours=-5)
    assert "does not exist in America/New_York" in cfg.local_time_note(datetime(2026, 3, 8, 2, 30))
    assert "2026-03-08T03:30:00-04:00" in cfg.local_time_note(datetime(2026, 3, 8, 2, 30))
    note = cfg.local_time_note(datetime(2026, 11, 1, 1, 30))
    assert "happens twice" in note and "2026-11-01T01:30:00-05:00" in note
    assert cfg.local_time_note(datetime(2026, 5, 1, 10)) == ""
    assert Config().local_time_note(datetime(2026, 3, 8, 2, 30)) == ""  # (UTC: none skipped)


def test_add_at_a_skipped_or_repeated_local_time_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None
) -> None:
    from typer.testing import CliRunner

    from memengine.cli import app

    db = str(tmp_path / "a.db")
    runner = CliRunner()
    monkeypatch.setenv("MEMENGINE_TIME_ZONE", "America/New_York")
    skipped = runner.invoke(app, ["add", "Lost an hour", "--at", "2026-03-08T02:30", "--db", db])
    assert skipped.exit_code == 0
    assert "note: 2026-03-08T02:30:00 does not exist in America/New_York" in skipped.stderr
    twice = runner.invoke(app, ["add", "Baked bread", "--at", "2026-11-01T01:30", "--db", db])
    assert "note: 2026-11-01T01:30:00 happens twice" in twice.stderr
    given = runner.invoke(app, ["add", "Fed the cat", "--at", "2026-11-01T01:30-05:00", "--db", db])
    assert given.exit_code == 0 and given.stderr == ""
    shown = runner.invoke(app, ["show", "1", "--db", db]).stdout
    assert "occurred_at: 2026-03-08T03:30:00-04:00" in shown
