"""A small labelled set for fusing a project with reference libraries: a code project, a runbook
library, and a notes library whose documents are mostly beside the point. Each query names the one
source (``path`` or ``library:NAME/PATH``) that answers it; about half are answered by the code,
half by a library document, so a fusion that favours either side loses."""
from __future__ import annotations

from ..conftest import REPO_FILES

# the shared fixture repository's code (tests/conftest.py), and a few more files
PROJECT = {
    **{path: REPO_FILES[path] for path in ("src/auth/passwords.py", "src/http/headers.py", "router/mux.go",
                                            "config/settings.yaml")},
    "src/http/retry.py": '''import random
import time


def upload_with_retry(upload, payload, attempts: int = 5, base_delay: float = 0.5):
    """Retry a failed upload, doubling the wait each time, with random jitter."""
    for attempt in range(attempts):
        try:
            return upload(payload)
        except ConnectionError:
            time.sleep(base_delay * 2 ** attempt + random.random() / 10)
    raise RuntimeError("upload failed after retries")
''',
    "src/billing/invoices.py": '''from dataclasses import dataclass


@dataclass
class Invoice:
    number: str
    total_cents: int


def invoice_total(lines: list[tuple[int, int]]) -> int:
    """Sum quantity times unit price over the invoice lines, in cents."""
    return sum(qty * price for qty, price in lines)
''',
    "src/cache/lru.py": '''from collections import OrderedDict


class LruCache:
    """Keep the most recently used entries, evicting the oldest when full."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.data: OrderedDict = OrderedDict()

    def get(self, key):
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key]
        return None
''',
}

LIBRARIES = {
    "runbook": {
        "oncall.md": "# On-call\n\nPage the secondary on-call engineer when the primary has not acknowledged "
                     "an alert within 15 minutes.\n",
        "escalation.md": "# Escalation\n\nSeverity one incidents wake the engineering director, whatever the "
                         "hour.\n",
        "deploy.md": "# Rolling back a deploy\n\nTo roll back a bad release, redeploy the previous image tag "
                     "with `deploy --tag PREVIOUS` and watch the error rate for ten minutes.\n",
    },
    "notes": {
        "rate-limits.md": "# Partner API rate limits\n\nThe partner API allows 600 requests per minute per "
                          "key; over that it answers 429 with a Retry-After header.\n",
        "pagination.md": "# Listing invoices page by page\n\nThe invoices endpoint returns a `next_page_token`; "
                         "pass it back as `page_token` until it is empty.\n",
        "coffee.md": "# The coffee machine\n\nDescale the office coffee machine every Friday afternoon.\n",
        "holidays.md": "# Office holidays\n\nThe office is closed between Christmas and New Year.\n",
    },
}

QUERIES = [
    ("who gets paged when nobody acknowledges the alert", "library:runbook/oncall.md"),
    ("severity one incident, who is woken up", "library:runbook/escalation.md"),
    ("how do I roll back a bad release", "library:runbook/deploy.md"),
    ("how many requests per minute does the partner API allow", "library:notes/rate-limits.md"),
    ("next page token when listing invoices", "library:notes/pagination.md"),
    ("when is the coffee machine descaled", "library:notes/coffee.md"),
    ("hash a password with a salt", "src/auth/passwords.py"),
    ("parse raw HTTP header lines", "src/http/headers.py"),
    ("retry a failed upload with exponential backoff", "src/http/retry.py"),
    ("sum the invoice lines into a total", "src/billing/invoices.py"),
    ("dispatch a request to the handler for its path", "router/mux.go"),
    ("which port does the server listen on", "config/settings.yaml"),
    ("evict the least recently used cache entry", "src/cache/lru.py"),
]
