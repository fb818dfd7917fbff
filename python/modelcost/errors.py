"""The exception every failed analysis raises."""


class ModelcostError(Exception):
    """A model or option the analysis cannot handle.

    ``str(error)`` is the one-line message the command line prints after ``modelcost: error:``
    (``<file>: <what>``); ``exit_code`` is the command line's exit code for it (2 usage,
    3 unreadable file, 4 invalid model, 5 opset newer than known, 6 runtime).
    """

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
