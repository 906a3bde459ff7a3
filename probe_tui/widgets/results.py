"""The search results list: one option per hit with ``path:lines``, score and signals."""
from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option


def signal_text(signals: dict) -> str:
    parts = []
    if signals.get("dense_rank") is not None:
        parts.append(f"d#{signals['dense_rank']}")
    if signals.get("bm25_rank") is not None:
        parts.append(f"b#{signals['bm25_rank']}")
    if signals.get("rerank_score") is not None:
        parts.append(f"r{signals['rerank_score']:.2f}")
    return " ".join(parts)


def result_label(r: dict) -> Text:
    line = Text()
    line.append(r["path"], style="bold")
    line.append(f":{r['start_line']}-{r['end_line']}", style="cyan")
    if r.get("stale"):
        line.append(" stale", style="yellow")
    line.append("\n")
    line.append(f"{r['score']:.3f} ", style="green")
    line.append(signal_text(r.get("signals") or {}), style="dim")
    if r.get("symbol"):
        line.append(f" {r['symbol']}", style="magenta")
    return line


class ResultList(OptionList):
    """Search hits; ``j``/``k`` move like the arrows."""

    BINDINGS = [("j", "cursor_down", "Down"), ("k", "cursor_up", "Up")]

    def set_results(self, results: list[dict]) -> None:
        self.clear_options()
        self.add_options([Option(result_label(r), id=str(i)) for i, r in enumerate(results)])
        if results:
            self.highlighted = 0
