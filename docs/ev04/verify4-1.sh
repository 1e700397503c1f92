#!/bin/bash
# No state machine is left and the order is gone.
[ -z "$(aws stepfunctions list-state-machines --query "stateMachines[?name=='labex-ev04-orders'].name" --output text)" ] \
  && [ "$(aws dynamodb scan --table-name labex-ev04-orders --select COUNT --query Count --output text)" = 0 ]
