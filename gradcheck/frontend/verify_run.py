"""The jobs of a ``gradcheck verify`` run and their running: each target's settings
(the options over the configuration, the seed), the run's seed, ``--shard`` and
``--seeds``, the workers the command holds (:class:`_Runner`) and the results they
send, and an error of one target as the command's one line.

Like :mod:`gradcheck.cli`, it imports neither NumPy nor the engine at its top: the
runner and the search are imported where they are used.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gradcheck.defaults import DEFAULT_EXAMPLE_TIMEOUT
from gradcheck.errors import (
    GradcheckError,
    InternalError,
    Interrupted,
    InvalidDescription,
    NothingToCheck,
    OutputError,
    printable,
)
from gradcheck.frontend.exits import _fail, _report_internal_error
from gradcheck.frontend.formats import RunReport
from gradcheck.frontend.options import FLAGS, OPTION_OF_SETTING, SWITCHES, settings_from_options
from gradcheck.frontend.outputs import (
    _annotate,
    _compare,
    _emit,
    _html_charts,
    _inputs,
    _outputs,
    _shown_path,
    _step_summary,
    _write_outputs,
)
from gradcheck.frontend.plan import RunItem, listed_plan, module_kwargs
from gradcheck.frontend.progress import Progress, wants_color
from gradcheck.search.precedence import layered

if TYPE_CHECKING:
    from gradcheck.frontend.config import ProjectConfig
    from gradcheck.frontend.jobs import Job, WorkerSetup
    from gradcheck.frontend.runner import StopOnSignals
    from gradcheck.search.verifier import VerifyResult


def _run_seed(seed: int | None, baseline: Any, config: ProjectConfig | None) -> int:
    """The run's seed: --seed, else the baseline's (to check the same examples), else
    the configuration's default, else a fresh one."""
    if seed is not None:
        return seed
    if baseline is not None:
        return int(baseline["seed"])
    if config is not None and "seed" in config.defaults:
        return int(config.defaults["seed"])
    return secrets.randbits(32)


def _job_settings(
    item: RunItem,
    overrides: dict[str, Any],
    seed: int | None,
    baseline: Any,
    run_seed: int,
) -> dict[str, Any]:
    """verify()'s keyword arguments for one target: the options over its settings
    from the configuration; the seed from --seed, else the baseline's for this
    target, else the target's own from the configuration, else the run's."""
    old = baseline["targets"].get(item.target.name) if baseline is not None else None
    return layered(
        defaults={"seed": run_seed},
        project=item.settings,  # the file's defaults and the target's entry, merged
        baseline={"seed": old["seed"]} if old is not None else None,
        options=dict(overrides, seed=seed),
    )


def _jobs_at_once(
    jobs: int | None, settings: list[dict[str, Any]], run: Any, seeds: int = 1
) -> int:
    """The jobs the run checks at once: ``--jobs``, else one per usable core but no
    more than the jobs (targets times ``--seeds``), and one where a target is checked
    on a device (a GPU the processes would share); the local runner is told (a Dask
    cluster was sized when it started)."""
    from gradcheck.frontend.jobs import default_jobs
    from gradcheck.frontend.runner import Run

    n = len(settings) * max(1, seeds)
    if jobs is None:
        jobs = default_jobs(n, any(s.get("device") for s in settings))
        if isinstance(run, Run):
            run.n_jobs = jobs
    return max(1, min(jobs, n))


def _job(item: RunItem, settings: dict[str, Any], verbose: bool, jobs: int = 1) -> Job:
    """The job of one target: verify()'s settings, and the run's limits apart."""
    from gradcheck.frontend.config import RUN_LIMITS
    from gradcheck.frontend.jobs import Job, default_max_memory

    limits = {key: settings.pop(key) for key in RUN_LIMITS if key in settings}
    return Job(
        item.target.name,
        settings,
        verbose,
        timeout=limits.get("timeout"),
        example_timeout=limits.get("example_timeout", DEFAULT_EXAMPLE_TIMEOUT),
        max_memory=limits.get("max_memory", default_max_memory(jobs)) or None,
    )


