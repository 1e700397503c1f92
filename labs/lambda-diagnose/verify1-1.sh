#!/bin/bash
# Timeout 3 s, 256 MB, and the two variables set.
[ "$(aws lambda get-function-configuration --function-name labex-fn-quote \
  --query '[Timeout, MemorySize, Environment.Variables.CURRENCY, Environment.Variables.TAX_RATE]' --output text)" \
  = "$(printf '3\t256\tEUR\t20%%')" ]
