#!/bin/bash
# The tax rate is a fraction, the timeout 6 s, and both quotes succeeded.
[ "$(aws lambda get-function-configuration --function-name labex-fn-quote \
  --query '[Timeout, Environment.Variables.TAX_RATE]' --output text)" = "$(printf '6\t0.2')" ] \
  && awsview verify 4 --lab "${AWSVIEW_LAB:-lambda-diagnose}"
