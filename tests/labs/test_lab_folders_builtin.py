"""The built-in labs ev05 and q05 as lab folders: each is played twice on a fresh embedded
emulator (`awsview lab check --twice`, which starts its own) and every step's verify scripts and
checkpoints hold in both runs; ev05 also speaks Japanese."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from awsview.labspec.folder import load_folder
from tests.support import processes
from tests.support.emulator import RunningEmulator

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process

BUILTIN = Path(__file__).parents[2] / "labs"


@pytest.mark.parametrize("lab", ["ev05", "q05"])
def test_lab_check_of_a_built_in_lab_folder_passes_twice(lab: str):
    done = processes.awsview("lab", "check", str(BUILTIN / lab), "--twice", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{lab} run 2" in done.stdout
    assert f"lab check {lab}: " in done.stdout and " passed, 4 steps × 2 runs" in done.stdout


def awsview(*args: str, lang: str = "C.UTF-8") -> subprocess.CompletedProcess:
    return processes.awsview(*args, timeout=120, env={"LANG": lang})


def test_a_lab_speaks_its_other_language_from_lang_or_lang_flag(
    tmp_path: Path, emulator: RunningEmulator
):
    where = ("--endpoint-url", emulator.endpoint_url, "--lab", "ev05")
    english = awsview("verify", "2", *where)
    assert english.returncode == 1, english.stdout + english.stderr
    assert "✗ state machine labex-ev05-orders with Retry and Catch" in english.stdout
    japanese = "✗ Retry と Catch を持つステートマシン labex-ev05-orders、実行はまだない"
    from_env = awsview("verify", "2", *where, lang="ja_JP.UTF-8")
    assert japanese in from_env.stdout, from_env.stdout + from_env.stderr
    assert japanese in awsview("verify", "2", *where, "--lang", "ja").stdout
    assert "✗ state machine" in awsview("verify", "2", *where, "--lang", "en", lang="ja_JP").stdout
    missing = awsview("verify", "2", *where, "--lang", "de")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"awsview: {BUILTIN / 'ev05'}: no 'de' texts; the lab's languages: en, ja"
    ]
    # The step titles, as lab check and the checkpoints panel name the steps.
    folder, _ = load_folder(BUILTIN / "ev05", "ja")
    assert folder.steps[0].title == "安定したキーで業務上の書き込みを保護する"
    assert load_folder(BUILTIN / "ev05", "en")[0].steps[0].title.startswith("Protect the")
    # A translated step text the folder does not hold is refused whatever the language.
    copy = tmp_path / "ev05"
    shutil.copytree(BUILTIN / "ev05", copy)
    (copy / "ja" / "step3.md").unlink()
    broken = awsview("verify", "1", "--endpoint-url", emulator.endpoint_url, "--lab", str(copy))
    assert broken.returncode == 2
    where = re.escape(str(copy / "index.json"))
    said = broken.stderr.strip()
    assert re.fullmatch(rf"awsview: {where}:\d+: ja/step3.md is not in the lab folder", said)


def test_lab_clean_by_name_plays_only_the_cleanup_step(tmp_path: Path, emulator: RunningEmulator):
    """`awsview lab clean NAME` finds the built-in folder and runs its step keyed cleanup (not
    setup.sh); a folder without such a step is refused in one line."""
    where = ("--endpoint-url", emulator.endpoint_url)

    def lab(*args: str) -> subprocess.CompletedProcess:
        return processes.awsview("lab", *args, *where, timeout=600)

    played = lab("play", "q05", "--until", "deploy")  # its log group is there to delete
    assert played.returncode == 0, played.stdout + played.stderr
    done = lab("clean", "q05")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "q05 step 4/4 cleanup" in done.stdout and "q05 setup" not in done.stdout
    queues = emulator.client("sqs").list_queues().get("QueueUrls", [])
    assert not [url for url in queues if url.endswith("/labex-q05-jobs")]
    lam = emulator.client("lambda")
    assert (
        lam.list_event_source_mappings(FunctionName="labex-q05-worker")["EventSourceMappings"] == []
    )
    lam.get_function_configuration(FunctionName="labex-q05-worker")  # provided: it stays

    lonely = tmp_path / "lonely"
    shutil.copytree(BUILTIN / "ev05", lonely)
    toml = (lonely / "awsview.toml").read_text(encoding="utf-8")
    (lonely / "awsview.toml").write_text(toml.replace('key = "cleanup"', 'key = "tidy"'))
    refused = lab("clean", str(lonely))
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"awsview: lab lonely has no step keyed cleanup in its awsview.toml "
        f"(awsview lab play {lonely} plays it to the end)"
    ]
