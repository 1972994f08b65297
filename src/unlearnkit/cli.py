"""The ``unlearnkit`` command line: one thin sub-command per verb (parse, validate, call the library).

Bad input -> one line on stderr and exit code 2, before anything is written.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from unlearnkit.errors import UserError

EXIT_USER_ERROR = 2
EXIT_DIVERGED = 3
# Environment problems the user fixes (not bugs): one line and exit 2 instead of a traceback.
USER_ERRNOS = (errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EROFS, errno.EDQUOT)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse would print the usage block too)
        print(f"unlearnkit: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_USER_ERROR)


def _common_model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow a hub model's own Python code to run (off by default: it is arbitrary code)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="unlearnkit", description="Make a language model forget, prove it, keep it useful.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    q = sub.add_parser("quickstart", help="the whole story on the embedded fictitious-authors world, on CPU")
    q.add_argument(
        "--output",
        default="unlearnkit_quickstart",
        help="folder for report.html, metrics.json (default: %(default)s)",
    )
    q.add_argument("--methods", default=None, help="comma-separated methods (default: a representative set)")
    q.add_argument("--authors", type=int, default=None, help="authors in the world (default: 100)")
    q.add_argument("--facts", type=int, default=None, help="facts per author (default: 10)")
    q.add_argument("--seed", type=int, default=0, help="seed for world, training and unlearning (default: 0)")
    q.add_argument(
        "--cache-dir",
        default=None,
        help="where target/oracle models are cached (default: ~/.cache/unlearnkit)",
    )
    q.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    q.add_argument("--no-audit", action="store_true", help="skip the audit card of the best method")

    w = sub.add_parser(
        "world", help="write a deterministic fictitious-authors benchmark folder (TOFU schema)"
    )
    w.add_argument("--output", required=True, help="benchmark folder to create")
    w.add_argument("--authors", type=int, default=100, help="number of authors (default: %(default)s)")
    w.add_argument("--facts", type=int, default=10, help="facts per author (default: %(default)s)")
    w.add_argument(
        "--forget-fraction",
        type=float,
        default=0.1,
        help="fraction of authors to forget (default: %(default)s)",
    )
    w.add_argument(
        "--holdout-fraction", type=float, default=0.1, help="fraction never trained on (default: %(default)s)"
    )
    w.add_argument(
        "--general", type=int, default=100, help="unrelated general-knowledge items (default: %(default)s)"
    )
    w.add_argument(
        "--seed", type=int, default=0, help="same seed -> byte-identical files (default: %(default)s)"
    )
    w.add_argument("--overwrite", action="store_true", help="replace an existing folder")

    f = sub.add_parser("finetune", help="train the target (all splits but holdout) or the retain oracle")
    f.add_argument("--data", required=True, help="benchmark folder")
    f.add_argument("--output", required=True, help="model folder to write")
    f.add_argument(
        "--model", default="tiny", help="'tiny' (a ~1M Llama built from code), an HF id or a folder"
    )
    f.add_argument("--split", default="all", choices=("all", "retain"), help="all = target, retain = oracle")
    f.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="training override, e.g. --set epochs=20"
    )
    f.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    f.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    _common_model_flags(f)

    u = sub.add_parser("unlearn", help="run one unlearning method and save the model")
    u.add_argument(
        "--model", default=None, help="model folder (or HF id) to unlearn from (or 'model:' in the recipe)"
    )
    u.add_argument(
        "--data", default=None, help="benchmark folder, or a name: tofu:forget10, muse:news, wmdp:cyber"
    )
    u.add_argument(
        "--method",
        default=None,
        help="method name, e.g. asu, asu_kl, npo, t-npo, ga (see `unlearnkit methods`)",
    )
    u.add_argument("--output", required=True, help="model folder to write")
    u.add_argument("--config", default=None, help="YAML recipe (flat key: value); --set wins over it")
    u.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="override, e.g. --set tau=2.3 --set lr=1e-5"
    )
    u.add_argument("--save-every", type=int, default=None, help="checkpoint every N optimiser steps")
    u.add_argument("--resume", action="store_true", help="continue from the last checkpoint of this --output")
    u.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    _common_model_flags(u)

    e = sub.add_parser("eval", help="evaluate a model on a benchmark folder; writes DIR/metrics.json")
    e.add_argument("--model", required=True, help="model folder (or HF id)")
    e.add_argument("--data", required=True, help="benchmark folder, or a name: tofu:forget10, muse:news")
    e.add_argument(
        "--retain-model", default=None, help="retain-oracle model folder, or its eval folder / details.json"
    )
    e.add_argument(
        "--protocol",
        default="tofu",
        choices=("tofu", "closer-look", "muse", "wmdp"),
        help="metric set (default: %(default)s)",
    )
    e.add_argument("--output", required=True, help="folder for metrics.json and details.json")
    e.add_argument(
        "--embedder",
        default="sentence-transformers/paraphrase-MiniLM-L6-v2",
        help="closer-look cosine similarity: sentence-embedding model id or folder, or 'none'",
    )
    e.add_argument(
        "--nli-model",
        default="sileod/deberta-v3-base-tasksource-nli",
        help="closer-look entailment: NLI model id or folder, or 'none' (default: the authors' models)",
    )
    e.add_argument(
        "--max-new-tokens", type=int, default=200, help="greedy generation length (default: %(default)s)"
    )
    e.add_argument("--max-items", type=int, default=400, help="items per split (default: %(default)s)")
    e.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    _common_model_flags(e)

    a = sub.add_parser("attribute", help="TokenUnlearn token scores + an HTML heatmap")
    a.add_argument("--model", required=True, help="the original model folder")
    a.add_argument("--data", required=True, help="benchmark folder (its forget.jsonl is scored)")
    a.add_argument("--output", required=True, help="folder for scores.jsonl and heatmap.html")
    a.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="alpha, r, tau_w, selection, mask_token, tagger"
    )
    a.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    _common_model_flags(a)

    c = sub.add_parser(
        "continual", help="a sequence of forget requests applied one after another, evaluated after each"
    )
    c.add_argument("--model", required=True, help="model folder (or HF id) to unlearn from")
    c.add_argument(
        "--data", required=True, help="benchmark folder or name; its forget set is cut into requests"
    )
    c.add_argument("--method", required=True, help="method name (see `unlearnkit methods`)")
    c.add_argument("--requests", type=int, default=5, help="number of forget requests (default: %(default)s)")
    c.add_argument("--output", required=True, help="folder for curve.json, curve.png and the final model")
    c.add_argument("--config", default=None, help="YAML recipe; --set wins over it")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override for every request")
    c.add_argument("--max-new-tokens", type=int, default=64, help="generation length of the evaluations")
    c.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")
    _common_model_flags(c)

    from unlearnkit.audit import add_audit_arguments

    add_audit_arguments(
        sub.add_parser(
            "audit", help="evidence the knowledge is gone: MIA, relearning, quantization, paraphrases"
        )
    )
    sub.add_parser("methods", help="list the methods and their papers")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (0 ok, 2 bad input, 3 diverged, 130 interrupted).

    Never calls ``sys.exit`` itself, so tests can call it in-process.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a bad flag (2, one line already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USER_ERROR
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from unlearnkit import commands

        return getattr(commands, f"cmd_{args.command}")(args) or 0
    except UserError as err:
        _close_progress_bars()
        print(f"unlearnkit: error: {_one_line(err)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        _close_progress_bars()
        print("unlearnkit: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        if err.errno not in USER_ERRNOS:
            raise
        where = f"{err.filename}: " if err.filename else ""
        print(f"unlearnkit: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as err:  # noqa: BLE001 - divergence gets its own exit code and one line
        from unlearnkit.trainer import DivergenceError

        if isinstance(err, DivergenceError):
            _close_progress_bars()
            print(f"unlearnkit: diverged: {_one_line(err)}", file=sys.stderr)
            return EXIT_DIVERGED
        raise


def _close_progress_bars() -> None:
    """End any progress bar left open by the failure, so the message starts on a line of its own."""
    tqdm_module = sys.modules.get("tqdm.std")
    if tqdm_module is None:
        return
    for bar in list(getattr(tqdm_module.tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - cosmetic only
            pass


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":
    sys.exit(main())
