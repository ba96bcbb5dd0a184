"""``explain fetch`` and ``explain replication``: the purgatory's answers for a given state, the high watermark
and the fate of produces, each step naming a zkafka function that exists."""

from __future__ import annotations

import importlib

from click.testing import CliRunner

from zkafka.cli import main
from zkafka.explain.fetch import explain_fetch
from zkafka.explain.replication import explain_replication


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name, None)
        return value is not None
    return False


def test_a_fetch_with_enough_bytes_is_answered_at_once():
    steps = explain_fetch(available_bytes=2000, min_bytes=1000).steps
    assert steps[-1].title.startswith("answered at once: 2000 bytes readable >= min_bytes 1000")


def test_a_fetch_with_max_wait_zero_is_answered_at_once_even_empty():
    steps = explain_fetch(available_bytes=0, min_bytes=10, max_wait_ms=0).steps
    assert "max_wait_ms 0 <= 0" in steps[-1].title and "an empty message set" in steps[-1].lines[0]


def test_a_parked_fetch_is_completed_by_the_append_that_reaches_min_bytes():
    steps = explain_fetch(0, 1000, 500, appends=[(300, 700), (120, 400), (450, 5)]).steps
    assert "parked in the fetch purgatory" in steps[1].title
    assert "still below min_bytes" in steps[2].title and "+300 ms" in steps[3].title
    assert steps[3].title.endswith("enough: completed") and len(steps) == 4


def test_a_parked_fetch_expires_at_max_wait_with_what_there_is():
    steps = explain_fetch(0, 1000, 500, appends=[(100, 10), (600, 5000)]).steps
    assert steps[-1].title.startswith("+500 ms: max_wait_ms ends") and "10 bytes" in steps[-1].lines[0]


def test_an_error_or_a_segment_behind_answers_at_once():
    assert "NOT_LEADER" in explain_fetch(0, 1, error="NOT_LEADER_FOR_PARTITION").steps[-1].title
    assert "older segment" in explain_fetch(0, 100, behind=True).steps[-1].title


def test_the_high_watermark_is_the_smallest_leo_of_the_isr_and_parks_what_lies_above():
    steps = explain_replication({1: 120, 2: 110, 3: 90}, [1, 2], 1, produces=[105, 120]).steps
    assert "= 110" in steps[1].title and "replica 3 is out of the ISR" in steps[1].lines[1]
    assert "completes with no error" in steps[2].title
    assert "HW 110 < 120: stays parked" in steps[3].title


def test_an_isr_below_min_insync_fails_new_produces_and_answers_appended_ones_after_append():
    steps = explain_replication({1: 50, 2: 30}, [1], 1, min_insync_replicas=2, produces=[40]).steps
    assert "NOT_ENOUGH_REPLICAS_AFTER_APPEND" in steps[-2].title
    assert "NOT_ENOUGH_REPLICAS, nothing appended" in steps[-1].title
    assert "caught up to the HW" not in " ".join(s.title for s in steps)


def test_a_follower_at_the_high_watermark_rejoins_and_acks_n_counts_isr_replicas():
    steps = explain_replication({1: 50, 2: 50, 3: 50}, [1, 2], 1, acks=2, produces=[50]).steps
    assert any("replicas [3] caught up" in s.title for s in steps)
    assert any("2 ISR replicas hold it: completes" in s.title for s in steps)


def test_the_high_watermark_never_moves_back():
    assert "= 70" in explain_replication({1: 80, 2: 60}, [1, 2], 1, high_watermark=70).steps[1].title


def test_every_step_names_a_function_that_exists():
    explained = [
        explain_fetch(0, 1000, 500, [(10, 5), (20, 2000)]),
        explain_fetch(0, 1000, 500),
        explain_fetch(5, 1),
        explain_replication({1: 5, 2: 3, 3: 5}, [1, 2], 1, produces=[4, 5]),
        explain_replication({1: 5, 2: 3}, [1], 1, acks=1, min_insync_replicas=2, produces=[4]),
    ]
    for explanation in explained:
        for step in explanation.steps:
            assert resolves(step.where), step.where


def test_the_commands_print_the_steps():
    runner = CliRunner()
    fetch = runner.invoke(
        main, ["explain", "fetch", "--available-bytes", "0", "--min-bytes", "100", "--append", "50:200"]
    )
    assert fetch.exit_code == 0 and "+50 ms" in fetch.output and "completed" in fetch.output
    replication = runner.invoke(
        main,
        ["explain", "replication", "--replica", "1:10", "--replica", "2:4", "--isr", "1,2", "--produce", "8"],
    )
    assert replication.exit_code == 0 and "= 4" in replication.output and "stays parked" in replication.output
    bad = runner.invoke(main, ["explain", "replication", "--replica", "1:x"])
    assert bad.exit_code != 0 and "A:B" in bad.output