def _with_seeds(
    items: list[RunItem], plan: list[Job], ranges: list[tuple[int, int, int]]
) -> tuple[list[RunItem], list[Job]]:
    """The jobs of the run's tasks: for each ``(i, first, stop)``, target ``i``'s job
    once per seed ``first`` to ``stop - 1`` of a deep run (seed ``k`` is its seed +
    ``k``), the seeds of one task next to each other (gradcheck.frontend.deep
    combines them); one seed, the target's own, without ``--seeds``."""
    from dataclasses import replace

    from gradcheck.frontend.deep import seed_of

    new_items, new_plan = [], []
    for i, first, stop in ranges:
        job = plan[i]
        base = int(job.settings.get("seed", 0))
        for k in range(first, stop):
            new_items.append(items[i])
            new_plan.append(replace(job, settings={**job.settings, "seed": seed_of(base, k)}))
    return new_items, new_plan


def _take_shard(
    text: str,
    durations_path: Path | None,
    plan: list[Job],
    baseline: Any,
    fixed_seed: bool,
    run_seed: int,
    seeds: int | None,
    verbose: bool,
) -> tuple[list[tuple[int, int, int]], dict[str, Any]]:
    """This shard's part of the run (gradcheck.frontend.shards): its tasks, each
    ``(target index, first seed, stop)``, and its manifest."""
    from gradcheck.frontend.baseline import current_versions
    from gradcheck.frontend.shards import durations_of, manifest, parse_shard, plan_digest, split

    try:
        shard = parse_shard(text)
    except ValueError as exc:
        message = str(exc).removeprefix(f"--shard {text}: ")
        raise click.BadParameter(message, param_hint="'--shard'") from None
    if not fixed_seed:
        _fail(
            "--shard needs the same seed in every shard: give --seed N (in a CI matrix, "
            "one number for all its jobs, such as the workflow's run id)",
            2,
            None,
            verbose,
        )
    durations = durations_of(baseline) if baseline is not None else {}
    if durations_path is not None:
        durations = durations_of(_read_durations(durations_path, verbose))
    names = [job.spec for job in plan]
    tasks = split(names, shard.count, durations, seeds or 1)[shard.index - 1]
    digest = plan_digest([(job.spec, {**job.settings, "seeds": seeds or 1}) for job in plan])
    shown = manifest(
        shard,
        seed=run_seed,
        names=names,
        digest=digest,
        versions=current_versions(),
        tasks=tasks,
        seeds=seeds or 1,
        bases=[int(plan[t.position].settings.get("seed", 0)) for t in tasks],
    )
    return [(t.position, t.first, t.stop) for t in tasks], shown


def _shard_note(manifest: dict[str, Any], ranges: list[tuple[int, int, int]]) -> str:
    """``shard 2/4: 48 of 192 targets`` (and, in a deep run, how many of its seeds)."""
    head = (
        f"shard {manifest['index']}/{manifest['count']}: {len(ranges)} of "
        f"{len(manifest['targets'])} targets"
    )
    seeds = manifest["seeds"]
    if seeds == 1:
        return head
    held = sum(stop - first for _, first, stop in ranges)
    every = len(manifest["targets"]) * seeds
    return f"{head}, {held} of the run's {every} seeds (--seeds {seeds})"


def _read_durations(path: Path, verbose: bool) -> Any:
    import json

    from gradcheck.frontend.files import read_text

    try:
        return json.loads(
            read_text(path, what="durations file", limit=256 << 20, error=OutputError)
        )
    except OutputError as exc:
        _fail(str(exc), 2, exc, verbose)
    except (ValueError, RecursionError) as exc:
        _fail(f"{path}: not a JSON report or baseline ({exc})", 2, exc, verbose)


