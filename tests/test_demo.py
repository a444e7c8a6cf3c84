"""`make demo` runs icefloe.demo; the job must replay seed 001 and travel back in time."""
import io

from rich.console import Console

from icefloe.demo import run


def test_demo_replays_seed_001(tmp_path, spark):
    out = io.StringIO()
    result = run(str(tmp_path / "wh"), console=Console(file=out, width=200))
    assert result["rows_then"] == 100 and result["rows_now"] == 102
    text = out.getvalue()
    assert "ts_year=2022/" in text and "ts_year=2023/" in text and "ts_year=2024/" in text
    assert "version-hint.text" in text and "v3.metadata.json" in text
    assert str(result["first"].snapshot_id) in text
