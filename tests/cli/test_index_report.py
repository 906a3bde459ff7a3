"""What a blocking ``probe index`` reports, through a real subprocess and the real embedder."""
from __future__ import annotations

import json
import subprocess
import sys

PROBE = [sys.executable, "-m", "probe_cli"]


def _index(root) -> dict:
    out = subprocess.run([*PROBE, "index", "--root", str(root), "--json"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_an_edit_reports_the_chunk_it_embedded(tmp_path):
    (tmp_path / "a.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    (tmp_path / "b.py").write_text("def gamma():\n    return 3\n")
    assert _index(tmp_path)["chunks_embedded"] == 3
    (tmp_path / "a.py").write_text("def alpha():\n    return 7\n\n\ndef beta():\n    return 2\n")
    again = _index(tmp_path)
    # alpha's new chunk was embedded, beta's vector reused; it said 0 (the manifest's dense total
    # before and after: the edit's old chunk left as the new one came)
    assert (again["files_indexed"], again["chunks_reused"], again["chunks_embedded"]) == (1, 1, 1), again
