"""Analysis of finished games by the solver: where a game was lost, and the line that won.

``games.analysis.search`` is the pure part (no Django; it runs in the analysis worker
process), ``games.analysis.queue`` keeps the queue and the shared verdict cache in the
database, ``games.analysis.access`` says who may see which game's analysis. See
docs/analysis.md.
"""
