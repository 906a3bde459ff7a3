"""The Docker stack: compose files + env file for this hardware, run by compose, watched by the Docker SDK."""
from __future__ import annotations

from .compose import Compose, compose_dir, find_compose
from .controller import StackController, StackStatus, endpoint_settings
from .docker_state import ServiceState, StackEvent, connect, container_publishing, gpu_runtime
from .errors import ComposeFailed, ComposeNotFound, DockerUnavailable, StackConfigError, StackError, StackNotReady
from .settings import ENDPOINTS, STACK_PROFILES, StackSettings, env_file_path, plan, read_env_file, write_env_file

__all__ = [
    "ENDPOINTS", "STACK_PROFILES", "Compose", "ComposeFailed", "ComposeNotFound", "DockerUnavailable",
    "ServiceState", "StackConfigError", "StackController", "StackError", "StackEvent", "StackNotReady",
    "StackSettings", "StackStatus", "compose_dir", "connect", "container_publishing", "endpoint_settings",
    "env_file_path", "find_compose", "gpu_runtime", "plan", "read_env_file", "write_env_file",
]
