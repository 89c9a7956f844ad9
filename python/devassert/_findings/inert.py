"""Text quoted from an input, made inert before it is printed: the Python
side of the CLI's `render/inert.rs`, from the same table (`rules.py`'s
`UNSAFE_RANGES` and `LINE_MAX`, generated from it). Data files, tokenizer
tokens and config values may hold an ESC that would drive the terminal, a
BEL, or a U+202E that reorders what the reader sees."""

from .rules import LINE_MAX, UNSAFE_RANGES


def is_unsafe(c):
    o = ord(c)
    return not 0x20 <= o < 0x7F and any(lo <= o <= hi for lo, hi in UNSAFE_RANGES)


def _escape(c):
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if ord(c) < 0x80:
        return f"\\x{ord(c):02x}"
    return f"\\u{{{ord(c):x}}}"


def line(s, limit=LINE_MAX):
    """`s` with unsafe characters escaped, at most `limit` bytes of UTF-8 (a
    cut text ends with how many bytes were left), as the CLI prints it."""
    s = str(s)
    if s.isascii() and s.isprintable() and len(s) <= limit:
        return s
    out = []
    used = 0
    data = s.encode("utf-8", "surrogatepass")
    at = 0
    for c in s:
        piece = _escape(c) if is_unsafe(c) else c
        size = len(piece.encode("utf-8", "surrogatepass"))
        if used + size > limit:
            out.append(f"… [{len(data) - at} more bytes]")
            return "".join(out)
        out.append(piece)
        used += size
        at += len(c.encode("utf-8", "surrogatepass"))
    return "".join(out)
