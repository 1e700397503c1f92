"""The one cleaning of untrusted text: terminal controls, bidi and format characters, length,
and the Markdown and XML escaping on top."""

from __future__ import annotations

import pytest

from awsview.model import untrusted


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"),
        ("\x1b]0;title\x1b\\after", "after"),
        ("\x1b]unterminated text", "unterminated text"),
        ("a\x00b\x07c\x08d\x7fe\x85f\x9cg", "abcdefg"),
        ("a\x9bgb", "ab"),  # 8-bit CSI takes its final byte with it
        ("\x9b31mX", "X"),
        ("tab\tstays", "tab\tstays"),
        ("line\nbreak\rgone", "linebreakgone"),
        ("\x1bMreverse index", "reverse index"),
        ("\x1b(Bcharset", "charset"),
        ("[/bold] and [link=http://x] stay", "[/bold] and [link=http://x] stay"),
        ("ünïcode ✓ 日本語", "ünïcode ✓ 日本語"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
    ],
)
def test_clean(raw, clean):
    assert untrusted.clean(raw) == clean


def test_clean_can_keep_newlines():
    assert untrusted.clean("a\nb\r\nc\x1b[1m", keep_newlines=True) == "a\nb\r\nc"


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("\u202eexe.jpg", "exe.jpg"),  # right-to-left override
        ("a\u202ab\u202bc\u202cd\u202de", "abcde"),  # embeddings and their pop
        ("a\u2066b\u2067c\u2068d\u2069e", "abcde"),  # isolates
        ("a\u200eb\u200fc\u061cd", "abcd"),  # marks
        ("a\u200bb\u2060c\ufeffd\u00ade", "abcde"),  # zero width, word joiner, BOM, soft hyphen
        ("tag\U000e0041\U000e0042s", "tags"),  # tag characters hide ASCII
        ("\U0001f469\u200d\U0001f467 a\u200cb", "\U0001f469\u200d\U0001f467 a\u200cb"),  # joiners
        ("\u009d0;title\u009cafter", "after"),  # 8-bit OSC
        ("\x1b]52;c;Y2xpcA==\x07x", "x"),  # clipboard write
    ],
)
def test_clean_drops_what_disguises_text(raw, clean):
    assert untrusted.clean(raw) == clean


def test_clean_bounds_length():
    assert untrusted.clean("x" * 10, limit=4) == "xxx…"
    assert untrusted.clean("xxxx", limit=4) == "xxxx"


def test_line_separators_become_line_breaks_or_spaces():
    assert untrusted.clean("a\u2028b", keep_newlines=True) == "a\nb"
    assert untrusted.line("a\n\n b\u2029c\x1b[2J", limit=10) == "a b c"


def test_markdown_shows_as_written():
    text = "<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://e/i.png) *a* `c` a|b"
    out = untrusted.markdown(text)
    assert "<" not in out and ">" not in out
    assert out == (
        "&lt;script&gt;alert(1)&lt;/script&gt; \\[x\\](javascript:alert(1)) "
        "!\\[i\\](http://e/i.png) \\*a\\* \\`c\\` a\\|b"
    )
    assert untrusted.markdown("a & b\\") == "a &amp; b\\\\"


def test_markdown_target_cannot_end_the_link():
    assert untrusted.markdown_target("a b) [x](y.svg") == "a%20b%29%20%5Bx%5D%28y.svg"


def test_every_format_character_but_the_joiners_is_dropped():
    import unicodedata

    everything = "".join(chr(n) for n in range(0x110000) if not 0xD800 <= n <= 0xDFFF)
    dropped = set(everything) - set(untrusted.clean(everything))
    for ch in everything:
        if unicodedata.category(ch) == "Cf":
            assert (ch in dropped) == (ch not in "\u200c\u200d"), f"U+{ord(ch):04X}"
    # Nothing else but controls (and code points a later Unicode makes format characters).
    assert {unicodedata.category(ch) for ch in dropped} == {"Cc", "Cf", "Cn"}
