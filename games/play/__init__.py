"""The life of one game, as one transaction script to read top to bottom.

- ``move``: ``apply_move`` reads the game, lets the engine judge the move, and writes it
  with the one guarded statement of every change;
- ``finish``: ends by the player or the clock (``resign``, ``day_expire``,
  ``race_games_expire``), and the one place a change is written, its result recorded
  (an explicit call) and its event emitted;
- ``state``: what a player may see, as a frozen value (the auditable place for hidden
  information);
- ``store``: the game as this process holds it, and the guarded write itself.
"""
