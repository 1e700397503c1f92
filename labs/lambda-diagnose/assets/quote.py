"""The quote function: prices a quote's lines, then adds tax.

Each line's price comes from a slow lookup (10 ms a line), so a large quote takes a while.
CURRENCY and TAX_RATE come from the function's environment; TAX_RATE is a fraction ("0.2").
"""

import json
import os
import time

LOOKUP_S = 0.01


def handler(event, context):
    lines = int(event.get("lines", 1))
    time.sleep(lines * LOOKUP_S)  # the price lookup of every line
    subtotal = lines * int(event["amount_cents"])
    rate = float(os.environ["TAX_RATE"])
    total = round(subtotal * (1 + rate))
    quote = {"id": event["id"], "currency": os.environ["CURRENCY"], "total_cents": total}
    print(f"QUOTE {quote['id']} total {total} {quote['currency']}")
    return quote
