"""Untrusted text made safe to show: the one cleaning every output path uses.

Every string from AWS, a recording, a lab folder, a class roster or a request goes through
`clean` before a terminal, a file or a browser sees it. A terminal obeys escape sequences in
what it prints (a title set by OSC 0, a link by OSC 8, the clipboard written by OSC 52, the
screen cleared by CSI), in their 7-bit (ESC …) and 8-bit (0x9b, 0x9d …) forms; bidi overrides
and isolates reorder what is shown, so a name can read as another; other format characters
are invisible and hide text inside a name. `markdown` adds the escaping of what is written
into a Markdown page on top (the SVGs are Rich's, which escapes their text). Rich markup
(`[bold]`) is not this module's business: renderers pass text as Text objects, never as
markup, so it shows as written.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# ESC sequences first (CSI, OSC, DCS/SOS/PM/APC strings, two-byte escapes), in 7- and 8-bit form,
# then every remaining C0 control except tab, DEL and C1. An unterminated OSC/DCS loses only its
# introducer, not the rest of the line.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROLS_KEEP_NEWLINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
_SEPARATORS = re.compile(r"[\u2028\u2029]")  # line and paragraph separators: a line break


# Every format character (Unicode category Cf: bidi controls, zero widths, tag characters, …)
# but the joiners U+200C and U+200D, which emoji sequences and several scripts need and which
# reorder nothing. Written out, so that a big value costs one regular expression rather than a
# category lookup per character; tests/model/test_untrusted.py checks it against unicodedata.
_FORMAT = re.compile(
    r"[\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b"
    r"\u200e-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    r"\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)

# What makes a link or an image (brackets), emphasis, code or a table cell inside a line of
# Markdown; `<`, `>` and `&` (raw HTML, autolinks, entities) are written as entities instead.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def clean(text: object, *, keep_newlines: bool = False, limit: int | None = None) -> str:
    """``text`` with no terminal control sequence or character, no bidi override or isolate and
    no other invisible format character; lone surrogates become U+FFFD. Tabs stay; newlines stay
    only with ``keep_newlines`` (U+2028/U+2029 become one), else they are dropped. With
    ``limit``, at most that many characters, the last one an ellipsis when cut."""
    text = text if isinstance(text, str) else str(text)
    if not text.isprintable() or "\x1b" in text:
        text = _ESCAPES.sub("", text)
        if keep_newlines:
            text = _SEPARATORS.sub("\n", text)
        text = (_CONTROLS_KEEP_NEWLINES if keep_newlines else _CONTROLS).sub("", text)
        text = _SURROGATES.sub("\ufffd", text)
        if not text.isascii():
            text = _FORMAT.sub("", text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def line(text: object, limit: int | None = None) -> str:
    """``text`` cleaned as one line: every run of whitespace (newlines too) one space."""
    one = " ".join(clean(text, keep_newlines=True).split())
    if limit is not None and len(one) > limit:
        one = one[: max(limit - 1, 0)] + "…"
    return one


def markdown(text: object, limit: int | None = None) -> str:
    """``text`` as one line of Markdown that shows as written, for inside a line (not its
    start): cleaned, HTML escaped (no raw tag), the punctuation of links, images, emphasis,
    code and table cells escaped."""
    escaped = _MARKDOWN.sub(r"\\\1", line(text, limit))
    return "".join(_HTML.get(ch, ch) for ch in escaped)


def markdown_target(name: str) -> str:
    """A file name as a Markdown link destination: percent-encoded, so it cannot end the link."""
    return quote(line(name), safe="")
