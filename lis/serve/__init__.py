"""``lis serve``: the sandboxed agent as an OpenAI-compatible service.

Every ``POST /v1/chat/completions`` runs one episode of the agent loop (general task layout, like
``lis run``) in a fresh sandbox from the pool with the configured upstream model, and answers
with the answer file's text as the assistant message; extras (trajectory id, environment tokens,
links to the files the episode produced) sit under the ``lis`` key of the response, where
unchanged OpenAI clients ignore them. See docs/service.md.

    state = ServeState(settings=s, model=model, agent=agent_cfg, sandbox=sandbox_cfg, ...)  # lis.serve.state
    run_server(state)                                                   # lis.serve.server (app: lis.serve.app)
"""
