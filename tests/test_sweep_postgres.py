"""One sweep study shared by two workers with separate folders, in a real PostgreSQL server.

The test starts a throwaway server from Debian's ``postgresql`` package (``initdb`` / ``pg_ctl``, found
on PATH or under /usr/lib/postgresql/*/bin; ``.ci/run`` installs the package when missing) on a unix
socket in a temporary folder. ``initdb`` refuses to run as root, so as root the server runs as the
``postgres`` user (``runuser``). It never skips: a machine that cannot start the server fails here
with the reason, because the shared-study path must be tested wherever the suite runs.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from sweep_helpers import choosing, cli, sweep_argv, trained_pair


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[::-1]), None
    )
    if not found:
        pytest.fail(
            f"PostgreSQL's {name} was not found (PATH, /usr/lib/postgresql/*/bin): install Debian's "
            "postgresql package (apt-get install -y postgresql; .ci/run does) to run the shared-study test"
        )
    return found


@pytest.fixture(scope="module")
def postgres_url():
    """A running throwaway server; yields its URL (unix socket), stops and removes it afterwards."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    root = Path(tempfile.mkdtemp(prefix="unlearnkit-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("runuser"):
            pytest.fail(
                "running as root, PostgreSQL needs an unprivileged user: runuser (util-linux) is missing"
            )
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail(
                "running as root and there is no 'postgres' user to run the server (install postgresql)"
            )
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        root.chmod(0o755)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = "54329"

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([*as_user, *cmd], capture_output=True, text=True, timeout=120)

    init = run([initdb, "-D", str(data), "-A", "trust", "-U", "sweep", "--no-sync"])
    if init.returncode:
        pytest.fail(f"initdb failed: {init.stderr.strip()[-1500:]}")
    opts = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off"
    started = run([pg_ctl, "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "-t", "60", "start"])
    if started.returncode:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        pytest.fail(f"the PostgreSQL server did not start: {started.stderr.strip()[-800:]} {log[-1500:]}")
    try:
        yield f"postgresql://sweep@/postgres?host={sock}&port={port}"
    finally:
        run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return trained_pair(tmp_path_factory)


def test_two_workers_with_separate_folders_share_one_study(tmp_path, inputs, postgres_url):
    import optuna
    from optuna.trial import TrialState

    n = 2  # the two-point choice space: each worker can claim one, neither may claim a third
    folders = [tmp_path / "machine-a", tmp_path / "machine-b"]
    world = inputs / "world"
    args = [choosing(sweep_argv(inputs, world, out, n, "--storage", postgres_url), inputs) for out in folders]
    procs = [cli(a) for a in args]
    logs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [log[-2500:] for log in logs]

    names = optuna.study.get_all_study_names(storage=postgres_url)
    assert len(names) == 1 and names[0].startswith("unlearnkit-sweep-gd-")
    study = optuna.load_study(study_name=names[0], storage=postgres_url)
    done = [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(study.trials) == n and len(done) == n
    assert len({json.dumps(t.params, sort_keys=True) for t in done}) == n

    best = [out / "best.yaml" for out in folders if (out / "best.yaml").is_file()]
    assert len(best) == 1, [log[-1500:] for log in logs]  # one study, one report
    other = next(out for out in folders if out / "best.yaml" not in best)
    assert not (other / "study.db").exists()  # the study lives in the server, not in the folders
    summary = json.loads((best[0].parent / "summary.json").read_text())
    assert summary["chosen_trial"] in {t.number for t in done}
    assert summary["study"]["name"] == names[0]
    assert any("finishes last writes" in log or "already reported" in log for log in logs)


def test_a_worker_with_other_settings_joins_another_study(tmp_path, inputs, postgres_url):
    """Studies in a shared database are named by what the workers must share: a different seed
    (another split of the halves) never mixes its trials into the first study."""
    from unlearnkit.pipelines.sweep import SweepSettings, load_context, study_name

    def name(seed: int) -> str:
        st = SweepSettings(
            model=str(inputs / "target"),
            data=str(inputs / "world"),
            method="gd",
            output=str(tmp_path / f"s{seed}"),
            retain_model=str(inputs / "oracle"),
            space=str(inputs / "choice.yaml"),
            seed=seed,
            storage=postgres_url,
        )
        return study_name(load_context(st))

    assert name(0) == name(0) and name(0) != name(1)
