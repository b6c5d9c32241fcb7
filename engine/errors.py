"""Errors the engine raises for bad input; never silently substituted."""


class DurakError(ValueError):
    """Base class of every engine error."""


class RulesError(DurakError):
    """Invalid rule options or an impossible player count for them."""


class IllegalActionError(DurakError):
    """An action that is not legal for that player in that state."""


class ParseError(DurakError):
    """Text that is not a card or an action."""
