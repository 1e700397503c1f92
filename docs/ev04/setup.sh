#!/bin/bash
# What the VM holds before the learner starts: three tables, the reference item, the worker's
# role and the worker itself. Running it again keeps what is already there.
set -euo pipefail
cd ~/project
P=labex-ev04
ACCOUNT=$(aws sts get-caller-identity --query Account --output text)
REGION=${AWS_DEFAULT_REGION:-us-east-1}

for TABLE in orders attempts reference; do
  if ! aws dynamodb describe-table --table-name "$P-$TABLE" >/dev/null 2>&1; then
    aws dynamodb create-table --table-name "$P-$TABLE" \
      --attribute-definitions AttributeName=id,AttributeType=S \
      --key-schema AttributeName=id,KeyType=HASH --billing-mode PAY_PER_REQUEST >/dev/null
  fi
  aws dynamodb wait table-exists --table-name "$P-$TABLE"
done
if [ "$(aws dynamodb get-item --table-name $P-reference --key '{"id":{"S":"reference"}}' --query Item.id.S --output text)" != reference ]; then
  aws dynamodb put-item --table-name $P-reference \
    --item '{"id":{"S":"reference"},"note":{"S":"keep unchanged"}}'
fi

if ! aws iam get-role --role-name $P-worker-role >/dev/null 2>&1; then
  aws iam create-role --role-name $P-worker-role --assume-role-policy-document \
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}' >/dev/null
fi
cat > /tmp/worker-policy.json <<POLICY
{
  "Version": "2012-10-17",
  "Statement": [
    {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
     "Resource": ["arn:aws:dynamodb:$REGION:$ACCOUNT:table/$P-orders", "arn:aws:dynamodb:$REGION:$ACCOUNT:table/$P-attempts"]},
    {"Effect": "Allow", "Action": "logs:CreateLogGroup", "Resource": "arn:aws:logs:$REGION:$ACCOUNT:*"},
    {"Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
     "Resource": "arn:aws:logs:$REGION:$ACCOUNT:log-group:/aws/lambda/$P-worker:*"}
  ]
}
POLICY
aws iam put-role-policy --role-name $P-worker-role --policy-name OrdersAndAttempts \
  --policy-document file:///tmp/worker-policy.json

if ! aws lambda get-function --function-name $P-worker >/dev/null 2>&1; then
  zip -qj /tmp/worker.zip app.py
  ROLE_ARN=$(aws iam get-role --role-name $P-worker-role --query Role.Arn --output text)
  aws lambda create-function --function-name $P-worker --runtime python3.12 \
    --handler app.handler --role "$ROLE_ARN" --zip-file fileb:///tmp/worker.zip --timeout 10 \
    --environment "Variables={ORDERS_TABLE=$P-orders,ATTEMPTS_TABLE=$P-attempts}" >/dev/null
fi
aws lambda wait function-active-v2 --function-name $P-worker
