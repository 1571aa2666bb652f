"""Run the app under uvicorn; SIGINT/SIGTERM first cancel every episode (killing its sandbox),
then uvicorn's graceful shutdown runs, then the app's shutdown sweeps this run's label."""
from __future__ import annotations

import uvicorn

from lis.serve.app import create_app
from lis.serve.state import ServeState


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, state: ServeState):
        super().__init__(config)
        self.state = state

    def handle_exit(self, sig, frame) -> None:  # a signal handler: only schedule work on the loop
        self.state.request_shutdown()
        super().handle_exit(sig, frame)


def run_server(state: ServeState) -> None:
    """Serve until SIGINT/SIGTERM (blocks)."""
    s = state.settings
    config = uvicorn.Config(create_app(state), host=s.host, port=s.port, log_config=None, access_log=True,
                            timeout_graceful_shutdown=s.shutdown_grace_s, lifespan="on", http="h11",
                            loop="asyncio")
    _Server(config, state).run()