def _shard_baseline(baseline: Any, manifest: dict[str, Any] | None, mine: list[str]) -> Any:
    """The baseline a shard compares with: its own targets, and those of the baseline
    that no shard runs (vanished, reported alike by every shard); not the targets of
    the other shards, which are not vanished."""
    if baseline is None or manifest is None:
        return baseline
    planned = set(manifest["targets"])
    own = set(mine)
    targets = {
        name: entry
        for name, entry in baseline["targets"].items()
        if name not in planned or name in own
    }
    return {**baseline, "targets": targets}


class _Runner:
    """The run's workers, the first started at once (it imports NumPy and Hypothesis
    while the command loads the targets), all stopped on the way out. What they report
    goes to ``shown``, the run's :class:`~gradcheck.frontend.progress.Progress`, once
    the command has made it (the targets known)."""

    def __init__(
        self,
        jobs: int,
        setup: WorkerSetup,
        executor: str = "local",
        scheduler: str | None = None,
        verbose: bool = False,
    ) -> None:
        from gradcheck.frontend.runner import Run

        self.shown: Progress | None = None
        self.verbose = verbose
        self.run: Any
        if executor == "dask":
            from gradcheck.frontend.dask_executor import DaskRun

            self.run = DaskRun(jobs, setup, scheduler, on_finished=self._finished)
        else:
            self.run = Run(jobs, setup, progress=self._started, on_finished=self._finished)

    def preload(self, targets: Sequence[str], config: ProjectConfig | None, cwd: str) -> list[str]:
        """The frameworks the targets' modules import, as their text says
        (gradcheck.frontend.preload), which the worker starts importing now."""
        from gradcheck.frontend.preload import frameworks_of

        folders = [cwd]
        specs = list(targets)
        if not specs and config is not None:
            folders.insert(0, str(config.path.parent.resolve()))
            specs = [listed.target for listed in config.targets]
        frameworks = frameworks_of(specs, folders)
        if frameworks and hasattr(self.run, "preload"):
            from gradcheck.checking.frameworks import preloaded_modules

            self.run.preload(preloaded_modules(frameworks))
        return [fw.name for fw in frameworks]

    def preload_and_say(
        self, targets: Sequence[str], config: ProjectConfig | None, cwd: str
    ) -> None:
        """:meth:`preload`, and the command says what the worker is loading."""
        frameworks = self.preload(targets, config, cwd)
        if frameworks and self.shown is not None:
            self.shown.loading(", ".join(frameworks))

    def _started(self, index: int, job: Job) -> Any:
        shown = self.shown
        if shown is None:
            return None
        shown.started(index, job.spec)
        return lambda done, total: shown.examples(index, done, total)

    def _finished(self, index: int, outcome: Any) -> None:
        from gradcheck.search.verifier import VerifyResult

        if self.shown is not None and isinstance(outcome, VerifyResult):
            self.shown.finished_target(index, outcome)

    def release(self) -> None:
        release = getattr(self.run, "release", None)
        if release is not None:
            release()

    def close_bars(self) -> None:
        if self.shown is not None:
            self.shown.close()

    def __enter__(self) -> _Runner:
        try:
            self.run.prestart()
        except GradcheckError as exc:
            self.run.close()
            _fail(str(exc), exc.exit_code, exc, self.verbose)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close_bars()
        self.run.close()


def _run_all(
    runner: _Runner,
    items: list[RunItem],
    plan: list[Job],
    overrides: dict[str, Any],
    verbose: bool,
    signals: StopOnSignals,
) -> tuple[list[VerifyResult], int | None]:
    """Run every job: the results, and the signal that stopped the run (None when it
    ran to its end). An error ends the run with its one-line message, naming the
    target whose job raised it."""
    from gradcheck.search.verifier import VerifyResult

    results: list[VerifyResult] = []
    try:
        for index, outcome in runner.run.results(plan):
            if not isinstance(outcome, VerifyResult):
                runner.close_bars()
                runner.run.close()  # before the message: no worker outlives the command
                _fail_item(outcome, items[index], overrides, verbose)
            results.append(outcome)
    except Interrupted as stop:
        signals.acknowledge()
        runner.close_bars()
        results.extend(outcome for _, outcome in runner.run.stop(stop.signum))
        return results, stop.signum
    return results, None


