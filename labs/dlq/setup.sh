#!/bin/bash
# What the VM holds before the learner starts: the worker's role and the worker function with
# its first code. Running it again keeps what is already there.
set -euo pipefail
cd ~/project
P=labex-dlq

if ! aws iam get-role --role-name $P-worker-role >/dev/null 2>&1; then
  aws iam create-role --role-name $P-worker-role --assume-role-policy-document \
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}' >/dev/null
fi
aws iam put-role-policy --role-name $P-worker-role --policy-name ReadJobs --policy-document \
  '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:GetQueueAttributes"],"Resource":"arn:aws:sqs:*:*:labex-dlq-*"},{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}'

cp worker.py /tmp/lambda_function.py
rm -f /tmp/dlq-worker.zip
zip -qj /tmp/dlq-worker.zip /tmp/lambda_function.py
if aws lambda get-function --function-name $P-worker >/dev/null 2>&1; then
  # A fresh VM has the first worker, whatever a previous run deployed.
  aws lambda update-function-code --function-name $P-worker \
    --zip-file fileb:///tmp/dlq-worker.zip >/dev/null
  aws lambda wait function-updated-v2 --function-name $P-worker
else
  ROLE_ARN=$(aws iam get-role --role-name $P-worker-role --query Role.Arn --output text)
  aws lambda create-function --function-name $P-worker --runtime python3.12 \
    --handler lambda_function.handler --role "$ROLE_ARN" \
    --zip-file fileb:///tmp/dlq-worker.zip --timeout 3 >/dev/null
fi
aws lambda wait function-active-v2 --function-name $P-worker
