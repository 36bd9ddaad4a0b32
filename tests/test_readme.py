"""The README opens with the two set-up commands, and .ci/run runs the test one."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _first_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines() if line.strip()]


def test_readme_opens_with_the_serve_and_test_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert text.index("```sh") < text.index("\n## "), "the set-up block comes before any section"
    assert _first_commands() == ["python3 dev.py serve", "python3 dev.py test"]


def test_ci_runs_the_readme_test_command() -> None:
    _serve, test = _first_commands()
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert test in ci_lines


def test_readme_credits_the_designer() -> None:
    text = (ROOT / "README.md").read_text()
    assert "Mark S. Ball" in text
    assert "free to play" in text
