"""``python -m unlearnkit.pipelines.sweep``: an extra ``--jobs`` worker process of a sweep (not a user
command; :func:`unlearnkit.pipelines.sweep.run.worker_command` starts it)."""

from unlearnkit.pipelines.sweep.run import worker_main

raise SystemExit(worker_main())
