"""The scripted teacher: tasks, plans (tool calls that solve or answer them) and their episodes."""
