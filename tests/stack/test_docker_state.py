"""Container listing against an engine whose containers change under the request.

The race itself (podman answering 500 "read /proc/PID/cgroup: no such process" for a container that
exits while it is listed) came up in the crash-loop tests against real podman, once in about a
dozen runs; it cannot be brought about on demand, so the engine is stood in for here by the one call
``service_states`` makes."""
from __future__ import annotations

import pytest
from docker.errors import APIError, NotFound
from requests import Response

from probe_core.stack import DockerUnavailable
from probe_core.stack.docker_state import LIST_TRIES, service_states


def _error(status: int, text: str) -> APIError:
    response = Response()
    response.status_code = status
    return APIError(text, response=response, explanation=text)


class _Engine:
    """A client whose container list fails with ``errors`` first, then answers."""

    def __init__(self, *errors: Exception):
        self.errors, self.calls = list(errors), 0
        self.containers = self

    def list(self, **_):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return []


def test_a_container_changing_under_the_list_is_asked_again():
    engine = _Engine(_error(500, "read /proc/17797/cgroup: no such process"), NotFound("gone"))
    assert service_states(engine, "p") == {} and engine.calls == 3


def test_an_engine_failing_every_time_is_reported():
    engine = _Engine(*[_error(500, "boom")] * LIST_TRIES)
    with pytest.raises(DockerUnavailable, match="stopped answering while listing containers"):
        service_states(engine, "p")
    assert engine.calls == LIST_TRIES


def test_a_refusal_is_not_asked_again():
    engine = _Engine(_error(400, "bad filter"))
    with pytest.raises(DockerUnavailable, match="bad filter"):
        service_states(engine, "p")
    assert engine.calls == 1
