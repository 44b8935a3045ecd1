"""What inspector.db owns: the storage format and SQLAlchemy's errors."""

from inspector.db import rules as rules_db
from inspector.rules import validation


def test_condition_columns_are_the_condition_keys() -> None:
    # db.rules keeps its own copy so the API's rule storage does not import
    # the rule plugins; the two must name the same keys
    assert rules_db.CONDITION_COLUMNS == validation.CONDITION_KEYS
