from invoicer.textutil import normalize_whitespace

assert normalize_whitespace("  ACME   Corp\t Ltd\n") == "ACME Corp Ltd"
assert normalize_whitespace("one") == "one"
assert normalize_whitespace(" \n\t ") == ""
assert normalize_whitespace("a\u00a0 b") == "a b"
