"""How a LoCoMo sample becomes a conversation to evaluate (no shared data needed)."""

from __future__ import annotations

from datetime import datetime, timezone

from memengine.evaluation.locomo import load_locomo


def test_the_locomo_clock_is_a_day_after_the_last_session_that_holds_turns() -> None:
    """conv-26 dates 35 sessions and holds 19: the clock was set a day after a session
    without turns, ten weeks late, and time words were read against that day."""
    turn = {"speaker": "Ann", "dia_id": "D1:1", "text": "I went camping in June."}
    sample = {
        "sample_id": "s",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [turn],
            "session_2_date_time": "10:00 am on 5 January, 2024",
            "session_2": [],
            "session_3_date_time": "10:00 am on 6 January, 2024",
        },
        "qa": [],
    }
    conv = load_locomo(sample)
    assert conv.now == datetime(2023, 5, 9, 13, 56, tzinfo=timezone.utc)


def test_the_settings_a_result_records_hide_secrets() -> None:
    from memengine.config import load_config
    from memengine.evaluation.provenance import changed_settings

    cfg = load_config(
        None,
        environ={
            "MEMENGINE_LLM__API_KEY": "sk-live-SECRET",
            "MEMENGINE_LLM__BASE_URL": "https://user:pw@llm.example/v1",
            "MEMENGINE_RETRIEVAL__KNN_WEIGHT": "0.5",
        },
    )
    shown = changed_settings(cfg)
    assert shown == {
        "llm.api_key": "***",
        "llm.base_url": "https://***@llm.example/v1",
        "retrieval.knn_weight": 0.5,
    }
