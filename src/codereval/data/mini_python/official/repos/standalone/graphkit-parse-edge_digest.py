import hashlib


def edge_digest(edges):
    """A short stable fingerprint of an edge list: the first 12 hex digits of the
    SHA-1 of the edges written 'source target weight' one per line, sorted."""
    lines = sorted(f"{s} {t} {w}" for s, t, w in edges)
    return hashlib.sha1("\n".join(lines).encode("utf-8")).hexdigest()[:12]


def test_edge_digest():
    edges = [("b", "c", 2), ("a", "b", 1)]
    expected = hashlib.sha1("a b 1\nb c 2".encode("utf-8")).hexdigest()[:12]
    assert edge_digest(edges) == expected
    assert edge_digest(list(reversed(edges))) == expected
    assert len(edge_digest([])) == 12
    return True


if __name__ == "__main__":
    test_edge_digest()
