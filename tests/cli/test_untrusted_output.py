"""Every output path with the injection corpus (tests/corpus/strings.json): what a terminal, a
Markdown page or an SVG gets never carries a terminal control (ESC, C1, BEL …), a bidi override
or isolate, raw HTML or a link or image made of untrusted text.

The corpus goes where it can come from: item values and log lines in the embedded emulator, a
recording's header (learner, endpoint, region, status, account, lab title) and frames (the
checkpoints' words), a recording's file name, a class roster's learner names, an AWS error
message (a proxy in front of the emulator answers STS with one), and the command line. Each
output path runs as the user runs it (CLI subprocesses; the class view with Pilot).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import subprocess
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from awsview.aws.session import Target
from awsview.core.checkpoints import CheckResult
from awsview.model.state import LabState
from tests.support import processes
from tests.support.emulator import RunningEmulator
from tests.support.proxy import Intercepting, proxy

pytestmark = pytest.mark.timeout(300)

CORPUS = Path(__file__).parents[1] / "corpus"
STRINGS: dict[str, str] = json.loads((CORPUS / "strings.json").read_text())["strings"]
# What a header field, a name or an error carries: the escapes that act on a terminal, the
# characters that reorder text, and what a Markdown page or a console would interpret.
HOSTILE_NAMES = (
    "title",
    "osc 0 st",
    "osc 8 hyperlink",
    "osc 52 clipboard",
    "sgr",
    "clear screen",
    "csi cursor up",
    "c1 csi",
    "c1 osc",
    "bell",
    "rtl override",
    "bidi isolates",
    "bidi embeddings",
    "script",
    "img onerror",
    "markdown link",
    "markdown image",
    "markdown autolink",
    "bold pair",
    "foo close",
)
HOSTILE = " ".join(STRINGS[name] for name in HOSTILE_NAMES)
# A file name holds no `/` and at most 255 bytes.
FILE_NAME = "".join(
    STRINGS[name] for name in ("title", "c1 csi", "bell", "rtl override", "script", "markdown link")
).replace("/", "∕")
# Every corpus string a worker can print and DynamoDB can store (no lone surrogate, not huge).
VALUES = {
    name: text
    for name, text in STRINGS.items()
    if len(text) <= 200 and not re.search(r"[\ud800-\udfff]", text)
}

# Tab and newline are text; every other C0, DEL, C1, and the bidi controls are not.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
TABLE = "labex-q05-orders"
WORKER = "labex-q05-worker"


def assert_safe(where: str, text: str) -> None:
    bad = UNSAFE.search(text)
    assert bad is None, (
        f"{where}: {bad.group()!r} in …{text[max(bad.start() - 80, 0) : bad.start() + 40]!r}…"
    )


def assert_inert_markdown(where: str, text: str) -> None:
    assert_safe(where, text)
    lowered = text.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<http" not in lowered, where
    # A link or image whose target came from the corpus (ours are file names, never a scheme).
    assert re.search(r"(?<!\\)\]\((?:javascript:|http://evil)", text) is None, where


def assert_inert_svg(where: str, text: str) -> None:
    assert_safe(where, text)
    ElementTree.fromstring(text)  # well-formed: nothing broke out of an attribute or a text
    assert "<script" not in text.lower(), where


def awsview(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command as a user runs it; its output read strictly as UTF-8 (a byte that is not
    fails the test)."""
    return processes.awsview(*args, env=env, timeout=240, encoding="utf-8", errors="strict")


def assert_output_safe(where: str, done: subprocess.CompletedProcess) -> None:
    assert_safe(f"{where} stdout", done.stdout)
    assert_safe(f"{where} stderr", done.stderr)


# -- the lab, the recording -----------------------------------------------------------------


def worker_source(lines: list[str]) -> str:
    return (
        "import json\n"
        f"LINES = json.loads({json.dumps(json.dumps(lines))})\n"
        "def handler(event, context):\n"
        "    for line in LINES:\n"
        "        print(line)\n"
        "    return {}\n"
    )


@pytest.fixture(scope="module")
def seeded(emulator: RunningEmulator) -> RunningEmulator:
    """q05's orders table holding one corpus string per item, its worker printing the corpus."""
    from tests.support.helpers import create_function, create_table, log_messages, wait_for

    ddb, lam = emulator.client("dynamodb"), emulator.client("lambda")
    create_table(ddb, TABLE)
    for n, (_, text) in enumerate(sorted(VALUES.items())):
        ddb.put_item(TableName=TABLE, Item={"id": {"S": f"case-{n:03d}"}, "value": {"S": text}})
    ddb.put_item(TableName=TABLE, Item={"id": {"S": "header"}, "value": {"S": HOSTILE}})
    create_function(lam, WORKER, worker_source([HOSTILE, *VALUES.values()]))
    lam.invoke(FunctionName=WORKER, Payload=b"{}")
    logs = emulator.client("logs")
    wait_for(lambda: log_messages(logs, f"/aws/lambda/{WORKER}"))
    return emulator


