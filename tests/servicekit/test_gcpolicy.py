"""The garbage collector's pacing in a service process (servicekit.gcpolicy, FELT_GC_THRESHOLDS) and its
pauses on /metrics: a full collection stops every call in flight, so operators see each one."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from servicekit import gcpolicy
from servicekit.config import ConfigError
from servicekit.testing import ServiceProcess

ROOT = Path(__file__).resolve().parents[2]


def test_thresholds_parse_as_three_positive_numbers() -> None:
    assert gcpolicy.parse_thresholds("700, 10,10") == (700, 10, 10)
    for bad in ("700,10", "700,10,10,10", "0,10,10", "a,b,c", "-1,5,5"):
        with pytest.raises(ValueError):
            gcpolicy.parse_thresholds(bad)


def test_configure_sets_the_thresholds_and_times_collections() -> None:
    before = gc.get_threshold()
    try:
        assert gcpolicy.configure(environ={}) == gcpolicy.DEFAULT_THRESHOLDS
        assert gcpolicy.configure(environ={"FELT_GC_THRESHOLDS": "1234,7,9"}) == (1234, 7, 9)
        assert gc.get_threshold() == (1234, 7, 9)
        full = gcpolicy.PAUSE_SECONDS.labels("2")
        counted = full._sum.get(), _count(full)
        gc.collect()
        assert _count(full) == counted[1] + 1 and full._sum.get() > counted[0]
        with pytest.raises(ConfigError, match="FELT_GC_THRESHOLDS"):
            gcpolicy.configure(environ={"FELT_GC_THRESHOLDS": "700,10"})
    finally:
        gc.set_threshold(*before)


def _count(histogram_child: object) -> float:
    return sum(bucket.get() for bucket in histogram_child._buckets)  # type: ignore[attr-defined]


def test_a_service_process_uses_the_setting_and_reports_its_pauses(tmp_path: Path) -> None:
    process = ServiceProcess("evaluator", tmp_path, cwd=ROOT, env={"FELT_GC_THRESHOLDS": "5000,10,10"})
    process.start()
    try:
        with urllib.request.urlopen(process.metrics_url, timeout=5) as reply:
            text = reply.read().decode()
        # The collection before the start-up objects are frozen is a full one, and it was timed.
        full = re.search(r'^python_gc_pause_seconds_count\{generation="2"\} (\S+)$', text, re.M)
        assert full is not None and float(full.group(1)) >= 1, text[:2000]
    finally:
        process.stop()


def test_a_malformed_setting_stops_the_start_and_names_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.evaluator", "--port", "0", "--metrics-port", "0"],
        cwd=ROOT,
        env={**os.environ, "FELT_GC_THRESHOLDS": "700"},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert b"FELT_GC_THRESHOLDS" in done.stderr
