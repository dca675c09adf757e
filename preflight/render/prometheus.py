"""Prometheus text exposition for node_exporter's textfile collector.

``preflight_check_status{check,host}``: 0 pass, 1 warn, 2 error (could not tell), 3 fail, -1 skip (not
applicable: alerts on ``> 0`` ignore it), the worst finding of that check on that host (host="" for
cluster-wide findings), ranked as the run's verdict ranks them: a fail outranks an error;
``preflight_allreduce_busbw_gbps`` / ``preflight_allreduce_algbw_gbps`` per measured device pair; the run's
verdict (``preflight_verdict``: those numbers, 4 suspect, 5 held) and its exit code, finding counts, host reachability,
duration and start time.

Per host with a finding (the hosts ``preflight history`` counts a run for): ``preflight_host_verdict`` (the host's
own verdict, :func:`preflight.model.decide` over its findings: 3 fail, 5 held by ``--drain-after``),
``preflight_host_run_timestamp_seconds`` (the start of the run that judged it) and, only while the host has a
``fail``, ``preflight_host_failed_timestamp_seconds`` (the same start): each run gives them a new value, so
Prometheus' ``changes()`` counts runs and failed runs, not scrapes (the rules in examples/prometheus/,
docs/history.md).

>>> from preflight.model import Finding, HostResult, Report, Status
>>> r = Report([HostResult("n1", "n1", True)], [Finding("os.shm", "n1", Status.WARN, "small")], ["os"], "", 1.0)
>>> 'preflight_check_status{check="os.shm",host="n1"} 1' in render(r.redacted())
True
"""

from __future__ import annotations

from datetime import datetime

from preflight.model import RedactedReport, Status, Verdict, decide

VALUE = {Status.SKIP: -1, Status.PASS: 0, Status.WARN: 1, Status.ERROR: 2, Status.FAIL: 3}
VERDICT_VALUE = {**{Verdict(s.value): v for s, v in VALUE.items()}, Verdict.SUSPECT: 4, Verdict.HELD: 5}


def _label(value: object) -> str:
    """Escape a label value: backslash, double quote and line feed."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _metric(lines: list[str], name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} gauge")
    lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)


def _number(value: float) -> str:
    """Integers as integers, other floats with full precision (a Unix time must not lose its seconds)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def render(report: RedactedReport) -> str:
    """The exposition text (ends with a newline, as the textfile collector wants)."""
    worst: dict[tuple[str, str], Status] = {}
    for f in report.findings:
        key = (f.check, f.host or "")
        worst[key] = Status.worst([f.status, worst.get(key, f.status)])
    lines: list[str] = []
    _metric(lines, "preflight_check_status",
            "Worst result of a check on a host: 0 pass, 1 warn, 2 error (could not tell), 3 fail, -1 skip.",
            [(_labels(check=c, host=h), VALUE[s]) for (c, h), s in sorted(worst.items())])
    busbw: dict[str, float] = {}
    algbw: dict[str, float] = {}
    for f in report.findings:
        if not f.check.startswith("allreduce.") or f.host is None or f.peer is None:
            continue
        labels = _labels(host=f.host, device=f.device if f.device is not None else 0, peer=f.peer,
                         peer_device=f.peer_device if f.peer_device is not None else 0)
        if f.busbw_gbps is not None:
            busbw[labels] = min(busbw.get(labels, f.busbw_gbps), f.busbw_gbps)
        if f.algbw_gbps is not None:
            algbw[labels] = min(algbw.get(labels, f.algbw_gbps), f.algbw_gbps)
    if busbw:
        _metric(lines, "preflight_allreduce_busbw_gbps", "all_reduce bus bandwidth of a device pair in GB/s "
                "(1e9 bytes, as nccl-tests).", sorted(busbw.items()))
    if algbw:
        _metric(lines, "preflight_allreduce_algbw_gbps", "all_reduce algorithm bandwidth of a device pair in GB/s.",
                sorted(algbw.items()))
    _metric(lines, "preflight_host_reachable", "1 when preflight reached the host over SSH.",
            [(_labels(host=h.name), 1 if h.reachable else 0) for h in report.hosts])
    _metric(lines, "preflight_findings", "Findings of the run by status.",
            [(_labels(status=k), v) for k, v in report.summary().items()])
    started = _started(report)
    _host_metrics(lines, report, started)
    verdict = report.verdict()
    _metric(lines, "preflight_verdict", "The run's verdict: 0 pass, 1 warn, 2 error (could not tell), 3 fail, "
            "4 suspect (--max-unhealthy passed), 5 held (--drain-after holds every fail back), -1 skip.",
            [("", VERDICT_VALUE[verdict])])
    _metric(lines, "preflight_exit_code", "The run's exit code (docs/exit-codes.md): 0 ok, 1 fail, 3 suspect, "
            "4 could not tell, 6 held.", [("", verdict.exit_code)])
    _metric(lines, "preflight_complete", "1 when the run was not interrupted.", [("", 1 if report.complete else 0)])
    _metric(lines, "preflight_duration_seconds", "Wall time of the run.", [("", report.duration_s)])
    if started is not None:
        _metric(lines, "preflight_started_timestamp_seconds", "Start of the run (Unix time).", [("", started)])
    return "\n".join(lines) + "\n"


