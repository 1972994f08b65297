"""User-facing errors: one line, what / where / how to fix; the CLI turns them into exit code 2."""


class UserError(Exception):
    """Bad input from the user (file, field, value, flag). The CLI prints ``str(err)`` and exits 2."""
