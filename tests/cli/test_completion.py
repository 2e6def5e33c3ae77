"""``ioukit completion bash|zsh`` (#29 item 5): the script completes subcommands, options and
option choices (the registry's protocol names) in a real bash, from the real entry point."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from ioukit.cli import main
from ioukit.evaluation.registry import protocol_names

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture(scope="module")
def script() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", "completion", "bash"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _complete(script: str, words: list[str]) -> list[str]:
    quoted = " ".join(f"'{w}'" for w in words)
    program = f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _ioukit\n"
    program += 'printf "%s\\n" "${COMPREPLY[@]}"\n'
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_subcommands(script: str) -> None:
    assert _complete(script, ["ioukit", "e"]) == ["eval"]
    assert {"iou", "eval", "convert", "check", "completion"} <= set(
        _complete(script, ["ioukit", ""])
    )


def test_options_of_a_subcommand(script: str) -> None:
    got = _complete(script, ["ioukit", "eval", "--iou-t"])
    assert sorted(got) == ["--iou-thresholds", "--iou-type"]
    assert _complete(script, ["ioukit", "check", "--form"]) == ["--format"]


def test_choices_come_from_the_registry(script: str) -> None:
    assert _complete(script, ["ioukit", "eval", "--protocol", ""]) == list(protocol_names())
    assert _complete(script, ["ioukit", "eval", "--protocol", "open"]) == [
        "openimages",
        "openimages_challenge",
    ]


def test_zsh_loads_bashcompinit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "zsh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("autoload -U +X bashcompinit && bashcompinit\n")


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["completion", "tcsh"])
    assert info.value.code == 2
    assert "argument shell: invalid choice: 'tcsh'" in capsys.readouterr().err
