#!/bin/bash
# The queue exists and one enabled mapping delivers it to the worker.
QUEUE_ARN=$(aws sqs get-queue-attributes \
  --queue-url "$(aws sqs get-queue-url --queue-name labex-q05-jobs --query QueueUrl --output text)" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text) || exit 1
[ "$(aws lambda list-event-source-mappings --function-name labex-q05-worker \
  --event-source-arn "$QUEUE_ARN" --query 'EventSourceMappings[].State' --output text)" = Enabled ]
