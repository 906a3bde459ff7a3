"""``python -m probe_reranker``: serve the API with uvicorn (HOST/PORT from the environment)."""
from __future__ import annotations

import logging


def main() -> None:
    import uvicorn

    from .app import create_app
    from .settings import Settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")


if __name__ == "__main__":
    main()
