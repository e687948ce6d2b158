"""Text helpers used for invoice numbers and customer keys."""
import re
import unicodedata


def normalize_whitespace(text):
    """Collapse every run of whitespace in text into one space and strip both ends."""
    return " ".join(text.split())


def slugify(text, separator="-"):
    """Turn text into a lowercase ASCII slug: accents removed, other characters
    replaced by the separator, no separator at either end."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", separator, ascii_text.lower())
    return slug.strip(separator)


def initials(name):
    """The upper-case initials of a name: 'ada lovelace' -> 'AL'."""
    return "".join(part[0].upper() for part in name.split() if part)
