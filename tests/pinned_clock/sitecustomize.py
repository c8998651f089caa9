"""Pin the clock of every Python process a test starts (servers, ``manage.py shell``).

Browser and end-to-end tests run the service in subprocesses, and what those
serve (today's deals, the day's end) depends on the date. A test puts this folder
on ``PYTHONPATH`` and sets ``PATIENCE_TEST_NOW`` (ISO instant) and
``PATIENCE_TEST_NOW_AT`` (the real epoch second it was pinned at); Python then
imports this module at start-up, and time-machine moves the process to that
instant plus the real time passed since, ticking on. All processes of one test
run share one shifted clock, so the suite gives the same answer on every date.
Nothing happens when ``PATIENCE_TEST_NOW`` is unset.
"""

import os

if os.environ.get("PATIENCE_TEST_NOW"):
    import time
    from datetime import datetime

    import time_machine

    _pinned = datetime.fromisoformat(os.environ["PATIENCE_TEST_NOW"]).timestamp()
    _since = time.time() - float(os.environ["PATIENCE_TEST_NOW_AT"])
    time_machine.travel(_pinned + _since, tick=True).start()
    # A ticking clock starts ticking at its first reading: read it now, or a server that
    # first asks after its imports (seconds later) would lag the others by that much.
    time.time()
