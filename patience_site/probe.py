"""``python -m patience_site.probe live|ready [PORT]``: a health probe without curl.

The image has Python but no curl: a compose healthcheck (or a Kubernetes exec probe) runs
this. It asks this container's server for ``/api/v1/health/<kind>/`` and exits 0 on 200,
1 on anything else (an error answer, a refused connection, a timeout).
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

KINDS = ("live", "ready")
TIMEOUT_SECONDS = 3


def probe(kind: str, port: int = 8000) -> bool:
    """Whether the server on ``port`` answers 200 to the ``kind`` health probe."""
    url = f"http://127.0.0.1:{port}/api/v1/health/{kind}/"
    # As the Kubernetes probes: a host that ALLOWED_HOSTS lists wherever the server runs.
    request = urllib.request.Request(url, headers={"Host": "localhost"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):  # HTTPError (a 503) is a URLError
        return False


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in KINDS:
        print(f"usage: python -m patience_site.probe {'|'.join(KINDS)} [PORT]", file=sys.stderr)
        return 2
    port = int(argv[1]) if len(argv) > 1 else 8000
    return 0 if probe(argv[0], port) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
