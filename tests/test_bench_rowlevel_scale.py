"""bench/rowlevel_scale.py's own parts, without Spark: the memory sampler of a process tree, the
report, and bench/jvm.py's Java snippet kept whole for section (h) after its split into parts."""
from __future__ import annotations

import subprocess
import sys
import time

from bench import jvm, rowlevel_scale


def test_tree_sampler_reports_each_roles_peak_and_the_load():
    # a driver holding ~20 MB, whose child holds ~120 MB for a moment and then exits: the child's
    # peak is kept after it has gone, under the workers' role (it is not a java process)
    code = ("import subprocess, sys, time; a = bytearray(20 << 20); "
            "subprocess.run([sys.executable, '-c', 'import time; b = bytearray(120 << 20); time.sleep(1.5)']); "
            "time.sleep(0.3)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    with rowlevel_scale.TreeSampler(proc.pid, every=0.1) as sampler:
        proc.wait()
    got = sampler.result()
    assert got["peak_rss_mb"]["driver"] >= 20
    assert got["peak_rss_mb"]["workers"] >= 120
    assert "jvm" not in got["peak_rss_mb"]
    assert got["peak_tree_rss_mb"] >= 140
    assert got["load_1min"]["max"] >= got["load_1min"]["mean"] > 0


def test_report_names_every_figure_its_ratio_and_each_sides_memory():
    side = {"peak_rss_mb": {"driver": 200, "jvm": 2400}, "peak_tree_rss_mb": 2700, "wall_s": 12.0,
            "load_1min": {"mean": 3.5, "max": 4.0}}
    res = {"rows": 1000, "memory": "2g", "icefloe_spark": "4", "iceberg": "1.10", "jvm_spark": "3.5",
           "figures": {"merge-on-read:merge": {"icefloe_s": 1.0, "jvm_s": 2.0, "ratio": 0.5},
                       "merge-on-read:update": {"icefloe_s": 3.0, "jvm_s": 2.0, "ratio": 1.5},
                       "merge-on-read:scan_after": {"icefloe_s": 3.0, "jvm_s": None, "ratio": None}},
           "sides": {"merge-on-read": {"icefloe": side, "java": {**side, "error": ["OutOfMemoryError: direct"]}}}}
    text = "\n".join(rowlevel_scale.report_lines(res))
    assert "merge-on-read:merge" in text and "0.50  <= 1.0 met" in text
    assert "1.50  <= 1.0 NOT met" in text
    assert "merge-on-read, icefloe: peak RSS driver 200 MB, jvm 2,400 MB; tree 2,700 MB" in text
    assert "load (1 min) mean 3.5, max 4.0" in text
    # a side whose statement failed: no time, no ratio, and its error named
    assert [ln for ln in text.splitlines() if "scan_after" in ln][0].split()[1:] == ["3.00s", "failed"]
    assert "java failed: OutOfMemoryError: direct" in text


def test_section_h_snippet_keeps_its_statements_in_order():
    run = jvm.JVM_RUN
    order = ["data = spark.sql(DATA_SQL", "timed('parquet_write'", "read_timed('parquet_scan'", "timed('append'",
             "t['scan_result']", "for mode in MODES:", "timed(mode + ':merge'", "timed(mode + ':delete'",
             "timed(mode + ':update'", "read_timed(mode + ':scan_after'", "result = t"]
    at = [run.index(s) for s in order]
    assert at == sorted(at)
    params = jvm.jvm_params(10, "/x")
    # section (h): every mode, repeated reads, the mode tables' appends untimed and kept
    assert params["MODES"] == list(jvm.MODES) and params["READ_MIN"] == jvm.READ_MIN
    assert params["TIME_MODE_APPEND"] is False and params["DROP_AFTER"] is False
    scale = jvm.jvm_params(10, "/x", modes=rowlevel_scale.MODES, read=rowlevel_scale.ONE_READ,
                           time_mode_append=True, drop_after=True)
    assert scale["MODES"] == list(rowlevel_scale.MODES)
    assert set(scale["MODE_SETTINGS"]) == set(rowlevel_scale.MODES)
    assert (scale["READ_MIN"], scale["READ_SECONDS"], scale["READ_RUNS"]) == rowlevel_scale.ONE_READ


def test_status_of_a_gone_process_is_zero():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    time.sleep(0.05)
    assert rowlevel_scale._status_kb(proc.pid, "VmHWM") == 0
    assert rowlevel_scale._children(proc.pid) == []
