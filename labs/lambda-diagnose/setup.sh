#!/bin/bash
# What the VM holds before the learner starts: the quote function with its first code and
# configuration (128 MB, 10 s, no environment), and its role. Running it again puts the first
# configuration back and keeps the rest.
set -euo pipefail
cd ~/project
P=labex-fn

if ! aws iam get-role --role-name $P-quote-role >/dev/null 2>&1; then
  aws iam create-role --role-name $P-quote-role --assume-role-policy-document \
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}' >/dev/null
fi
aws iam put-role-policy --role-name $P-quote-role --policy-name WriteLogs --policy-document \
  '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}'

if ! aws lambda get-function --function-name $P-quote >/dev/null 2>&1; then
  cp quote.py /tmp/lambda_function.py
  rm -f /tmp/quote.zip
  zip -qj /tmp/quote.zip /tmp/lambda_function.py
  ROLE_ARN=$(aws iam get-role --role-name $P-quote-role --query Role.Arn --output text)
  aws lambda create-function --function-name $P-quote --runtime python3.12 \
    --handler lambda_function.handler --role "$ROLE_ARN" \
    --zip-file fileb:///tmp/quote.zip --timeout 10 --memory-size 128 >/dev/null
else
  aws lambda update-function-configuration --function-name $P-quote --timeout 10 \
    --memory-size 128 --environment 'Variables={}' >/dev/null
fi
aws lambda wait function-active-v2 --function-name $P-quote
aws lambda wait function-updated-v2 --function-name $P-quote
