"""Accounts of the tests and benchmarks: one password, and registering on a running server."""

from __future__ import annotations

import requests

#: The password of every account a test or benchmark makes (it passes Django's validators).
PASSWORD = "correct-horse-battery-staple-42"


def register(
    base: str, name: str, *, session: requests.Session | None = None, timeout: float = 60
) -> str:
    """Register like a browser (CSRF token, session), then create a personal token; its key.

    Raises ``RuntimeError`` with the status and body when the server refuses either step.
    """
    s = session or requests.Session()
    s.trust_env = False
    r = s.get(f"{base}/api/v1/auth/csrf/", timeout=timeout)
    r.raise_for_status()
    jar = dict(r.cookies)
    # Production cookies are Secure and would not be sent back over plain HTTP: send them.
    headers = {
        "X-CSRFToken": r.json()["csrf_token"],
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    }
    r = s.post(
        f"{base}/api/v1/auth/register/",
        json={"username": name, "password": PASSWORD},
        headers=headers,
        timeout=timeout,  # password hashing is slow on purpose
    )
    if r.status_code != 201:
        raise RuntimeError(f"register: HTTP {r.status_code} {r.text[:300]}")
    jar.update(dict(r.cookies))  # the session, and the CSRF token rotated by the login
    headers = {
        "X-CSRFToken": jar["csrftoken"],
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    }
    r = s.post(
        f"{base}/api/v1/auth/tokens/", json={"name": "bench"}, headers=headers, timeout=timeout
    )
    if r.status_code != 201:
        raise RuntimeError(f"token: HTTP {r.status_code} {r.text[:300]}")
    s.cookies.clear()
    return r.json()["token"]