def _hostile_checkpoints(snapshot):
    """The checkpoints with the corpus as their words and the first one done: a change."""
    results = tuple(
        dataclasses.replace(
            r, checkpoint=dataclasses.replace(r.checkpoint, text=HOSTILE), detail=HOSTILE
        )
        for r in snapshot.data
    )
    changed = (CheckResult(results[0].checkpoint, True, HOSTILE), *results[1:])
    return dataclasses.replace(snapshot, data=results), dataclasses.replace(snapshot, data=changed)


@pytest.fixture(scope="module")
def recording(seeded: RunningEmulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the viewer read from the seeded emulator, recorded under a hostile header, in a file
    whose name is hostile too."""
    from awsview.cli.dump import collect
    from awsview.recording.follow import Recorder, open_recording, target_info

    with pytest.MonkeyPatch.context() as patch:  # the emulator's credentials, as a user has
        for name, value in seeded.env.items():
            patch.setenv(name, value)
        target = Target(endpoint_url=seeded.endpoint_url)
        profile, model, _, _ = asyncio.run(collect(target, "q05"))
    folder = tmp_path_factory.mktemp("recording")
    path = folder / f"{FILE_NAME}.rec"
    clock = [1_800_000_000.0]
    writer = open_recording(path, "test")
    info = {**target_info(Target(endpoint_url=HOSTILE)), "region": HOSTILE, "account": HOSTILE}
    recorder = Recorder(writer.channel(HOSTILE, info, clock[0]), clock=lambda: clock[0])
    live = LabState()
    recorder.attach(dataclasses.replace(profile, title=HOSTILE), live)
    recorder.status("error", HOSTILE)
    recorder.meta(account=HOSTILE, region=HOSTILE)
    before, after = _hostile_checkpoints(model.get("checkpoints"))
    others = [s for key, s in model.snapshots.items() if key != "checkpoints"]
    for batch in (others, [before], [after]):
        clock[0] += 2.0
        live.apply(batch)
    clock[0] += 2.0
    recorder.close()
    writer.close()
    return path


# -- the commands -----------------------------------------------------------------------------


def test_dump_of_the_emulator(seeded: RunningEmulator):
    for extra in ((), ("--json",)):
        done = awsview(
            "dump", "--lab", "q05", "--endpoint-url", seeded.endpoint_url, *extra, env=seeded.env
        )
        assert done.returncode == 0, done.stderr
        assert_output_safe(f"dump {' '.join(extra)}", done)
        assert "[bold]x[/bold]" in done.stdout or "[bold]x[/bold]" in json.loads(done.stdout)


def test_dump_from_a_recording(recording: Path):
    done = awsview("dump", "--from", str(recording))
    assert done.returncode == 0, done.stderr
    assert_output_safe("dump --from", done)
    header = done.stdout.splitlines()[0]
    assert "evil.exe" in header and "<script>alert(1)</script>" in header  # shown, inert
    done = awsview("dump", "--from", str(recording), "--json")
    assert done.returncode == 0, done.stderr
    assert_output_safe("dump --from --json", done)
    assert json.loads(done.stdout)["recording"]["info"]["name"] == HOSTILE  # escaped, kept


def test_docs_from_a_recording(recording: Path, tmp_path: Path):
    done = awsview("docs", "--from", str(recording), "-o", str(tmp_path / "pages"))
    assert done.returncode == 0, done.stderr
    assert_output_safe("docs --from", done)
    index = (tmp_path / "pages" / "index.md").read_text(encoding="utf-8")
    assert_inert_markdown("docs --from index.md", index)
    assert "&lt;script&gt;" in index and "\\[x\\](javascript:" in index
    svgs = sorted((tmp_path / "pages").glob("*.svg"))
    assert len(svgs) >= 2  # before the change, and the change
    for svg in svgs:
        assert_inert_svg(svg.name, svg.read_text(encoding="utf-8"))


def test_docs_index_of_a_lab_with_hostile_words(tmp_path: Path):
    from awsview.capture.docs import index_markdown
    from awsview.capture.docshots import Page
    from awsview.labspec.folder import builtin_dir, load_folder

    folder, _ = load_folder(builtin_dir() / "q05")
    lab = dataclasses.replace(folder, name=HOSTILE, title=HOSTILE)
    pages = [Page(1, HOSTILE, HOSTILE, tmp_path / f"awsview-{FILE_NAME}.svg")]
    text = index_markdown(lab, pages, pages, Page(2, "replay", HOSTILE, tmp_path / "replay.svg"))
    assert_inert_markdown("docs index.md", text)
    image = [line for line in text.splitlines() if line.startswith("![")][0]
    assert re.fullmatch(r"!\[[^\n]*\]\(assets/[A-Za-z0-9%._~-]+\)", image), image


def test_docs_step_text_links_of_a_lab_with_hostile_titles(tmp_path: Path):
    from awsview.capture.steptexts import StepText, block, placed

    text = StepText(1, "ja", HOSTILE, tmp_path / "ja" / "step1.md")
    new = block(text, [(HOSTILE, tmp_path / "assets" / f"awsview-{FILE_NAME}.svg")])
    assert_inert_markdown("docs step text", new)
    image = new.splitlines()[1]
    assert re.fullmatch(r"!\[[^\n]*\]\(\.\./assets/[A-Za-z0-9%._~-]+\)", image), image
    body = placed("# Step\n", 1, new)
    assert body.count("<!-- awsview:shot step=1 -->") == 1 and body.count("-->") == 2, body


def test_refusals_that_quote_a_file_a_field_or_aws(recording: Path, tmp_path: Path):
    missing = tmp_path / f"{FILE_NAME}-gone.rec"
    runs = {
        "dump --from a missing file": ("dump", "--from", str(missing)),
        "docs --from a missing file": ("docs", "--from", str(missing), "-o", str(tmp_path / "o")),
        "replay of a missing file": ("replay", str(missing)),
        "an unknown learner": ("dump", "--from", str(recording), "--learner", f"not {HOSTILE}"),
        "a moment that is not one": ("dump", "--from", str(recording), "--at", HOSTILE),
        "an unknown lab": ("docs", HOSTILE, "-o", str(tmp_path / "o")),
        "an unknown command": (HOSTILE,),
    }
    for where, args in runs.items():
        done = awsview(*args)
        assert done.returncode != 0, where
        assert_output_safe(where, done)
        assert done.stderr.count("\n") == 1, f"{where}: {done.stderr!r}"


class _HostileSts(Intercepting):
    """Forwards everything to the emulator but STS, which refuses with the corpus as its message
    (in XML, as STS answers: what XML 1.0 can carry, C1 controls and bidi included)."""

    def intercept(self, body: bytes) -> tuple[int, str, bytes] | None:
        if b"Action=GetCallerIdentity" not in body:
            return None
        message = escape("".join(c for c in HOSTILE if c >= " " or c == "\t"))
        answer = (
            "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
            f"<Message>{message}</Message></Error><RequestId>1</RequestId></ErrorResponse>"
        )
        return 403, "text/xml", answer.encode()


@pytest.fixture(scope="module")
def hostile_sts(emulator: RunningEmulator) -> Iterator[str]:
    with proxy(_HostileSts, emulator.port) as url:
        yield url


def test_an_aws_error_message_in_a_refusal_and_the_log_file(
    seeded: RunningEmulator, hostile_sts: str, tmp_path: Path
):
    for command in ("dump", "doctor"):
        log = tmp_path / f"{command}.log"
        done = awsview(
            command,
            *("--lab", "q05", "--endpoint-url", hostile_sts, "--log-file", str(log)),
            env=seeded.env,
        )
        assert done.returncode != 0, done.stdout
        assert_output_safe(command, done)
        assert "evil.exe" in done.stderr and done.stderr.count("\n") == 1, done.stderr
        logged = log.read_text(encoding="utf-8")
        assert "GetCallerIdentity" in logged and "evil.exe" in logged, logged
        assert_safe(f"{command} --log-file", logged)


def test_doctor_of_the_emulator(seeded: RunningEmulator):
    from awsview.doctor.diagnosis import Diagnosis, PanelVerdict, Probe

    for extra in ((), ("--json",)):
        done = awsview(
            "doctor", "--lab", "q05", "--endpoint-url", seeded.endpoint_url, *extra, env=seeded.env
        )
        assert done.returncode == 0, done.stderr
        assert_output_safe(f"doctor {' '.join(extra)}", done)
    # What the help screen shows of it, with the endpoint's words everywhere they can be.
    diagnosis = Diagnosis(
        HOSTILE,
        HOSTILE,
        HOSTILE,
        HOSTILE,
        (Probe(HOSTILE, "error", HOSTILE, HOSTILE),),
        (PanelVerdict(HOSTILE, "missing", HOSTILE, HOSTILE),),
    )
    assert_inert_markdown("doctor help section", diagnosis.markdown())


async def test_class_view_with_hostile_learner_names(seeded: RunningEmulator):
    from awsview.classroom.monitor import Learner
    from awsview.ui.classview.learner import LearnerScreen
    from awsview.ui.classview.view import ClassApp
    from tests.support.probe import screen_lines, settle

    app = ClassApp(
        (
            Learner(HOSTILE, seeded.endpoint_url, "q05"),
            Learner(f"dead {HOSTILE}", "http://127.0.0.1:9", "q05"),
        )
    )
    async with app.run_test(size=(160, 40)) as pilot:
        cards = app.grid.cards
        deadline = asyncio.get_running_loop().time() + 60
        while not all(
            c.status is not None and (c.status.checkpoints or c.status.error)
            for c in cards.values()
        ):
            assert asyncio.get_running_loop().time() < deadline, "the class view never read"
            await pilot.pause(0.1)
        await settle(pilot)
        for line in screen_lines(app):
            assert_safe("class view", line)
        assert any("after link" in line for line in screen_lines(app))  # the name, cleaned
        for card in cards.values():
            assert_safe("class card", card.text)
            assert_safe("class card title", str(card.border_title))
        await pilot.press("enter")  # the learner's own screen: its status line names them
        await settle(pilot)
        assert isinstance(app.screen, LearnerScreen)
        for line in screen_lines(app):
            assert_safe("learner screen", line)
