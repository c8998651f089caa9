"""The API's status map: every domain error has a status, and the domain has none."""

from __future__ import annotations

import pytest

from api.errors import error_status
from core import errors as domain
from core.errors import ServiceError
from games.engine import EngineError


def _subclasses(base: type[Exception]) -> list[type[Exception]]:
    found: list[type[Exception]] = []
    for cls in base.__subclasses__():
        found += [cls, *_subclasses(cls)]
    return found


DOMAIN_ERRORS = [domain.ServiceError, *_subclasses(domain.ServiceError)]
ENGINE_ERRORS = [EngineError, *_subclasses(EngineError)]


@pytest.mark.parametrize("cls", DOMAIN_ERRORS + ENGINE_ERRORS, ids=lambda c: c.__name__)
def test_every_error_of_the_domain_and_the_engine_has_an_http_status(cls: type[Exception]) -> None:
    exc = cls.__new__(cls)  # some take more than a message; the status is the class's
    assert 400 <= error_status(exc) < 600 and error_status(exc) != 500


@pytest.mark.parametrize("cls", DOMAIN_ERRORS, ids=lambda c: c.__name__)
def test_domain_errors_carry_a_code_and_no_http_status(cls: type[ServiceError]) -> None:
    assert cls.code and not hasattr(cls, "status")


def test_refinements_of_an_error_answer_as_it_does() -> None:
    # bad_ply is cured like stale_ply (read again); day_over is a game_finished.
    assert error_status(domain.BadPly("x")) == error_status(domain.StalePly("x"))
    assert error_status(domain.DayOver("x")) == error_status(domain.GameFinished("x"))


def test_anything_else_is_a_server_error() -> None:
    assert error_status(ValueError("not ours")) == 500
