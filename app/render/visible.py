"""Text as it enters a drawing: what a snippet wrote, with every character a reader cannot see
and XML cannot hold written out as an escape.

A snippet names its tensors and prints what it likes, and that text reaches SVGs (a node's
label, a frame's caption quoting a print or an error) and a standalone HTML file. XML 1.0
forbids most C0 controls, lone surrogates and U+FFFE/U+FFFF: one ESC in a caption, from an ANSI
colour, and no parser read the frame, so every image export of that trace failed. So each
character below is written as Python writes it in a string literal (`\\x1b`, `\\x00`,
`\\ud800`), as the snippet most likely wrote it, in letters every font has (Unicode's Control
Pictures, `␛`, are missing from Helvetica and Arial: boxes on a slide):

- C0 controls but tab and newline (XML forbids them; a carriage return it allows, but reads as
  a newline, and a terminal's overprinting means nothing in a drawing);
- DEL and the C1 controls: XML 1.0 allows them, but they draw nothing, as the C0 controls, and
  `\\x9b` starts a terminal escape as `\\x1b[` does;
- lone surrogates (UTF-8 cannot hold them; validation escapes them the same way, but a trace
  stored before it may have one);
- U+FEFF, a byte-order mark: allowed, but invisible, and a label with one looks like another
  without it;
- U+FFFE and U+FFFF (XML forbids them).

Other invisible characters (joiners, direction marks) stay: emoji and scripts need them.
"""

from __future__ import annotations

import re

_UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]")


def visible(text: str) -> str:
    """`text` with each character above written as its Python escape."""
    return _UNSEEN.sub(_escaped, text)


def _escaped(match: re.Match) -> str:
    return match[0].encode("unicode_escape").decode("ascii")
