"""Date formats of the pages: one per language, the same the scripts print
(``dateText``/``dateTime`` in common.js), so a page never mixes styles."""
