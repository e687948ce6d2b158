from invoicer.textutil import slugify

assert slugify("Crème Brûlée & Co.") == "creme-brulee-co"
assert slugify("  --Invoice #42--  ") == "invoice-42"
assert slugify("Ünïcode Ltd", separator="_") == "unicode_ltd"
assert slugify("") == ""