def _fail_item(
    exc: BaseException, item: RunItem, overrides: dict[str, Any], verbose: bool
) -> NoReturn:
    """One target's error as its one-line message and exit code."""
    if isinstance(exc, InvalidDescription):
        _fail(_describe_invalid(exc, item, overrides), exc.exit_code, exc, verbose)
    if isinstance(exc, GradcheckError) and not isinstance(exc, InternalError):
        _fail(f"{item.target.name}: {exc}", exc.exit_code, exc, verbose)
    # A bug of gradcheck's own, not of the op (here, or a RemoteError from a worker).
    _report_internal_error(exc, f"{item.target.name}: ")
    raise click.exceptions.Exit(InternalError.exit_code)


def _described(target: Any) -> bool:
    from gradcheck.search.description import description_of

    described = getattr(target, "described", None)
    return described if described is not None else description_of(target.obj) is not None


def _describe_invalid(exc: InvalidDescription, item: RunItem, overrides: dict[str, Any]) -> str:
    """Name the option that set the bad value, or say it came from the op's own
    description."""
    setting = exc.field
    if setting is not None and setting in overrides:
        option = OPTION_OF_SETTING.get(setting, setting)
        return f"Invalid value for '{FLAGS[option]}' ({item.target.name}): {exc}"
    if setting is not None and setting in item.settings:
        return f"{item.target.name}: invalid {setting} in {item.source or 'its settings'}: {exc}"
    if setting is not None and _described(item.target):
        return (
            f"{item.target.name}: invalid {setting} in its @gradcheck.describe(...): {exc}"
            f" (override with {FLAGS[OPTION_OF_SETTING.get(setting, setting)]})"
        )
    if setting is not None:
        flag = FLAGS.get(OPTION_OF_SETTING.get(setting, setting))
        if flag is not None:
            return f"{item.target.name}: {exc} (set it with {flag})"
    return f"{item.target.name}: {exc}"


def _replay_command(
    ctx: click.Context, target: str, seed: int, narrowed: dict[str, Any] | None = None
) -> str:
    """The exact command that replays one target's run: the options the user gave,
    the target, and the run's seed (``--kwargs`` as the target took them, where a
    module's were ``narrowed`` to its own parameters)."""
    raw = ctx.params
    words = ["gradcheck", "verify", target]
    for option, flag in FLAGS.items():
        if ctx.get_parameter_source(option) is not click.core.ParameterSource.COMMANDLINE:
            continue
        value = raw[option]
        if option == "kwargs" and narrowed is not None and target in narrowed:
            if narrowed[target] is None:
                continue
            value = json.dumps(narrowed[target])
        if option in SWITCHES:
            words.append(flag if value else SWITCHES[option])
        elif isinstance(value, tuple):
            for v in map(str, value):
                # A value starting with '-' must be attached, or it reads as an option.
                words.extend([f"{flag}={v}"] if v.startswith("-") else [flag, v])
        else:
            words.extend([flag, str(value)])
    if raw.get("config_path") is not None:
        words.extend(["--config", str(raw["config_path"])])
    words.extend(["--seed", str(seed)])
    return shlex.join(words)


# --- the run's sequence (gradcheck.cli.verify_command) --------------------------------


@dataclass
class _RunInputs:
    """What the command read before the targets: the options that override the
    settings, the output files (each checked), the configuration, the baseline and
    the run's seed."""

    overrides: dict[str, Any]
    outputs: dict[str, Any]
    config: ProjectConfig | None
    baseline: Any
    run_seed: int


