"""``lis serve``: the sandboxed agent as an OpenAI-compatible service.

Every ``POST /v1/chat/completions`` runs one episode of the agent loop (general task layout, like
``lis run``) in a fresh sandbox from the pool with the configured upstream model, and answers
with the answer file's text as the assistant message; extras (trajectory id, environment tokens,
links to the files the episode produced) sit under the ``lis`` key of the response, where
unchanged OpenAI clients ignore them. See docs/service.md.

    app = create_app(settings, model, agent_config, sandbox_config)   # lis.serve.app
    run_server(app, settings)                                          # lis.serve.server

Modules: settings (the ``serve:`` params), request (validation), conversation (messages → task),
budget (the completion-token budget), admission (slots and queue), episodes (one episode per
request, cancellable), files (the produced files), response (OpenAI JSON and SSE chunks),
auth, sweep (leftovers of earlier server runs), app (routes), server (uvicorn and shutdown).
"""
