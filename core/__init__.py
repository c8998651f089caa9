"""Cross-cutting code every app uses and none owns: the clock, errors with codes, the
channel-layer sender, the Redis breaker, tracing, metrics, database helpers, process
lifelines and background jobs. It imports no app of the project."""
