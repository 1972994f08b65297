"""User-facing errors: one line, what / where / how to fix; the CLI turns them into exit code 2."""


class UserError(Exception):
    """Bad input from the user (file, field, value, flag). The CLI prints ``str(err)`` and exits 2."""


class ArgumentError(UserError, ValueError):
    """A bad argument to the Python API (``unlearnkit.unlearn`` ...): the message names the argument as the
    caller wrote it (``forget[3]``, ``method``, ``lr=``), never a command-line flag. A ``ValueError``, so
    code that catches bad values catches it; a ``UserError``, so the CLI still prints it in one line."""
