"""Where `awsview docs DIR` puts its image links in a step text: after the step's commands,
between markers, replaced whole on the next run; the author's text around them kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from awsview.capture.steptexts import (
    BadFolder,
    StepText,
    block,
    inside,
    placed,
    read_text,
)

TEXT = """# Deploy

Run this:

```bash
aws sqs create-queue --queue-name jobs
```

The output looks like:

```json
{"QueueUrl": "…"}
```

```bash norun
aws sqs delete-queue --queue-url "$URL"
```

Then look at the queue panel.
"""


def _block(folder: Path, lang: str = "en", number: int = 2) -> tuple[StepText, str]:
    where = folder / ("step2.md" if lang == "en" else f"{lang}/step2.md")
    text = StepText(number, lang, "Deploy [it] <b>now</b>", where)
    return text, block(text, [(f"AWS View after step 2: {text.title}", folder / "assets/a b.svg")])


def test_the_block_goes_after_the_last_bash_block_and_is_replaced_whole(tmp_path):
    text, new = _block(tmp_path)
    once = placed(TEXT, 2, new)
    assert once.index(new) > once.index("```bash norun")  # after the last bash block
    assert once.index(new) < once.index("Then look at the queue panel.")
    assert new == (
        "<!-- awsview:shot step=2 -->\n"
        r"![AWS View after step 2: Deploy \[it\] &lt;b&gt;now&lt;/b&gt;](assets/a%20b.svg)"
        "\n<!-- /awsview:shot -->"
    )
    assert placed(once, 2, new) == once  # a second run: the same bytes
    edited = "Intro by the author.\n" + once.replace("Then look", "Then, calmly, look")
    assert placed(edited, 2, new) == edited  # the author's edits around the block stay
    other = new.replace("a%20b.svg", "c.svg")
    assert placed(edited, 2, other) == edited.replace(new, other)


def test_a_text_without_commands_gets_the_block_at_its_end(tmp_path):
    _, new = _block(tmp_path)
    assert placed("# Read\n\nNothing to run.\n", 2, new) == f"# Read\n\nNothing to run.\n\n{new}\n"
    unclosed = "# Read\n\n```bash\naws s3 ls\n"  # a fence never closed runs nothing
    assert placed(unclosed, 2, new).endswith(f"aws s3 ls\n\n{new}\n")


def test_links_from_a_translation_are_relative_to_its_own_folder(tmp_path):
    text, new = _block(tmp_path, "ja")
    assert "](../assets/a%20b.svg)" in new


def test_a_block_with_no_end_marker_is_refused(tmp_path):
    (tmp_path / "step2.md").write_text("# Deploy\n\n<!-- awsview:shot step=2 -->\n![x](y.svg)\n")
    text, _ = _block(tmp_path)
    with pytest.raises(BadFolder, match=r"step2\.md: <!-- awsview:shot step=2 --> has no"):
        read_text(text, tmp_path)


def test_nothing_is_written_through_a_link(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# theirs\n")
    lab = tmp_path / "lab"
    (lab / "ja").mkdir(parents=True)
    (lab / "ja" / "step2.md").symlink_to(outside)
    with pytest.raises(BadFolder, match="is a symbolic link"):
        inside(lab, lab / "ja" / "step2.md", "a step text")
    (lab / "de").symlink_to(tmp_path)
    with pytest.raises(BadFolder, match=r"lab/de: a step text is a symbolic link"):
        inside(lab, lab / "de" / "outside.md", "a step text")
    with pytest.raises(BadFolder, match="outside the lab folder"):
        inside(lab, lab / ".." / "outside.md", "a step text")
