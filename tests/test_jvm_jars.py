"""The JVM referees' jars (``tools/maven_jars.py``): pinned coordinates and SHA-256 in ``jvm-jars.txt``,
fetched by Maven into a cache and checked; tests use the cache without the network. A fake ``mvn``
stands in for Maven here, so nothing is downloaded."""
import hashlib
import os
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools import maven_jars  # noqa: E402

CONTENT = b"PK\x03\x04 not really a jar"


def fake_mvn(tmp_path, content: bytes):
    """An executable that, like ``mvn dependency:copy``, writes ``<artifact>-<version>.jar`` into
    ``-DoutputDirectory`` and logs its arguments."""
    script = tmp_path / "mvn"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, pathlib
        args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("-D") and "=" in a)
        g, a, v = args["artifact"].split(":")
        pathlib.Path(args["outputDirectory"], f"{{a}}-{{v}}.jar").write_bytes({content!r})
        with open({str(tmp_path / "calls")!r}, "a") as log:
            log.write(args["artifact"] + "\\n")
        """))
    script.chmod(0o755)
    return str(script)


def pins_file(tmp_path, sha):
    f = tmp_path / "jars.txt"
    f.write_text(f"# test pins\ncom.example:thing:1.2 {sha}\n")
    return f


def test_pinned_file_names_both_runtimes():
    pinned = maven_jars.pins()
    assert pinned["iceberg-spark-runtime-3.5_2.12"].version.startswith("1.10.")
    assert pinned["paimon-spark-3.5"].group == "org.apache.paimon"
    assert pinned["paimon-bundle"].version.startswith("1.")       # the second Paimon referee, without Spark
    assert all(len(j.sha256) == 64 for j in pinned.values())


def test_fetch_keeps_a_jar_with_the_pinned_checksum_and_tests_read_it_without_maven(tmp_path):
    pins = pins_file(tmp_path, hashlib.sha256(CONTENT).hexdigest())
    cache = tmp_path / "cache"
    with pytest.raises(maven_jars.JarError, match="run `make jvm`"):
        maven_jars.path("thing", cache, pins)
    mvn = fake_mvn(tmp_path, CONTENT)
    [got] = maven_jars.fetch(cache, mvn=mvn, pins_file=pins)
    assert got == cache / "thing-1.2.jar" and got.read_bytes() == CONTENT
    assert maven_jars.fetch(cache, mvn=mvn, pins_file=pins) == [got]          # cached: Maven not asked again
    assert (tmp_path / "calls").read_text() == "com.example:thing:1.2\n"
    assert maven_jars.path("thing", cache, pins) == got
    with pytest.raises(maven_jars.JarError, match="not pinned"):
        maven_jars.path("other", cache, pins)


def test_a_checksum_mismatch_is_an_error_and_the_fetched_file_is_not_kept(tmp_path):
    pins = pins_file(tmp_path, "0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(maven_jars.JarError, match=f"SHA-256 is {hashlib.sha256(CONTENT).hexdigest()}.*pins 0000"):
        maven_jars.fetch(cache, mvn=fake_mvn(tmp_path, CONTENT), pins_file=pins)
    assert list(cache.iterdir()) == []
    # a cached jar that changed after the fetch is refused where tests read it
    (cache / "thing-1.2.jar").write_bytes(CONTENT)
    with pytest.raises(maven_jars.JarError, match="is not the pinned com.example:thing:1.2"):
        maven_jars.path("thing", cache, pins)


def test_a_malformed_pin_and_a_missing_maven_are_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("com.example:thing 1234\n")
    with pytest.raises(maven_jars.JarError, match="bad.txt:1"):
        maven_jars.pins(bad)
    pins = pins_file(tmp_path, "0" * 64)
    with pytest.raises(maven_jars.JarError, match="needs Maven"):
        maven_jars.fetch(tmp_path / "cache", mvn=str(tmp_path / "no-mvn"), pins_file=pins)
