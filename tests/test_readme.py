"""The README's set-up commands and .ci/run must not drift apart."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_setup_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Set-up", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.strip().splitlines() if line.strip()]


def test_ci_runs_the_readme_install_and_test_commands() -> None:
    install, _run, test = _readme_setup_lines()
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert install in ci_lines
    assert test in ci_lines
    assert ci_lines.index(install) < ci_lines.index(test)


def test_readme_credits_the_designer() -> None:
    text = (ROOT / "README.md").read_text()
    assert "Mark S. Ball" in text
    assert "free to play" in text
