"""The one error a check raises: what failed, in a sentence."""


class CheckFailed(Exception):
    pass
