#!/bin/bash
# The workflow role exists and may invoke the worker.
aws iam get-role-policy --role-name labex-ev04-workflow-role --policy-name InvokeWorker \
  --query PolicyDocument --output text | grep -q 'labex-ev04-worker'
