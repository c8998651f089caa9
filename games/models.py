"""Models of the games app (deals, games, moves, scores) — to be added."""
