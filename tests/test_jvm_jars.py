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
        g, a, v, *rest = args["artifact"].split(":")       # group:artifact:version[:packaging:classifier]
        suffix = f"-{{rest[1]}}" if len(rest) == 2 else ""
        pathlib.Path(args["outputDirectory"], f"{{a}}-{{v}}{{suffix}}.jar").write_bytes({content!r})
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
    assert maven_jars.pinned("iceberg-spark-runtime-3.5_2.12").version.startswith("1.10.")   # the default referee
    assert maven_jars.pinned("iceberg-spark-runtime-3.5_2.12", "1.12.0").file_name == \
        "iceberg-spark-runtime-3.5_2.12-1.12.0.jar"
    assert maven_jars.pinned("paimon-spark-3.5").group == "org.apache.paimon"
    assert maven_jars.pinned("paimon-bundle").version.startswith("1.")   # the second Paimon referee, without Spark
    assert maven_jars.pinned("iceberg-core", classifier="tests").file_name == "iceberg-core-1.11.0-tests.jar"
    assert all(len(j.sha256) == 64 for j in maven_jars.pins().values())


def test_one_artifact_at_two_versions_and_a_classified_jar_each_keep_their_pin(tmp_path):
    new, old, tests = b"PK new", b"PK old", b"PK tests"
    pins = tmp_path / "jars.txt"
    pins.write_text(f"com.example:thing:1.2 {hashlib.sha256(old).hexdigest()}\n"
                    f"com.example:thing:2.0 {hashlib.sha256(new).hexdigest()}\n"
                    f"com.example:thing:2.0:tests {hashlib.sha256(tests).hexdigest()}\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    for name, content in (("thing-1.2.jar", old), ("thing-2.0.jar", new), ("thing-2.0-tests.jar", tests)):
        (cache / name).write_bytes(content)
    assert maven_jars.path("thing", cache, pins).read_bytes() == old          # the first pin is the default
    assert maven_jars.path("thing", cache, pins, version="2.0").read_bytes() == new
    assert maven_jars.path("thing", cache, pins, version="2.0", classifier="tests").read_bytes() == tests
    with pytest.raises(maven_jars.JarError, match=r"thing 3.0 is not pinned.*pinned: 1.2, 2.0"):
        maven_jars.path("thing", cache, pins, version="3.0")
    # Maven is asked for the classified jar by its packaging and classifier
    (cache / "thing-2.0-tests.jar").unlink()
    maven_jars.fetch(cache, mvn=fake_mvn(tmp_path, tests), pins_file=pins)
    assert (tmp_path / "calls").read_text() == "com.example:thing:2.0:jar:tests\n"
    pins.write_text(pins.read_text() + f"com.example:thing:1.2 {'0' * 64}\n")
    with pytest.raises(maven_jars.JarError, match="jars.txt:4: com.example:thing:1.2 is pinned twice"):
        maven_jars.pins(pins)


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
