"""The ranking signals on a real index (real embedder, Qdrant Edge, tree-sitter graph): exact
literals, identifiers, code-first priors, graph neighbours. Each test also runs the query with the
signal switched off, so it shows the signal is what puts the answer there."""
from __future__ import annotations

import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.retrieval.ranking import DEFAULT_RANKING


SHOP = {
    "src/payments/errors.py": '''"""Payment errors and their messages."""

ERR_DECLINED = "the card was declined by the issuer"
ERR_LIMIT = "amount exceeds the daily limit"


class PaymentDeclined(Exception):
    """The issuer refused the charge."""
''',
    "src/payments/gateway.py": '''"""Talks to the payment provider."""
from .errors import ERR_DECLINED, PaymentDeclined


class PaymentGateway:
    """Charges and refunds cards through the provider's HTTP API."""

    def __init__(self, client):
        self.client = client

    def charge(self, card: str, amount: int):
        """Charge a card; the provider answers 402 when the issuer refuses."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        response = self.client.post("/charges", {"card": card, "amount": amount})
        if response.status == 402:
            raise PaymentDeclined(ERR_DECLINED)
        return response

    def refund(self, charge_id: str):
        """Give the money of an earlier charge back."""
        return self.client.post(f"/charges/{charge_id}/refund", {})
''',
    "src/payments/retry.py": '''"""Retrying flaky provider calls."""
import time

from .gateway import PaymentGateway


def charge_with_backoff(gateway: PaymentGateway, card: str, amount: int, attempts: int = 3):
    """Try a charge again after a growing pause when the provider times out."""
    for attempt in range(attempts):
        try:
            return gateway.charge(card, amount)
        except TimeoutError:
            time.sleep(2 ** attempt)
    raise TimeoutError("the provider did not answer")
''',
    "docs/payments.md": '''# Payments

## How charging a card works

Charging a card works like this: the shop asks the payment provider to charge the card for
the amount of the order. When the card is declined, the issuer declined the card and the
shop shows that the card was declined. A declined card is never charged twice. Charging a
card that the issuer declined raises an error in the shop.

## Setting up the payment provider

Put the provider's API key in the environment and restart the shop.
''',
    "tests/test_gateway.py": '''from src.payments.errors import ERR_DECLINED


def test_declined_message():
    assert ERR_DECLINED == "the card was declined by the issuer"
''',
}

def write_tree(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


OFF = DEFAULT_RANKING.replace(literal_weight=0, identifier_weight=0, doc_penalty=1, example_penalty=1,
                              graph_weight=0)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("shop"), SHOP)
    ws = Workspace.open(root)
    index_workspace(ws)
    yield ws
    ws.close()


def _top(ws, query, **kw):
    return search(ws, query, top_k=5, **kw).results


def test_a_quoted_message_finds_the_code_that_defines_and_raises_it(shop):
    query = 'where is "the card was declined by the issuer" raised'
    top = _top(shop, query)
    assert top[0].path in ("src/payments/errors.py", "src/payments/gateway.py")
    assert "literal_rank" in top[0].signals
    # the uses of the name the message is defined under count too: charge() raises it
    charge = next(r for r in top if r.path == "src/payments/gateway.py")
    assert charge.signals.get("literal_rank")
    # without the exact-match lists and the priors, the paraphrasing docs or the test come first
    assert _top(shop, query, ranking=OFF)[0].path in ("docs/payments.md", "tests/test_gateway.py")


def test_an_identifier_finds_its_definition(shop):
    top = _top(shop, "PaymentGateway.refund money back")
    assert (top[0].path, top[0].symbol) == ("src/payments/gateway.py", "refund")
    assert top[0].signals["identifier_rank"] == 1


def test_a_how_does_question_gets_code_before_the_docs_that_describe_it(shop):
    query = "how does charging a card work when the issuer declines it"
    assert _top(shop, query, ranking=OFF)[0].path == "docs/payments.md"
    top = _top(shop, query)
    assert top[0].path.startswith("src/")
    assert "docs/payments.md" in [r.path for r in top]  # demoted, not dropped


