"""The cause classes: one vocabulary, each class with its meaning, the checks that confirm it
and a general fix."""

from __future__ import annotations

import pytest

from gpudoctor.checks import REGISTRY
from gpudoctor.explain.classes import CAUSE_CLASSES, NOT_ENVIRONMENT, CauseClass, cause_class


def test_a_class_is_found_by_its_name_and_an_unknown_name_is_refused() -> None:
    cls = cause_class("driver-too-old")
    assert isinstance(cls, CauseClass) and cls.name == "driver-too-old"
    assert cls is CAUSE_CLASSES["driver-too-old"]
    with pytest.raises(KeyError):
        cause_class("driver-too-young")


def test_the_vocabulary_is_keyed_by_each_class_name() -> None:
    assert len(CAUSE_CLASSES) >= 20
    assert all(name == cls.name for name, cls in CAUSE_CLASSES.items())
    named = {"no-driver", "library-not-found", "out-of-memory", NOT_ENVIRONMENT}
    assert named <= set(CAUSE_CLASSES)


@pytest.mark.parametrize("cls", CAUSE_CLASSES.values(), ids=lambda c: c.name)
def test_every_class_has_a_meaning_a_fix_and_only_real_checks(cls: CauseClass) -> None:
    assert cls.meaning.strip() and cls.fix.strip()
    assert set(cls.confirm) <= {str(c.id) for c in REGISTRY}, cls.confirm


def test_the_programs_own_fault_is_confirmed_by_no_check_and_a_machine_cause_by_some() -> None:
    """No check of the machine can confirm a bug in the program; a machine cause names one."""
    assert cause_class(NOT_ENVIRONMENT).confirm == ()
    assert cause_class("no-driver").confirm and cause_class("driver-too-old").confirm
