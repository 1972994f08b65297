"""``unlearnkit teacher``: ASU's forget-teacher at several temperatures, side by side, and the one chosen."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from unlearnkit.commands._common import (
    add_command,
    add_output,
    add_overwrite,
    add_placement_flags,
    add_trust_remote_code,
    check_data,
    check_placement_flags,
    load_data,
    placement_of,
    print_placement,
    runtime_group,
    torch_threads,
)


def add_parser(subparsers) -> None:
    p = add_command(
        subparsers,
        "teacher",
        "find ASU's temperature: the teacher's answers at each tau",
        [
            "unlearnkit teacher --model target --data bench --output teacher",
            "unlearnkit teacher --model smollm2-135m-instruct --data tofu:forget01 --output teacher "
            "--taus 1.5,1.7,1.8,1.9,2 --layers all,0-14",
        ],
        details="Writes DIR/teacher.json (every setting's numbers and answers, chosen_tau and the rule) and "
        "prints the table. `unlearnkit unlearn --method asu --set tau=auto` runs the same search first.",
    )
    req = p.add_argument_group("required")
    req.add_argument("--model", required=True, metavar="MODEL", help="the model to unlearn (the teacher is it)")
    req.add_argument("--data", required=True, metavar="DATA", help="benchmark folder or name (tofu:forget01)")
    add_output(req, "folder for teacher.json")
    task = p.add_argument_group("task")
    task.add_argument(
        "--taus", default=None, metavar="LIST", help="temperatures to try (default 1.3,1.5,1.7,1.8,1.9,2,2.3,3,5)"
    )
    task.add_argument(
        "--layers", default="all", metavar="LIST", help="layer ranges to smooth, e.g. all,0-14,15-29 (default all)"
    )
    task.add_argument("--max-items", type=int, default=8, metavar="N", help="questions per part (default 8)")
    task.add_argument("--max-new-tokens", type=int, default=48, metavar="N", help="answer length (default 48)")
    task.add_argument("--seed", type=int, default=0, metavar="N", help="which questions are sampled")
    rt = runtime_group(p)
    add_overwrite(rt)
    add_placement_flags(rt, batch_size=True)
    add_trust_remote_code(rt)


def run(args: argparse.Namespace) -> int:
    from unlearnkit.errors import UserError
    from unlearnkit.evaluation.teacher_search import DEFAULT_TAUS, parse_taus
    from unlearnkit.io import check_output_dir
    from unlearnkit.models import check_model_path

    taus = parse_taus(args.taus) if args.taus else DEFAULT_TAUS
    for flag, value in (("--max-items", args.max_items), ("--max-new-tokens", args.max_new_tokens)):
        if value < 1:
            raise UserError(f"{flag} {value}: must be at least 1")
    check_placement_flags(args)
    check_output_dir(args.output, args.overwrite)
    bench = check_data(args.data, eval_fields=True)
    check_model_path(args.model)

    from unlearnkit.commands._common import note
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.evaluation.teacher_search import parse_layer_ranges, sample_parts, search_tau, table
    from unlearnkit.io import atomic_dir
    from unlearnkit.models import decoder_layers, load_model, load_tokenizer

    bench = load_data(args.data, bench, eval_fields=True)
    if getattr(bench, "kind", "qa") != "qa":
        raise UserError(f"--data {args.data}: the teacher search asks questions; pass a question/answer benchmark")
    tokenizer = load_tokenizer(args.model, args.trust_remote_code)
    fmt = PromptFormat.for_tokenizer(tokenizer, "auto")
    torch_threads()
    placement = placement_of(args, args.model)
    batch = args.batch_size or 16
    print_placement(placement, f"batch size {batch}")
    model = load_model(args.model, args.trust_remote_code, **placement.load_kwargs())
    layers = parse_layer_ranges(args.layers, len(decoder_layers(model)))
    parts = sample_parts(bench, args.max_items, args.seed)
    search = search_tau(
        model, tokenizer, fmt, parts, taus, layers, args.max_new_tokens, batch, log=lambda m: note(m, "teacher")
    )
    record = {"model": str(args.model), "data": str(args.data), "seed": args.seed, **search.as_dict()}
    with atomic_dir(args.output, overwrite=args.overwrite) as tmp:
        (tmp / "teacher.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(table(search))
    print(_examples(search))
    print(f"wrote {Path(args.output) / 'teacher.json'}")
    return 0


def _examples(search) -> str:
    """The first forget question's answer under each setting: what the numbers look like."""
    question = search.questions["forget"][0]
    lines = [f"forget question: {question}"]
    for s in search.settings:
        answer = " ".join(s["forget"]["answers"][0].split())
        lines.append(f"  {s['label']:<22} {answer[:100] or '(empty)'}")
    return "\n".join(lines)