@pytest.mark.parametrize("query", [
    "how do I set up the payment provider",  # a user's how-to question: guides answer it
    "docs on setting up the payment provider",  # names documentation
])
def test_questions_that_ask_for_docs_keep_them_first(shop, query):
    assert _top(shop, query)[0].path == "docs/payments.md"


def test_a_doc_kind_filter_turns_the_prior_off(shop):
    query = "how does charging a card work when the issuer declines it"
    top = _top(shop, query, filters={"chunk_kinds": ["doc"]})
    assert top and all(r.chunk_kind == "doc" for r in top)


def test_graph_neighbours_are_the_callers_and_callees_of_a_hit(shop):
    from probe_core.retrieval.graph_evidence import graph_list
    from probe_core.storage.protocol import StoreHit

    rows = {r.symbol: r for path in ("src/payments/retry.py", "src/payments/gateway.py")
            for r in shop.manifest.chunks_for(path)}

    def hit(symbol):
        r = rows[symbol]
        return StoreHit(id=r.point_id, score=1.0, payload={
            "file_path": r.path, "start_line": r.start_line, "end_line": r.end_line, "symbol": r.symbol,
            "symbol_kind": r.symbol_kind})

    # charge_with_backoff calls gateway.charge: its callee
    assert graph_list(shop, [hit("charge_with_backoff")], lambda _p: True) == [rows["charge"].point_id]
    # and charge is called by charge_with_backoff: its caller
    assert rows["charge_with_backoff"].point_id in graph_list(shop, [hit("charge")], lambda _p: True)
    assert graph_list(shop, [hit("charge_with_backoff")], lambda p: p != "src/payments/gateway.py") == []


def test_filters_apply_to_the_exact_lists(shop):
    top = search(shop, '"the card was declined by the issuer"', top_k=10,
                 filters={"exclude_globs": ["src/"]}).results
    assert top and all(not r.path.startswith("src/") for r in top)


def test_the_literal_scan_sees_an_edit_once_it_is_indexed(tmp_path):
    root = write_tree(tmp_path / "r", {"a.py": 'def f():\n    raise ValueError("old message here")\n',
                                       "b.py": "def g():\n    return 1\n"})
    ws = Workspace.open(root)
    try:
        index_workspace(ws)
        query = '"brand new wording"'
        assert not any(r.signals.get("literal_rank") for r in search(ws, query).results)
        (root / "b.py").write_text('def g():\n    raise KeyError("brand new wording")\n')
        index_workspace(ws)
        hit = search(ws, query).results[0]
        assert (hit.path, hit.signals.get("literal_rank")) == ("b.py", 1)
    finally:
        ws.close()


def test_the_literal_scan_never_keeps_text_that_was_not_indexed(tmp_path):
    """An edit that is never indexed (written, searched, undone) must not stay in the scan's text:
    the scan keeps a file's text only when it is the version the manifest indexed."""
    v2 = 'def g():\n    raise KeyError("second wording here")\n'
    root = write_tree(tmp_path / "r", {"a.py": 'def f():\n    return 1\n', "b.py": 'def g():\n    return 0\n'})
    ws = Workspace.open(root)
    try:
        index_workspace(ws)
        search(ws, '"anything at all"')  # the text cache now holds b.py's first version
        (root / "b.py").write_text(v2)
        index_workspace(ws)
        (root / "b.py").write_text('def g():\n    raise KeyError("third wording, never indexed")\n')
        assert not any(r.signals.get("literal_rank") for r in search(ws, '"third wording"').results)
        (root / "b.py").write_text(v2)  # undone: the disk holds the indexed version again
        generation = ws.manifest.generation
        assert index_workspace(ws).files_indexed == 0 and ws.manifest.generation == generation
        assert not any(r.signals.get("literal_rank") for r in search(ws, '"third wording"').results)
        hit = search(ws, '"second wording"').results[0]
        assert (hit.path, hit.signals.get("literal_rank")) == ("b.py", 1)
    finally:
        ws.close()
