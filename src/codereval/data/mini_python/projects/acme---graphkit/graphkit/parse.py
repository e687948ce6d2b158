"""Reading edge lists: one 'source target [weight]' per line, '#' starts a comment."""
import hashlib


def parse_edge_line(line):
    """Parse 'a b' or 'a b 2.5' into (source, target, weight); weight defaults to 1
    and is an int when it is written as one, else a float. Blank lines and comments
    give None."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    parts = text.split()
    if len(parts) not in (2, 3):
        raise ValueError(f"expected 'source target [weight]', got {line!r}")
    weight = 1
    if len(parts) == 3:
        raw = parts[2]
        weight = int(raw) if raw.lstrip("-").isdigit() else float(raw)
    return parts[0], parts[1], weight


def read_edges(text):
    """All edges of an edge-list text, in order, skipping blanks and comments."""
    edges = []
    for line in text.splitlines():
        edge = parse_edge_line(line)
        if edge is not None:
            edges.append(edge)
    return edges


def edge_digest(edges):
    """A short stable fingerprint of an edge list: the first 12 hex digits of the
    SHA-1 of the edges written 'source target weight' one per line, sorted."""
    lines = sorted(f"{s} {t} {w}" for s, t, w in edges)
    return hashlib.sha1("\n".join(lines).encode("utf-8")).hexdigest()[:12]