@dataclass
class _Planned:
    """The run's jobs: ``items`` and ``jobs`` one per task (a target, once per seed of
    ``--seeds``); ``ranges`` each ``(target index, first seed, stop)``; ``manifest``
    the shard's (None without ``--shard``); ``mine`` the targets this shard runs."""

    items: list[RunItem]
    jobs: list[Job]
    ranges: list[tuple[int, int, int]]
    manifest: dict[str, Any] | None
    mine: list[str]
    #: The ``--kwargs`` each target of a module named whole took (None: none of them).
    narrowed: dict[str, Any]


def _read_run(ctx: click.Context, run: _Runner, cwd: str) -> _RunInputs:
    """The options, the output paths (checked before anything runs: a typo in a path
    must not cost the whole run), the configuration and the baseline."""
    # Imported once the worker is starting (the settings' validators import NumPy).
    from gradcheck.frontend.config import is_regression_factor

    p = ctx.params
    overrides = settings_from_options(ctx)
    factor = p["regression_factor"]
    if factor is not None and not is_regression_factor(factor):
        raise click.BadParameter(
            f"must be a number >= 1, got {factor:g}", param_hint="'--regression-factor'"
        )
    read = {"baseline": p["baseline_path"], "config": p["config_path"]}
    outputs = _outputs(p["save_baseline"], p["junit_xml"], p["verbose"], read, p["html_path"])
    config, baseline = _inputs(p["config_path"], p["baseline_path"], p["verbose"])
    if p["html_path"] is None and config is not None and config.html is not None:
        outputs.update(_outputs(None, None, p["verbose"], None, config.html))
    run_seed = _run_seed(p["seed"], baseline, config)
    if config is not None and run.shown is not None:
        run.shown.note(f"config: {_shown_path(config.path)}")
    if not p["targets"]:
        run.preload_and_say(p["targets"], config, cwd)
    # Here while the worker starts, not after the last result: what the summary
    # and the output files need (tenths of a second on a loaded machine).
    import gradcheck.frontend.baseline
    import gradcheck.frontend.ci_report
    import gradcheck.frontend.html_report
    import gradcheck.frontend.render  # noqa: F401

    return _RunInputs(overrides, outputs, config, baseline, run_seed)


def _plan_run(ctx: click.Context, run: _Runner, given: _RunInputs) -> _Planned:
    """The targets, loaded and listed in the worker, as the run's jobs: each target's
    settings, the jobs at once, this shard's part, a job per seed of ``--seeds``."""
    p = ctx.params
    targets, verbose, seeds, seed = p["targets"], p["verbose"], p["seeds"], p["seed"]
    # The targets are imported in the worker process, never here: whatever a
    # module does at import cannot end, block or write into the command's output
    # (the workers' stdout is stderr).
    try:
        what = " ".join(targets) or "the configured targets"
        items, skipped, notes = run.run.load(
            listed_plan, targets, given.config, verbose, what=printable(what)
        )
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    assert run.shown is not None
    for line in notes:
        run.shown.note(line)
    for line in skipped or ():
        run.shown.note(f"skipped {line}")
    baseline, run_seed = given.baseline, given.run_seed
    settings = [_job_settings(item, given.overrides, seed, baseline, run_seed) for item in items]
    unknown = module_kwargs(items, settings)
    if unknown:
        _fail(f"Invalid value for '--kwargs': {'; '.join(unknown)}", 2, None, verbose)
    narrowed = {
        item.target.name: s.get("kwargs")
        for item, s in zip(items, settings)
        if item.module is not None and "kwargs" in given.overrides
    }
    at_once = _jobs_at_once(p["jobs"], settings, run.run, seeds or 1)
    plan = [_job(item, s, verbose, at_once) for item, s in zip(items, settings)]
    manifest = None
    ranges = [(i, 0, seeds or 1) for i in range(len(plan))]  # (target, seeds)
    if p["shard"] is not None:  # (target, range of its seeds) tasks: --seeds splits
        defaults = getattr(given.config, "defaults", {})
        fixed = seed is not None or baseline is not None or "seed" in defaults
        ranges, manifest = _take_shard(
            p["shard"], p["durations_path"], plan, baseline, fixed, run_seed, seeds, verbose
        )
        run.shown.note(_shard_note(manifest, ranges))
    mine = [plan[i].spec for i, _, _ in ranges]
    items, plan = _with_seeds(items, plan, ranges)
    run.shown.total = len(plan)
    return _Planned(items, plan, ranges, manifest, mine, narrowed)


