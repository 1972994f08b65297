"""The sub-commands of ``unlearnkit``: one small module per command.

How to add a command ``foo``
----------------------------
1. Create ``unlearnkit/commands/foo.py`` with two functions::

       def add_parser(subparsers) -> None:
           p = add_command(                    # from unlearnkit.commands._common
               subparsers,
               "foo",
               "one line: what foo does",      # its line in `unlearnkit --help`, and its description
               ["unlearnkit foo --model target --data bench --output out"],  # 1-2 examples that run
           )
           req = p.add_argument_group("required")
           req.add_argument("--model", required=True, metavar="MODEL", help="...")
           add_output(req, "folder for ...")   # --output DIR
           task = p.add_argument_group("task")
           add_set(task)                        # --set KEY=VALUE [KEY=VALUE ...], if it takes settings
           rt = runtime_group(p)                # the last group, with -h
           add_overwrite(rt)
           add_placement_flags(rt)              # --device / --dtype, if it loads models
           add_trust_remote_code(rt)

       def run(args: argparse.Namespace) -> int:
           from unlearnkit.foo import do_it    # heavy imports inside the function only
           ...
           return 0

2. Add ``"foo"`` to its group in ``GROUPS`` in ``unlearnkit/cli.py`` (the order is the order of ``--help``).

Help text: one metavar per kind of thing (MODEL for every model flag, DATA, DIR for folders written,
FILE, N for counts); a flag's help fits two lines at 100 columns (the why goes to docs/);
``tests/test_cli_help.py`` checks every command in ``cli.COMMANDS``.

Rules every command follows
---------------------------
- **No heavy import at module level.** ``cli.main`` imports every command module to build the parser,
  so a module that imports torch, transformers or datasets (directly, or through a unlearnkit module
  that does) makes every typo cost seconds. ``tests/test_bad_inputs.py`` checks that a rejected
  argument exits before torch/transformers are imported.
- **Validate first, in this order:** flags and ``--set``/``--config`` values (cheap, via
  ``_common.overrides`` and the config dataclasses) -> output folder (``io.check_output_dir``) -> data
  files -> model folder (``models.check_model_path``) -> tokenizer + prompt lengths -> load the model
  -> work -> write atomically (``io.atomic_dir`` / ``models.save_model``). A ``UserError`` anywhere
  before the write leaves nothing behind.
- **Errors:** raise ``unlearnkit.errors.UserError("what, where, how to fix")``; ``cli.main`` prints it
  as one line and exits 2. Notes and warnings go to stderr through ``_common.note``.
- **Determinism:** a command that trains or samples takes ``--seed`` (or a ``seed`` key of ``--set``).

Shared helpers (recipe + ``--set`` overrides, length checks, checkpoints) are in ``_common``; the names
tests use are re-exported here.
"""

from unlearnkit.commands._common import checkpoints, weights_are_finite, work_dir_of
from unlearnkit.world.tiny import build_tiny

__all__ = ["build_tiny", "checkpoints", "weights_are_finite", "work_dir_of"]