def _started(report: RedactedReport) -> float | None:
    try:
        return datetime.fromisoformat(report.started).timestamp()
    except ValueError:
        return None


def _host_metrics(lines: list[str], report: RedactedReport, started: float | None) -> None:
    """Each host's verdict, and the run's start as its run (and failed run) timestamp.

    >>> from preflight.model import Finding, Report
    >>> fs = [Finding("os.shm", "n1", Status.FAIL, "m"), Finding("os.shm", "n2", Status.PASS, "m"),
    ...       Finding("net.ports", None, Status.FAIL, "m"), Finding("os.shm", "n3", Status.FAIL, "m")]
    >>> r = Report([], fs, [], "2026-11-27T08:00:00+00:00", 1.0, extra={"drain": {"held": ["n3"]}}).redacted()
    >>> lines: list[str] = []
    >>> _host_metrics(lines, r, 1.8e9)
    >>> [line for line in lines if not line.startswith("#")]  # doctest: +NORMALIZE_WHITESPACE
    ['preflight_host_verdict{host="n1"} 3', 'preflight_host_verdict{host="n2"} 0',
     'preflight_host_verdict{host="n3"} 5',
     'preflight_host_run_timestamp_seconds{host="n1"} 1800000000',
     'preflight_host_run_timestamp_seconds{host="n2"} 1800000000',
     'preflight_host_run_timestamp_seconds{host="n3"} 1800000000',
     'preflight_host_failed_timestamp_seconds{host="n1"} 1800000000',
     'preflight_host_failed_timestamp_seconds{host="n3"} 1800000000']
    """
    held = frozenset(report.extra.get("drain", {}).get("held", ()))
    hosts = sorted({f.host for f in report.findings if f.host is not None})
    mine = {h: [f for f in report.findings if f.host == h] for h in hosts}
    _metric(lines, "preflight_host_verdict", "A host's own verdict: 0 pass, 1 warn, 2 error (could not tell), "
            "3 fail, 5 held (--drain-after holds its fails back), -1 skip.",
            [(_labels(host=h), VERDICT_VALUE[decide(mine[h], held=held)]) for h in hosts])
    if started is None:
        return
    _metric(lines, "preflight_host_run_timestamp_seconds", "Start of the run that judged the host (Unix time): "
            "a new value per run.", [(_labels(host=h), started) for h in hosts])
    failed = [h for h in hosts if any(f.status == Status.FAIL for f in mine[h])]
    if failed:
        _metric(lines, "preflight_host_failed_timestamp_seconds", "Start of the run, written only for a host with "
                "a fail in it (held ones too): a new value per failed run.",
                [(_labels(host=h), started) for h in failed])
