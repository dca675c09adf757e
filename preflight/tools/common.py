"""Finding a tool on a node and reading a failed call: what every vendor's tools share.

A ``Tool`` is looked up on PATH first, then at the paths its vendor installs it to. Its ``lookup`` probe prints
where it is (exit 127 when it is nowhere); ``found`` reads that back, and a tool found nowhere is a state (the
standard ``tool_missing`` / ``tool_skip`` findings of ``preflight.findings``), never a crash.

>>> smi = Tool("nvidia-smi", ("/usr/bin/nvidia-smi",))
>>> smi.command("-L")  # doctest: +NORMALIZE_WHITESPACE
't=$(for t in "$(command -v nvidia-smi 2>/dev/null)" /usr/bin/nvidia-smi;
 do [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; exit 0; }; done; exit 127) || exit 127; "$t" -L'
>>> smi.found({"tool": ProbeOutput("/usr/bin/nvidia-smi\\n")}), smi.found({"tool": ProbeOutput("", "", 127)})
('/usr/bin/nvidia-smi', None)
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from preflight.batch import Probe, ProbeOutput


def find_tool_snippet(name: str, paths: Sequence[str]) -> str:
    """Shell that prints where ``name`` is (PATH first, then ``paths``), or exits 127 when it is nowhere.

    >>> find_tool_snippet("hccn_tool", ["/usr/local/Ascend/driver/tools/hccn_tool"])  # doctest: +NORMALIZE_WHITESPACE
    'for t in "$(command -v hccn_tool 2>/dev/null)" /usr/local/Ascend/driver/tools/hccn_tool;
     do [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; exit 0; }; done; exit 127'
    """
    return (f'for t in "$(command -v {shlex.quote(name)} 2>/dev/null)" ' + " ".join(shlex.quote(p) for p in paths)
            + '; do [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; exit 0; }; done; exit 127')


@dataclass(frozen=True)
class Tool:
    """A tool a check's probes need: where it is looked for after PATH, and what the standard finding for a host
    without it says (``without``: what cannot be done then; ``home``: where it belongs, e.g. ``in /usr/bin``;
    ``install``: the remedy)."""

    name: str
    paths: tuple[str, ...]
    without: str = ""
    home: str = ""
    install: str = ""

    @property
    def find(self) -> str:
        """Shell printing the tool's path, exit 127 when it is nowhere."""
        return find_tool_snippet(self.name, self.paths)

    @property
    def looked_at(self) -> str:
        """Where the lookup looks, for a finding: ``PATH, /usr/bin/nvidia-smi, ...``."""
        return ", ".join(("PATH", *self.paths))

    def lookup(self, key: str = "tool", timeout: float = 5) -> Probe:
        """The probe that declares the tool: it prints where the tool is (``found`` reads it back)."""
        return Probe(key, self.find, timeout=timeout)

    def command(self, *args: str) -> str:
        """Shell running the tool with ``args`` from PATH or its paths; exit 127 when it is nowhere."""
        return f't=$({self.find}) || exit 127; "$t" {shlex.join(args)}'.rstrip()

    def found(self, outputs: Mapping[str, ProbeOutput], key: str = "tool") -> str | None:
        """The path the ``lookup`` probe printed; None when the tool is nowhere (or the probe did not run)."""
        out = outputs.get(key)
        return out.stdout.strip().splitlines()[-1].strip() if out and out.ok and out.stdout.strip() else None


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of ``text`` (cut at ``limit``), or ``(no output)``."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:limit] if lines else "(no output)"


def error_text(output: ProbeOutput) -> str:
    """A short account of a failed tool call (its own first line when it printed one) and its exit status.

    >>> error_text(ProbeOutput("", "hccn_tool is busy, please try again.\\n", 5))
    'hccn_tool is busy, please try again. (exit status 5)'
    >>> error_text(ProbeOutput("", "", 0))
    'empty output (exit status 0)'
    """
    if output.timed_out:
        return "timed out (killed)"
    lines = [line.strip() for line in (output.stderr + "\n" + output.stdout).splitlines() if line.strip()]
    return f"{lines[0][:200] if lines else 'empty output'} (exit status {output.exit_status})"
