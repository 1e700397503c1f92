#!/bin/bash
# The state machine exists.
aws stepfunctions list-state-machines --query "stateMachines[].name" --output text \
  | grep -qw labex-ev04-orders
