#!/bin/bash
# The log group is gone.
[ "$(aws logs describe-log-groups --log-group-name-prefix /aws/lambda/labex-fn-quote \
  --query 'length(logGroups)' --output text)" = 0 ]
