"""The pre-commit hooks, run by the real `pre-commit` tool on a temporary git repository.

The hook repository is this checkout (its files as they are now, committed
into a temporary copy), so the test exercises `.pre-commit-hooks.yaml` as a
user's `.pre-commit-config.yaml` would reach it. pre-commit installs the
hooks' Python environment with pip; the test points pip at a local
wheelhouse (no index), so it runs offline. `.ci/run` builds that wheelhouse
(`pip wheel -w .wheelhouse . hatchling`); without one, the test is skipped
and says how to make it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path(os.environ.get("EVALDSL_WHEELHOUSE", ROOT / ".wheelhouse"))
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

pytestmark = pytest.mark.skipif(
    not (WHEELHOUSE.is_dir() and any(WHEELHOUSE.glob("hatchling-*.whl")) and PRE_COMMIT.exists()),
    reason="needs pre-commit and a wheelhouse: pip wheel -w .wheelhouse . hatchling (as .ci/run does)",
)

MESSY = 'case "adds"\n    prompt   "what is 2 + 2?"\n  expect final number is 4\n'
BROKEN = 'case "typo"\n  prompt "x"\n  expect caled search\n'
GOOD = 'case "greets"\n  prompt "hello"\n  expect no tool calls\n'
UNCOMPILED = 'use "missing.evl"\n\ncase "c"\n  prompt "p"\n  expect no error\n'  # parses (fmt is happy), no compile
WARNED = 'case "braces"\n  prompt "{{ not a column }}"\n  expect no error\n'  # a warning only (W304)


def verdicts(stdout: str) -> dict[str, str]:
    """Each hook's line of `pre-commit run`: `evaldsl fmt.....Failed` -> {"evaldsl fmt": "Failed"}."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("evaldsl ") and "." in line:
            out[line.split(".")[0]] = line.rsplit(".", 1)[-1].strip()
    return out


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def hook_repository(tmp: Path) -> tuple[Path, str]:
    """This checkout's files (tracked and new, as they are now) committed in a fresh repository."""
    repo = tmp / "hooks"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for name in files:
        source = ROOT / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hooks")
    return repo, git(repo, "rev-parse", "HEAD")


def run_hooks(project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
    return subprocess.run([str(PRE_COMMIT), "run", "--all-files", "--color", "never"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)


def test_hooks_format_suites_and_fail_on_errors(tmp_path: Path) -> None:
    repo, rev = hook_repository(tmp_path)
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    (project / "suites" / "messy.evl").write_text(MESSY)
    (project / "suites" / "broken.evl").write_text(BROKEN)
    (project / "suites" / "good.evl").write_text(GOOD)
    (project / "suites" / "uncompiled.evl").write_text(UNCOMPILED)
    (project / "suites" / "warned.evl").write_text(WARNED)
    (project / "notes.txt").write_text("not a suite: caled\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: evaldsl-fmt\n  - id: evaldsl-check\n")
    git(project, "init", "-q")
    git(project, "add", "-A")

    first = run_hooks(project, tmp_path / "home")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "evaldsl fmt" in first.stdout and "files were modified by this hook" in first.stdout
    assert "error[E101]: unknown predicate `caled`" in first.stdout
    assert "broken.evl:3:10" in first.stdout
    assert verdicts(first.stdout) == {"evaldsl fmt": "Failed", "evaldsl check": "Failed"}
    assert "error[E207]: cannot find missing.evl" in first.stdout  # check's own: fmt does not compile
    assert "uncompiled.evl:1:1" in first.stdout
    assert (project / "suites" / "messy.evl").read_text() == 'case "adds"\n  prompt "what is 2 + 2?"\n' \
        '  expect final number is 4\n'
    assert (project / "suites" / "broken.evl").read_text() == BROKEN  # fmt does not touch what does not parse
    assert (project / "suites" / "good.evl").read_text() == GOOD

    (project / "suites" / "broken.evl").write_text(BROKEN.replace("caled", "called"))
    third = run_hooks(project, tmp_path / "home")
    assert third.returncode == 1, third.stdout + third.stderr
    assert verdicts(third.stdout) == {"evaldsl fmt": "Passed", "evaldsl check": "Failed"}  # check alone fails

    (project / "suites" / "lib.evl").write_text("tool t\n")
    (project / "suites" / "uncompiled.evl").write_text(UNCOMPILED.replace("missing.evl", "lib.evl"))
    second = run_hooks(project, tmp_path / "home")
    assert second.returncode == 0, second.stdout + second.stderr  # warned.evl's warning does not fail it
    assert verdicts(second.stdout) == {"evaldsl fmt": "Passed", "evaldsl check": "Passed"}