@dataclass
class _Reported:
    """What the report of a run left to the exit status: the comparison with the
    baseline, and the outputs that could not be written."""

    comparison: Any
    problems: list[Any]
    manifest: dict[str, Any] | None


def _report_run(
    ctx: click.Context,
    run: _Runner,
    given: _RunInputs,
    planned: _Planned,
    results: list[VerifyResult],
    stopped_by: int | None,
    started: float,
) -> _Reported:
    """The run's results compared with the baseline, written to the output files,
    annotated for GitHub, and printed (the table or the document)."""
    p = ctx.params
    output_format, seeds, manifest = p["output_format"], p["seeds"], planned.manifest
    if (seeds or 1) > 1:
        from gradcheck.frontend.deep import combine_seeds

        results = combine_seeds(results, [stop - first for _, first, stop in planned.ranges])
    baseline = _shard_baseline(given.baseline, manifest, planned.mine)
    comparison = _compare(results, baseline, p["regression_factor"], given.config)

    def replay(result: VerifyResult) -> str:
        return _replay_command(ctx, result.target, result.seed, planned.narrowed)

    outputs, run_seed = given.outputs, given.run_seed
    charts = _html_charts(run, results) if "HTML report" in outputs else {}
    run.release()  # the workers are done: they end while the report is written
    unwritten = _write_outputs(outputs, results, run_seed, comparison, replay, charts, manifest)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        _annotate(planned.items, results, comparison, to_stderr=output_format.document)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        unwritten += _step_summary(results, run_seed, comparison, replay)
    color = output_format.color and wants_color(p["color_choice"], sys.stdout)
    report = RunReport(
        results,
        run_seed,
        replay,
        comparison,
        color,
        signal.Signals(stopped_by).name if stopped_by else None,
        quiet=p["quiet"],
        shard=manifest,
        elapsed=time.monotonic() - started,
    )
    run.close_bars()
    text = output_format.run(report)
    assert run.shown is not None
    lost = _emit(f"\n{text}" if run.shown.wrote and not output_format.document else text, color)
    problems = [*unwritten, *([lost] if lost else [])]
    for problem in problems:
        click.echo(f"Error: {problem}", err=True)
    return _Reported(comparison, problems, manifest)


def _exit_status(
    ctx: click.Context, results: list[VerifyResult], stopped_by: int | None, reported: _Reported
) -> NoReturn:
    """The command's exit: the signal that stopped it, an output lost, a bug of
    gradcheck's, nothing checked, a failure; else 0."""
    from gradcheck.frontend.unfinished import is_gradcheck_bug

    if stopped_by is not None:
        ctx.exit(128 + stopped_by)  # the shell's convention: 130 for SIGINT, 143 for SIGTERM
    if reported.problems:
        ctx.exit(OutputError.exit_code)
    if any(is_gradcheck_bug(r) for r in results):
        ctx.exit(InternalError.exit_code)  # reported as the target's failure, traceback above
    if not results and reported.manifest is None:  # whatever selected nothing: never a pass
        # (a shard may be empty when there are more shards than targets: its merge is not)
        ctx.exit(NothingToCheck.exit_code)
    comparison = reported.comparison
    passed = all(r.passed for r in results) and (comparison is None or comparison.passed)
    ctx.exit(0 if passed else 1)
