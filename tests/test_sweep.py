"""``unlearnkit sweep``: honest split, search spaces, resumable and parallel studies, outputs.

Trials run on a miniature world (12 authors x 4 facts) with a tiny Llama that ``finetune`` trained on
it (tests/sweep_helpers.py): seconds each. The kill/resume and parallel tests run the real CLI in
subprocesses.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_helpers import choosing, cli, sweep_argv, trained_pair

from unlearnkit.errors import UserError


@pytest.fixture(scope="module")
def sweep_inputs(tmp_path_factory):
    """A miniature world, target and oracle made by ``unlearnkit finetune`` on it, search spaces."""
    return trained_pair(tmp_path_factory)


@pytest.fixture
def argv(sweep_inputs):
    return lambda out, trials, *extra: sweep_argv(sweep_inputs, sweep_inputs / "world", out, trials, *extra)


_cli = cli
# Tests of the study's mechanics accept both endings: a choice (0) or a refusal to choose (4).
ENDINGS = (0, 4)


def _trials(db: Path) -> list[tuple[int, str]]:
    if not db.is_file():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return list(con.execute("SELECT number, state FROM trials ORDER BY number"))
    except sqlite3.OperationalError:  # tables not created yet
        return []


def _load_study(out: Path):
    import optuna

    from unlearnkit.pipelines.sweep import STUDY_NAME

    return optuna.load_study(study_name=STUDY_NAME, storage=f"sqlite:///{out / 'study.db'}")


def _assert_exact(out: Path, n: int):
    """``n`` finished trials, distinct numbers and parameter sets, nothing left running."""
    from optuna.trial import TrialState

    study = _load_study(out)
    done = [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(done) == n, [(t.number, t.state.name) for t in study.trials]
    assert not [t for t in study.trials if t.state == TrialState.RUNNING]
    assert len({t.number for t in done}) == n
    assert len({json.dumps(t.params, sort_keys=True) for t in done}) == n
    return study


# ---------------------------------------------------------------------------------------------
# The honest split


def test_split_is_deterministic_and_disjoint_by_author(mini_bench):
    from unlearnkit.pipelines.sweep import forget_entities, split_forget

    entities, how = forget_entities(mini_bench.forget)
    assert how == "author field"
    assert entities == [r["author"] for r in mini_bench.forget]
    sel, test = split_forget(entities, seed=0)
    assert (sel, test) == split_forget(entities, seed=0)  # deterministic
    assert sorted(sel + test) == list(range(len(entities)))  # a partition of the rows
    sel_authors, test_authors = {entities[i] for i in sel}, {entities[i] for i in test}
    assert sel_authors and test_authors and not sel_authors & test_authors  # whole authors per half
    assert len(sel_authors) == (len(set(entities)) + 1) // 2
    splits = {tuple(split_forget(entities, seed=s)[0]) for s in range(6)}
    assert len(splits) > 1  # the seed decides which authors go where


def test_tofu_rows_are_split_by_author_blocks_and_plain_rows_by_row():
    from unlearnkit.pipelines.sweep import forget_entities, split_forget

    rows = [{"question": f"q{i}", "answer": "a"} for i in range(60)]  # TOFU: 20 consecutive per author
    entities, how = forget_entities(rows, "tofu:forget05")
    assert "TOFU" in how and len(set(entities)) == 3
    sel, test = split_forget(entities, seed=1)
    for block in range(3):
        rows_of_block = set(range(20 * block, 20 * block + 20))
        assert rows_of_block <= set(sel) or rows_of_block <= set(test)
    entities, how = forget_entities(rows, "my-folder")
    assert how.startswith("rows") and len(set(entities)) == 60
    with pytest.raises(UserError, match="at least 2"):
        split_forget(["only-one"] * 5, seed=0)


# ---------------------------------------------------------------------------------------------
# Search spaces


def test_every_shipped_space_loads_for_its_method():
    from unlearnkit.pipelines.sweep import SPACES_DIR, load_space, space_file
    from unlearnkit.train.methods import get_method

    files = sorted(SPACES_DIR.glob("*.yaml"))
    assert {"asu.yaml", "npo.yaml", "t-npo.yaml", "gd.yaml", "default.yaml"} <= {f.name for f in files}
    for path in files:
        method = get_method("gd" if path.stem == "default" else path.stem)
        space = load_space(path, method)
        assert "lr" in space.params
    assert space_file("me_gd").name == "default.yaml"  # a method without its own file


@pytest.mark.parametrize(
    "text, message",
    [
        ("params:\n  lr: {low: 1.0e-3, high: 1.0e-5}\n", "low=0.001 must be < high"),
        ("params:\n  lr: {low: 0, high: 1.0, log: true}\n", "log range needs low > 0"),
        ("params:\n  tau: {low: 2.0, high: 3.0}\n", "tau"),  # not a GD knob
        ("params:\n  lr: {lo: 1, high: 2}\n", "unknown field 'lo'"),
        ("params:\n  epochs: {choices: []}\n", "non-empty list"),
        ("params:\n  lr: {low: abc, high: 1.0}\n", "not a number"),
        ("params:\n  lr: {low: 1.0e-5, high: 1.0e-3}\nfixed:\n  lr: 1.0e-4\n", "both searched"),
        ("params: {}\n", "non-empty 'params:'"),
        ("params:\n  lr: [1\n", "invalid YAML"),
        ("params:\n  lr: {low: -1.0, high: 1.0}\n", "lr"),  # the config's own range check
    ],
)
def test_bad_space_is_one_clear_error(tmp_path, text, message):
    from unlearnkit.pipelines.sweep import load_space
    from unlearnkit.train.methods import get_method

    path = tmp_path / "space.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as err:
        load_space(path, get_method("gd"))
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_grid_space_uses_the_grid_sampler(tmp_path):
    from unlearnkit.pipelines.sweep import load_space
    from unlearnkit.train.methods import get_method

    path = tmp_path / "grid.yaml"
    path.write_text("params:\n  epochs: {choices: [1, 2]}\n  tau: {low: 2, high: 4, step: 1}\n")
    space = load_space(path, get_method("asu"))
    assert space.is_grid and space.grid() == {"epochs": [1, 2], "tau": [2, 3, 4]} and space.grid_size() == 6
    path.write_text("params:\n  tau: {low: 2.0, high: 4.0}\n")
    assert not load_space(path, get_method("asu")).is_grid


def test_pruning_callback_raises_trial_pruned_below_the_floor(tiny_random_llama, world_tokenizer, mini_bench):
    import optuna
    from transformers import TrainerState

    from unlearnkit.pipelines.sweep.worker import UtilityProxy, pruning_callback

    probe = UtilityProxy(mini_bench, seed=0)
    value = probe(tiny_random_llama, world_tokenizer)
    assert 0 < value < 1
    state = TrainerState()
    state.epoch = 1.0
    pruning_callback(probe, world_tokenizer, value / 2).on_epoch_end(
        None, state, None, model=tiny_random_llama
    )
    with pytest.raises(optuna.TrialPruned, match="floor"):
        pruning_callback(probe, world_tokenizer, value * 2).on_epoch_end(
            None, state, None, model=tiny_random_llama
        )


# ---------------------------------------------------------------------------------------------
# End to end


def test_sweep_writes_outputs_and_best_yaml_is_an_unlearn_recipe(tmp_path, argv, sweep_inputs):
    from unlearnkit.cli import main

    out = tmp_path / "sweep"
    args = choosing(argv(out, 3), sweep_inputs)
    assert main(args) == 0
    for name in ("study.db", "best.yaml", "trials.jsonl", "pareto.png", "report.html", "summary.json"):
        assert (out / name).is_file(), name
    rows = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert [r["number"] for r in rows] == [0, 1]  # --trials 3, but the space has 2 points
    summary = json.loads((out / "summary.json").read_text())
    assert {"target", "oracle", "gd (tuned)"} <= set(summary["test"])
    assert not set(summary["split"]["selection_entities"]) & set(summary["split"]["test_entities"])
    report = (out / "report.html").read_text()
    assert "test halves" in report and "selection halves" in report
    assert "SELECTION halves" in (out / "best.yaml").read_text()

    # best.yaml is a recipe `unlearn --config` accepts (it names the method itself)
    model_out = tmp_path / "unlearned"
    code = main(
        ["unlearn", "--model", str(sweep_inputs / "target"), "--data", str(sweep_inputs / "world")]
        + ["--config", str(out / "best.yaml"), "--output", str(model_out)]
    )
    assert code == 0 and (model_out / "config.json").is_file()

    # a rerun of the finished sweep adds no trial; different settings on the same folder are refused
    assert main(args) == 0
    assert len(_trials(out / "study.db")) == 2
    bad = list(args)
    bad[bad.index("--seed") + 1] = "1"
    assert main(bad) == 2


def test_the_chosen_trials_test_utility_is_not_its_selection_utility(tmp_path, argv, sweep_inputs):
    """Retain and general rows are halved too: the reported utility is measured on rows no choice saw."""
    from unlearnkit.cli import main

    out = tmp_path / "sweep"
    assert main(choosing(argv(out, 2), sweep_inputs)) == 0
    summary = json.loads((out / "summary.json").read_text())
    parts = summary["split"]["parts"]
    assert {"forget", "retain", "general.world_facts", "general.real_authors", "holdout"} <= set(parts)
    for part, info in parts.items():  # whole entities: none on both sides, every row on one side
        assert not set(info["selection_entities"]) & set(info["test_entities"]), part
        assert info["selection_rows"] + info["test_rows"] == info["rows"], part
        assert info["selection_rows"] and info["test_rows"], part
    chosen_selection = summary["chosen_selection_metrics"]
    chosen_test = summary["test"]["gd (tuned)"]
    # scored on the test half's forget items only (the whole benchmark would score them all)
    assert chosen_test["forget_quality_n"] == parts["forget"]["test_rows"] < parts["forget"]["rows"]
    assert chosen_selection["forget_quality_n"] == parts["forget"]["selection_rows"]
    assert chosen_test["model_utility"] != chosen_selection["model_utility"]
    assert chosen_test["retain_rougeL_recall"] != chosen_selection["retain_rougeL_recall"] or (
        chosen_test["retain_prob"] != chosen_selection["retain_prob"]
    )
    reference = json.loads((out / "reference.json").read_text())
    assert reference["target_test"]["model_utility"] != reference["target_selection"]["model_utility"]


def test_killed_sweep_resumes_the_same_study_without_losing_or_duplicating(tmp_path, argv):
    out = tmp_path / "sweep"
    n = 4
    proc = _cli(argv(out, n))
    killed_at = None
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        states = _trials(out / "study.db")
        if any(s == "COMPLETE" for _, s in states) and any(s == "RUNNING" for _, s in states):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed_at = [num for num, s in states if s == "RUNNING"]
            break
        time.sleep(0.1)
    assert killed_at, f"the sweep ended before it could be killed: {proc.communicate()[0][-2000:]}"
    before = _trials(out / "study.db")
    assert any(s == "RUNNING" for _, s in before)  # left behind by the killed process

    rerun = _cli(argv(out, n))
    log = rerun.communicate(timeout=600)[0]
    assert rerun.returncode in ENDINGS, log[-3000:]
    assert "resumed" in log
    study = _assert_exact(out, n)
    by_number = {t.number: t for t in study.trials}
    for number in killed_at:
        killed = by_number[number]
        assert killed.state.name == "FAIL"
        if killed.user_attrs.get("params_drawn"):  # its whole set was drawn: it ran again in a later trial
            retries = [t for t in study.trials if t.user_attrs.get("retry_of") == number]
            assert len(retries) == 1 and retries[0].params == killed.params
            assert retries[0].state.name in ("COMPLETE", "PRUNED")
    # the trial count continued: the earlier finished trials are still there, numbers only grow
    finished_before = {num for num, s in before if s in ("COMPLETE", "PRUNED")}
    assert finished_before <= {t.number for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")}
    assert (out / "summary.json").is_file()


def test_two_processes_on_one_study_finish_with_n_distinct_trials(tmp_path, argv):
    out = tmp_path / "sweep"
    n = 4
    procs = [_cli(argv(out, n)) for _ in range(2)]
    logs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode in ENDINGS for p in procs), [log[-2000:] for log in logs]
    study = _assert_exact(out, n)
    assert len(study.trials) == n  # no trial was claimed beyond --trials


def test_one_worker_repeats_a_sweep_exactly(tmp_path, argv):
    """With one worker the seeded sampler and the seeded trials repeat a sweep trial by trial: the same
    parameters, states and scores. (With several, TPE sees the trials in the order they finish, so a
    rerun may choose another trial: the README says so.)"""
    from unlearnkit.cli import main

    runs = []
    for name in ("first", "again"):
        out = tmp_path / name
        assert main(argv(out, 3)) in ENDINGS
        rows = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
        keys = ("number", "state", "params", "values", "selection_metrics")
        runs.append([{k: r[k] for k in keys} for r in rows])
    assert len(runs[0]) == 3 and runs[0] == runs[1]
    assert len({json.dumps(r["params"], sort_keys=True) for r in runs[0]}) > 1  # the trials differ


def test_jobs_flag_starts_worker_processes(tmp_path, argv):
    from unlearnkit.cli import main

    out = tmp_path / "sweep"
    assert main(argv(out, 3, "--jobs", "2")) in ENDINGS
    study = _assert_exact(out, 3)
    assert len(study.trials) == 3
    assert all(t.user_attrs["worker"]["pid"] for t in study.trials)


def _worker_pids(parent_pid: int) -> list[int]:
    import psutil

    try:
        children = psutil.Process(parent_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    pids = []
    for c in children:
        # a child can exit between the listing and the read (a zombie until reaped, or gone): not a worker
        try:
            if "unlearnkit.pipelines.sweep" in " ".join(c.cmdline()):
                pids.append(c.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
            continue
    return pids


def test_kill_9_of_the_main_sweep_process_leaves_no_worker(tmp_path, argv):
    import psutil

    out = tmp_path / "sweep"
    proc = _cli(argv(out, 6, "--jobs", "2"))
    workers: list[int] = []
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and not workers:
        workers = _worker_pids(proc.pid)
        time.sleep(0.2)
    assert workers, f"no worker process appeared: {proc.communicate()[0][-2000:]}"
    time.sleep(1.0)  # let the worker get past its start (imports, death signal armed)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 30
    alive = workers
    while alive and time.time() < deadline:
        alive = [
            pid for pid in workers if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"
        ]
        time.sleep(0.2)
    for pid in alive:  # clean up before failing: never leave a process behind
        psutil.Process(pid).kill()
    assert not alive, f"worker(s) {alive} outlived the killed sweep"


def test_die_with_parent_arms_the_death_signal_on_linux():
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's; elsewhere the watchdog thread is used")
    code = "import os; from unlearnkit.pipelines.sweep import die_with_parent; print(die_with_parent(os.getppid()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "pdeathsig", out.stderr


def test_quickstart_uses_a_tuned_recipe_when_configs_tiny_has_one(tmp_path, monkeypatch):
    from unlearnkit.pipelines import quickstart

    monkeypatch.setattr(quickstart, "TUNED_DIR", tmp_path)
    shared = quickstart.method_overrides("asu", 3)
    assert shared["lr"] == quickstart.TINY_UNLEARN["lr"] and shared["tau"] == 5.0
    (tmp_path / "asu.yaml").write_text("# tuned\nmethod: asu\nseed: 0\nlr: 0.002\ntau: 7.5\nepochs: 3\n")
    tuned = quickstart.method_overrides("asu", 3)
    assert (tuned["lr"], tuned["tau"], tuned["epochs"], tuned["seed"]) == (0.002, 7.5, 3, 3)  # --seed wins
    assert "method" not in tuned
    assert quickstart.method_overrides("asu", 3, tuned=False) == shared
    assert quickstart.method_overrides("npo", 3) == quickstart.method_overrides("npo", 3, tuned=False)


def test_choice_keeps_the_utility_floor_and_prefers_forgetting():
    from types import SimpleNamespace

    from unlearnkit.pipelines.sweep import SweepSettings, choose, objective_values

    st = SweepSettings(model="m", data="d", method="gd", output="o", retain_model="oracle")
    ref = {
        "target_selection": {"forget_quality": 1e-6, "model_utility": 0.50},
        "oracle_selection": {"forget_quality": 1.0, "model_utility": 0.50},
    }
    ctx = SimpleNamespace(settings=st, reference=ref)

    def row(n, fq, mu):
        metrics = {"forget_quality": fq, "model_utility": mu}
        return {
            "number": n,
            "state": "COMPLETE",
            "selection_metrics": metrics,
            "values": objective_values(ctx, metrics),
        }

    rows = [row(0, 1e-5, 0.50), row(1, 0.3, 0.495), row(2, 0.9, 0.40), row(3, 1e-4, 0.45)]
    chosen, rule = choose(rows, ctx)
    assert chosen["number"] == 1 and "0.98" in rule  # best forgetting among utility >= 0.49
    # nobody keeps the floor: the best sum of forgetting progress and utility ratio (not the least forgetting)
    rows = [row(0, 1e-5, 0.45), row(1, 0.5, 0.40), row(2, 0.9, 0.20)]
    chosen, rule = choose(rows, ctx)
    assert chosen["number"] == 1 and "progress" in rule
    assert choose([], ctx) == (None, "no complete trial")


@pytest.mark.parametrize(
    "change, message",
    [
        (("--trials", "0"), "--trials 0"),
        (("--jobs", "0"), "--jobs 0"),
        (("--method", "nope"), "nope"),
        (("--objective", "forget_quality,bogus"), "--objective bogus"),
        (("--retain-model", ""), "needs --retain-model"),
        (("--storage", "mongodb://host/db"), "unsupported database 'mongodb'"),
        (("--storage", "not a url"), "is not a database URL"),
        (("--storage", "postgresql://u:secret@127.0.0.1:1/db"), "cannot connect"),
    ],
)
def test_bad_flags_exit_2_and_write_nothing(tmp_path, argv, capsys, change, message):
    from unlearnkit.cli import main

    out = tmp_path / "sweep"
    args = argv(out, 3)
    flag, value = change
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    if flag == "--retain-model":  # no oracle but the forget_quality objective asked for
        args += ["--objective", "forget_quality,model_utility"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert "secret" not in err  # a storage URL's password is never printed
    assert not out.exists()


def test_trials_apply_a_tiny_models_recorded_defaults_like_unlearn(tmp_path):
    """``unlearn --config best.yaml`` on a model that records scale defaults must rerun the chosen trial."""
    from types import SimpleNamespace

    from unlearnkit.pipelines.sweep import SearchSpace, SweepSettings, recipe_values

    recorded = {
        "train": {"lr": 5e-4, "grad_accum": 1, "epochs": 5.0},
        "method": {"asu": {"tau": 5.0, "forget_weight": 1.0}},
    }
    (tmp_path / "unlearnkit.json").write_text(json.dumps({"unlearn_defaults": recorded}))
    st = SweepSettings(model=str(tmp_path), data="d", method="asu", output="o", seed=3)
    ctx = SimpleNamespace(settings=st, space=SearchSpace(params={}, fixed={"grad_accum": 2}, source="s"))
    values = recipe_values(ctx, {"lr": 1e-3, "lambda": 0.5})
    # the space wins over the recorded defaults ('lambda' is forget_weight); the rest is spelled out
    assert values == {"epochs": 5.0, "tau": 5.0, "grad_accum": 2, "lr": 1e-3, "lambda": 0.5, "seed": 3}


def test_grid_space_runs_each_point_once(tmp_path, argv):
    from unlearnkit.cli import main

    space = tmp_path / "grid.yaml"
    space.write_text(
        "params:\n  epochs: {choices: [1, 2]}\nfixed:\n  lr: 1.0e-3\n  batch_size: 4\n  grad_accum: 1\n"
    )
    out = tmp_path / "sweep"
    args = argv(out, 5)
    args[args.index("--space") + 1] = str(space)
    assert main(args) in ENDINGS
    study = _assert_exact(out, 2)  # --trials 5, but the grid has 2 points
    assert sorted(t.params["epochs"] for t in study.trials) == [1, 2]


def test_without_an_oracle_the_objectives_are_forget_rouge_and_utility(tmp_path, argv, sweep_inputs):
    from unlearnkit.cli import main

    out = tmp_path / "sweep"
    args = choosing(argv(out, 2), sweep_inputs)
    i = args.index("--retain-model")
    del args[i : i + 2]
    assert main(args) == 0
    study = _load_study(out)
    assert [d.name for d in study.directions] == ["MINIMIZE", "MAXIMIZE"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["objectives"] == ["forget_rougeL_recall", "model_utility"]
    assert "oracle" not in summary["test"] and "gd (tuned)" in summary["test"]


def test_a_bad_flag_fails_before_torch_is_imported(tmp_path):
    code = (
        "import sys\nfrom unlearnkit.cli import main\n"
        f"rc = main(['sweep', '--model', 'm', '--data', 'd', '--method', 'asu', '--output', {str(tmp_path / 'o')!r}, "
        "'--jobs', '0'])\nprint(rc, 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "False"], out.stderr


def test_a_killed_trial_runs_again_only_when_it_had_drawn_all_its_parameters():
    """A kill between ``ask`` and the last ``suggest`` leaves a partial set: retrying it would mix the
    killed draw with fresh ones, so it is failed and not re-enqueued; a complete set runs again as is."""
    import optuna

    from unlearnkit.pipelines.sweep.study import recover_stale

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["maximize"])
    partial = study.ask()
    partial.suggest_float("lr", 1e-5, 1e-3, log=True)  # killed before "epochs" was drawn
    whole = study.ask()
    params = {
        "lr": whole.suggest_float("lr", 1e-5, 1e-3, log=True),
        "epochs": whole.suggest_int("epochs", 1, 5),
    }
    whole.set_user_attr("params_drawn", True)
    assert sorted(recover_stale(study)) == [partial.number, whole.number]  # untagged: their worker is gone
    states = {t.number: t.state.name for t in study.trials}
    assert states[partial.number] == states[whole.number] == "FAIL"
    queued = [t for t in study.trials if t.state.name == "WAITING"]
    assert len(queued) == 1 and queued[0].user_attrs["retry_of"] == whole.number
    retry = study.ask()  # the next claim takes the queued retry: the same values come back
    assert retry.user_attrs["retry_of"] == whole.number
    assert {
        "lr": retry.suggest_float("lr", 1e-5, 1e-3, log=True),
        "epochs": retry.suggest_int("epochs", 1, 5),
    } == params


def test_a_trial_of_another_machine_is_stale_only_when_its_heartbeat_stopped():
    from types import SimpleNamespace

    from unlearnkit.pipelines.sweep.study import STALE_AFTER_SECONDS, is_stale

    now = 1_000_000.0
    tag = {"pid": 1, "start": 1.0, "host": "another-machine", "claimed": now - 2 * STALE_AFTER_SECONDS}

    def trial(**attrs):
        return SimpleNamespace(user_attrs={"worker": tag, **attrs})

    assert not is_stale(trial(heartbeat=now - 30), now)  # alive: stamped 30 s ago
    assert is_stale(trial(heartbeat=now - STALE_AFTER_SECONDS - 1), now)  # silent past the limit
    assert is_stale(trial(), now)  # claimed long ago and never stamped
    assert not is_stale(SimpleNamespace(user_attrs={"worker": {**tag, "claimed": now - 5}}), now)


def test_heartbeat_stamps_the_running_trial(tmp_path):
    import optuna

    from unlearnkit.pipelines.sweep import heartbeat

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", directions=["maximize"])
    trial = study.ask()
    with heartbeat(study, trial._trial_id, every=0.05):
        time.sleep(0.4)
    first = study.trials[0].user_attrs["heartbeat"]
    assert first > time.time() - 5
    time.sleep(0.2)  # stopped with the block: no stamp after it
    assert study.trials[0].user_attrs["heartbeat"] == first
