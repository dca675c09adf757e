"""The extra outputs of ``preflight run`` (and ``preflight report``): JUnit, Prometheus, Markdown, HTML,
and the comparison with a baseline run, kept out of cli.py.

>>> ReportOutputs(markdown=Path("summary.md")).targets()
[('markdown', PosixPath('summary.md'))]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from preflight.delivery import write_file
from preflight.model import RedactedReport, Report


@dataclass(frozen=True)
class ReportOutputs:
    junit: Path | None = None
    prometheus: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    baseline: Report | None = None  # loaded known-good run
    baseline_path: Path | None = None
    baseline_threshold: float = 0.05

    @classmethod
    def build(cls, junit: Path | None = None, prometheus: Path | None = None, markdown: Path | None = None,
              html: Path | None = None, baseline: Path | None = None, baseline_threshold: float = 0.05
              ) -> ReportOutputs:
        """Load the baseline now, so that a bad one is a usage error before anything runs (ReportFormatError)."""
        from preflight.render import json_report

        loaded = json_report.load(baseline.expanduser()) if baseline else None
        return cls(junit, prometheus, markdown, html, loaded, baseline, baseline_threshold)

    def targets(self) -> list[tuple[str, Path]]:
        return [(kind, path) for kind, path in (("junit", self.junit), ("prometheus", self.prometheus),
                                                ("markdown", self.markdown), ("html", self.html)) if path]

    def with_baseline(self, report: Report) -> Report:
        """The report with ``baseline.*`` findings appended when a baseline was given."""
        if self.baseline is None:
            return report
        from preflight.compare import baseline_findings

        extra = baseline_findings(self.baseline, report, self.baseline_threshold,
                                  source=f"the baseline ({self.baseline.started or self.baseline_path})")
        checks = [*report.checks, *[c for c in ("baseline",) if c not in report.checks]]
        return replace(report, findings=[*report.findings, *extra], checks=checks,
                       extra={**report.extra, "baseline": {"path": str(self.baseline_path),
                                                           "started": self.baseline.started,
                                                           "threshold": self.baseline_threshold}})

    def write(self, report: RedactedReport) -> list[Path]:
        """Write every requested output; the paths written. One that cannot be written is one line on stderr and
        is remembered for the exit code (``delivery.write_file``), never an exception."""
        done = [write_file(f"the {kind} report {path}", partial(write_one, kind, report, path))
                for kind, path in self.targets()]
        return [path for path in done if path]


def render(kind: str, report: RedactedReport) -> str:
    """One output format as text: junit, prometheus, markdown or html."""
    from preflight.render import html, junit, markdown, prometheus

    renderers = {"junit": junit.render, "prometheus": prometheus.render, "markdown": markdown.render,
                 "html": html.render}
    return renderers[kind](report)


def write_one(kind: str, report: RedactedReport, path: Path) -> Path:
    from preflight.render import json_report

    return json_report.write_text(path, render(kind, report))
